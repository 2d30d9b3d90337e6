"""spec.create, spec.update and spec.delete: specs of a source inside the vault, on the write path.

Each checks the source as the write would leave it and refuses an error the write introduces (a
reference to no spec, a parent of the wrong rank, a cycle, a bad value), never one the source
already had. A delete may leave references to the removed id dangling: its preview lists them,
and the caller repairs them with spec.update afterwards. A source outside the vault is read-only
to vaultd (:func:`vaultd.specs.registered.writable`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import specs as methods
from protocol.methods.specs import EdgeKind, SpecStatus, SpecType
from vaultd.errors import InvalidParams, NotFound, ValidationFailed
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.ops.create import refuse_existing, screen_new_path
from vaultd.ops.delete import trash_path
from vaultd.specs import checks, graph, registered
from vaultd.specs.documents import SpecDoc, SpecSet
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    from protocol.methods.specs import SpecCreateParams, SpecDeleteParams, SpecUpdateParams
    from vaultd.ops._context import OpContext

ORDER = ("id", "type", "title", "status", "parent", "superseded-by", "depends-on", "references", "implements", "covers", "tags", "paths")
SKELETON = {
    SpecType.GOAL: ("Scope", "Decisions", "Success and evidence"),
    SpecType.ARCHITECTURE: ("Boundaries", "Decisions"),
    SpecType.MODULE: ("Responsibility", "Interfaces", "Decisions"),
    SpecType.SUBMODULE: ("Responsibility", "Interfaces", "Decisions"),
}
SETTABLE = ("title", "type", "status", "parent", "superseded-by", "verified-against")
LISTS = ("depends-on", "references", "implements", "covers", "tags", "paths")
OPTIONAL = ("status", "parent", "superseded-by", "verified-against", *LISTS)
_CONTROL = {chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))} | {"\u2028", "\u2029"}


def _vault_path(rel_root: str, path: str) -> str:
    return f"{rel_root}/{path}" if rel_root else path


def _refuse_introduced(before: SpecSet, after: SpecSet, rel_root: str, allowed: str | None = None) -> None:
    """Refuse the write when the source as it would be has an error it has not now.

    Raises:
        ValidationFailed: VALIDATION (V01), the write introduces an error into the source's specs.
    """
    new = [
        f
        for f in checks.introduced(checks.findings(before), checks.findings(after))
        if not (allowed is not None and f.code is methods.SpecCode.DANGLING and f.target == allowed)
    ]
    if new:
        issues = [Issue(code=IssueCode.V01, message=f"{f.code.value}: {f.message}", path=_vault_path(rel_root, f.path)) for f in new]
        raise ValidationFailed(f"refused: {issues[0].message} ({issues[0].path})", issues=issues)


def _replaced(specs: SpecSet, path: str, doc: SpecDoc | None) -> SpecSet:
    docs = [d for d in specs.docs if d.path != path] + ([doc] if doc is not None else [])
    return SpecSet(
        source=specs.source, root=specs.root, docs=sorted(docs, key=lambda d: d.path), skipped=specs.skipped, unreadable=specs.unreadable
    )


def _as_doc(specs: SpecSet, path: str, text: str) -> SpecDoc:
    parsed = frontmatter.parse(text)
    return SpecDoc(specs.source, path, text, "", parsed.data or {}, parsed.body_offset)


def _check_title(title: str) -> None:
    """Refuse a title that would not stay one line of YAML and one H1.

    Raises:
        InvalidParams: INVALID_PARAMS, the title spans lines or holds a control character.
    """
    if not title.strip() or any(c in _CONTROL for c in title):
        raise InvalidParams("a spec's title is one line without control characters")


@operation(methods.SPEC_CREATE, detail=no_detail)
def plan_spec_create(ctx: OpContext, params: SpecCreateParams) -> Plan:
    """A new spec file: its frontmatter in the fixed order, the H1 and the empty sections of its type.

    Raises:
        NotFound: NOT_FOUND, the vault has no such source.
        InvalidParams: INVALID_PARAMS, no single source inside the vault, or a bad title.
        PolicyRefused: POLICY, the source is outside the vault, or the path is out of the caller's sight.
        ValidationFailed: VALIDATION, the path is taken or refused (V08, V04), the id is taken (V08),
            or the new spec introduces an error (V01).
    """
    _check_title(params.title)
    source, rel_root = registered.writable(ctx.entry, params.source)
    specs = registered.read(ctx.entry, source, ctx.channel)
    path = screen_new_path(ctx, _vault_path(rel_root, params.path.strip("/")))
    refuse_existing(ctx, path, "spec", "use spec.update to change it")
    if (other := specs.by_id().get(params.id)) is not None:
        where = _vault_path(rel_root, other.path)
        raise ValidationFailed(
            f"refused: spec id {params.id!r} is already {where}'s",
            issues=[Issue(code=IssueCode.V08, message="the spec id is taken", path=where)],
        )
    fields: dict[str, Any] = {"id": params.id, "type": params.type.value, "title": params.title, "status": params.status.value}
    if params.parent is not None:
        fields["parent"] = params.parent
    for key, value in (
        ("depends-on", params.depends_on),
        ("references", params.references),
        ("implements", params.implements),
        ("covers", params.covers),
        ("tags", params.tags),
        ("paths", params.paths),
    ):
        if value:
            fields[key] = list(value)
    body = f"# {params.title}\n" + "".join(f"\n## {name}\n" for name in SKELETON[params.type])
    text = emit(body, fields)
    rel = path[len(rel_root) + 1 :] if rel_root else path
    _refuse_introduced(specs, _replaced(specs, rel, _as_doc(specs, rel, text)), rel_root)
    return Plan(
        op=methods.SPEC_CREATE.name, changes=[Change(path=path, before=None, after=text.encode("utf-8"))], summary=f"created spec {path}"
    )


def _located(ctx: OpContext, source: str | None, spec_id: str) -> tuple[SpecSet, SpecDoc, str]:
    """The writable source, the spec with ``spec_id`` in it, and the source's vault folder.

    Raises:
        NotFound: NOT_FOUND, no such source or spec.
        InvalidParams: INVALID_PARAMS, no single source inside the vault.
        PolicyRefused: POLICY, the source is outside the vault.
    """
    target, rel_root = registered.writable(ctx.entry, source)
    specs = registered.read(ctx.entry, target, ctx.channel)
    doc = specs.by_id().get(spec_id)
    if doc is None:
        raise NotFound(f"spec source {target.id!r} has no spec {spec_id!r}")
    return specs, doc, rel_root


def _updates(doc: SpecDoc, params: SpecUpdateParams) -> tuple[dict[str, Any], list[str]]:
    """The keys to set and unset for ``params``, checked.

    Raises:
        InvalidParams: INVALID_PARAMS, an unknown, immutable or contradictory field, or a bad value.
    """
    for key in params.set:
        if key not in SETTABLE:
            raise InvalidParams(f"set takes {', '.join(SETTABLE)}; not {key!r}")
    for key in params.unset:
        if key not in OPTIONAL:
            raise InvalidParams(f"unset takes the optional fields {', '.join(OPTIONAL)}; not {key!r}")
    for key in (*params.add, *params.remove):
        if key not in LISTS:
            raise InvalidParams(f"add and remove take {', '.join(LISTS)}; not {key!r}")
    both = set(params.unset) & (set(params.set) | set(params.add) | set(params.remove))
    if both:
        raise InvalidParams(f"{sorted(both)[0]} is both unset and edited")
    for key, values in params.add.items():
        if set(values) & set(params.remove.get(key, [])):
            raise InvalidParams(f"a value of {key} is both added and removed")
    if "title" in params.set:
        _check_title(params.set["title"])
    if "type" in params.set and params.set["type"] not in {t.value for t in SpecType}:
        raise InvalidParams(f"type must be one of {', '.join(t.value for t in SpecType)}")
    if "status" in params.set and params.set["status"] not in {s.value for s in SpecStatus}:
        raise InvalidParams("status must be draft, active or deprecated")
    changes: dict[str, Any] = dict(params.set)
    for key in sorted(set(params.add) | set(params.remove)):
        current = doc.meta.get(key)
        values = [v for v in current if isinstance(v, str)] if isinstance(current, list) else []
        values = [v for v in values if v not in params.remove.get(key, [])]
        values += [v for v in params.add.get(key, []) if v not in values]
        changes[key] = values
    return changes, list(params.unset)


@operation(methods.SPEC_UPDATE, detail=no_detail)
def plan_spec_update(ctx: OpContext, params: SpecUpdateParams) -> Plan:
    """Set, unset, add to and remove from a spec's frontmatter; the body and every other key keep their bytes.

    Raises:
        NotFound: NOT_FOUND, no such source or spec.
        InvalidParams: INVALID_PARAMS, a field that cannot be changed so.
        PolicyRefused: POLICY, the source is outside the vault.
        Conflict: CONFLICT, the spec changed since the caller read it.
        ValidationFailed: VALIDATION (V01), the change introduces an error.
    """
    specs, doc, rel_root = _located(ctx, params.source, params.id)
    path = _vault_path(rel_root, doc.path)
    raw, text = ctx.read_target(path)
    changes, unset = _updates(doc, params)
    after = emit(text, changes, unset)
    _refuse_introduced(specs, _replaced(specs, doc.path, _as_doc(specs, doc.path, after)), rel_root)
    return Plan(
        op=methods.SPEC_UPDATE.name,
        changes=[Change(path=path, before=raw, after=after.encode("utf-8"))],
        summary=f"updated spec {path}",
        log_type="RETHINK",
    )


@operation(methods.SPEC_DELETE, detail=no_detail)
def plan_spec_delete(ctx: OpContext, params: SpecDeleteParams) -> Plan:
    """Move a spec to the trash; references to it from other specs are left for the caller to
    repair, each listed in the preview, and no other new error is allowed.

    Raises:
        NotFound: NOT_FOUND, no such source or spec.
        InvalidParams: INVALID_PARAMS, no single source inside the vault.
        PolicyRefused: POLICY, the source is outside the vault.
        Conflict: CONFLICT, the trash is full for the path.
        ValidationFailed: VALIDATION (V01), the delete introduces another error.
    """
    specs, doc, rel_root = _located(ctx, params.source, params.id)
    path = _vault_path(rel_root, doc.path)
    raw, _ = ctx.read_target(path)
    _refuse_introduced(specs, _replaced(specs, doc.path, None), rel_root, allowed=params.id)
    edges = graph.edges(specs)
    warnings = [
        Issue(
            code=IssueCode.V03,
            severity=Severity.WARNING,
            message=f"{e.source}'s {e.kind.value} will name no spec" + (" (a child)" if e.kind is EdgeKind.PARENT else ""),
            path=_vault_path(rel_root, specs.by_id()[e.source].path),
        )
        for e in edges
        if e.target == params.id and e.source != params.id
    ]
    trash = trash_path(ctx, path)
    return Plan(
        op=methods.SPEC_DELETE.name,
        changes=[Change(path=trash, before=None, after=raw, mode=ctx.mode(path)), Change(path=path, before=raw, after=None)],
        summary=f"deleted spec {path}",
        warnings=warnings,
        log_type="RETHINK",
    )
