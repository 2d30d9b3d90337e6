"""note.create: a new note at a path the vault does not have yet (by any case or normalization).

The path is screened before anything can echo it, its existing folders are spelled as on disk,
and a name that exists under another letter case or Unicode form is "already exists" on every
filesystem: on a case-insensitive disk it is the same file, and on a case-sensitive one a twin
would split the note in two for Obsidian, sync tools and every other machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from protocol.methods.vaults import SchemaProfile
from vaultd.errors import InvalidParams, PolicyRefused, ValidationFailed
from vaultd.obsidian.moment import MomentError, format_date
from vaultd.ops._name_clash import guard_name
from vaultd.ops._runner import no_detail
from vaultd.ops._validate import refuse_unsafe_path
from vaultd.ops.catalog import operation
from vaultd.ops.template_insert import find_template, note_context, rendered_template, template_failure
from vaultd.policy import check_new_path, disk_spelling, disk_twin, path_screen_issues
from vaultd.policy.names import name_issue
from vaultd.policy.schema import topic_names
from vaultd.sources import references
from vaultd.tidy import sections
from vaultd.txn.plan import Change, Plan
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.note import stem_of
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from protocol.methods.writes import CreateParams
    from vaultd.ops._context import OpContext


def note_path(raw: str) -> str:
    """``raw`` with '.md' added when missing; never otherwise tidied, so a write lands at the path
    asked for or is refused (a file name may begin or end in whitespace, and stripping a trailing
    ``'\t'`` from ``'made/\t'`` would create ``made.md``).

    Raises:
        InvalidParams: INVALID_PARAMS, the path is empty.
    """
    path = raw.strip("/")
    if not path:
        raise InvalidParams("the path is empty")
    return path if path.lower().endswith(".md") else path + ".md"


def new_note_path(ctx: OpContext, raw: str) -> str:
    """The path a write will create for ``raw``: screened, then spelled as the disk spells its folders.

    Refuses (before anything names the path) a secret or denied PII in it, and a path private to
    the caller, whether or not a note is there: an agent cannot learn a private name by probing.
    """
    return screen_new_path(ctx, note_path(raw))


def screen_new_path(ctx: OpContext, path: str) -> str:
    """A new file's vault-relative path as it will be written, or a refusal: unsafe, a name the
    vault's names policy refuses, a clash with the disk's spelling, or out of the caller's sight.

    Raises:
        ValidationFailed: VALIDATION, the path is unsafe, its name is refused, or it clashes with
            the disk's spelling.
        PolicyRefused: POLICY, the caller may not write there.
    """
    refuse_unsafe_path(path_screen_issues(path, ctx.entry.pii, ctx.entry.kind))
    # The path rules before anything looks the name up on disk: a component over the filesystem's
    # bound (or a '..', a reserved folder) is refused as such, never asked of the disk.
    if issues := check_new_path(path, note=is_note_path(path)):
        raise ValidationFailed(f"refused: {issues[0].message}", issues=issues)
    if (issue := name_issue(path)) is not None:  # before the log line or anything else judges the name
        raise ValidationFailed(f"refused: {issue.message}", issues=[issue])
    path, issues = disk_spelling(ctx.root, path)
    if issues:
        raise ValidationFailed(f"refused: {issues[0].message}", issues=issues)
    if (issue := ctx.visibility.write_issue(path)) is not None:
        raise PolicyRefused(issue.message, issues=[issue])
    return path


def existing_twin(ctx: OpContext, path: str) -> str | None:
    """The file already at ``path``, or at a spelling of it that differs only by case or form."""
    if path in ctx.index.notes or ctx.read(path) is not None:
        return path
    return disk_twin(ctx.root, path) or next(iter(ctx.index.resolver.same_key(path)), None)


def refuse_existing(ctx: OpContext, path: str, what: str, instead: str) -> None:
    """Refuse (V08) a new file whose name is taken, on disk or in the index, exactly or but for
    letter case or Unicode form; ``instead`` says what the caller may do.

    Raises:
        ValidationFailed: VALIDATION (V08), the name is taken.
    """
    if (twin := existing_twin(ctx, path)) is not None:
        also = "" if twin == path else f" as {twin} (the same name but for letter case or Unicode form)"
        raise ValidationFailed(
            f"{path} already exists{also}; {instead}",
            issues=[Issue(code=IssueCode.V08, message=f"the {what} already exists{also}", path=path)],
        )


def unique_path(ctx: OpContext, raw: str) -> str:
    """The path Obsidian's unique note creator gives a note named ``raw``: its prefix (the moment
    format of ``zk-prefixer.json``, now) before the name, in its folder when ``raw`` has none.

    Raises:
        ValidationFailed: VALIDATION (O02), the prefix format cannot be rendered.
    """
    unique = ctx.settings.unique
    try:
        prefix = format_date(ctx.now, unique.format).strip()
    except MomentError as exc:
        raise template_failure(".obsidian/zk-prefixer.json", exc) from exc
    folder, _, name = raw.strip("/").rpartition("/")
    name = name.removesuffix(".md")
    named = f"{prefix} {name}".strip() if name else prefix
    if not named:
        raise template_failure(".obsidian/zk-prefixer.json", MomentError(f"the format {unique.format!r} gives an empty name"))
    folder = folder or unique.folder
    return f"{folder}/{named}" if folder else named


def typed_body(title: str, body: str | None, topics: list[str]) -> str:
    """A typed note's body: the skeleton (H1, ``## Relevant Notes``, ``## Topics``) when none is
    given, and a given body with the ``## Topics`` list its topics call for when it has none, so
    the list and the frontmatter start in step (V14)."""
    items = [f"- [[{name}]]" for name in topics]
    if body is None:
        lines = [f"# {title}", "", f"## {sections.RELEVANT}", "", f"## {sections.TOPICS}"]
        return "\n".join([*lines, *([""] + items if items else [])]) + "\n"
    if items and sections.find(body, sections.TOPICS) is None:
        body, _ = sections.add_to_section(body, sections.TOPICS, items)
    return body


@operation(writes.CREATE, detail=no_detail)
def plan_create(ctx: OpContext, params: CreateParams) -> Plan:
    """Plan a new note: a skeleton, the body given, or a template rendered for it.

    Raises:
        InvalidParams: INVALID_PARAMS, both a body and a template are given.
        NotFound: NOT_FOUND, the template is not there.
        ValidationFailed: VALIDATION, the path is taken or refused; (O02) the template or the unique
            prefix cannot be rendered.
    """
    if params.body is not None and params.template is not None:
        raise InvalidParams("give a body or a template, not both")
    raw_path = unique_path(ctx, params.path) if params.unique else params.path
    path = new_note_path(ctx, raw_path)
    refuse_existing(ctx, path, "note", "use note.patch or note.append to change it")
    warnings = guard_name(ctx, path)
    title = params.title or stem_of(path)
    template = params.template or (ctx.settings.unique.template if params.unique else None) or None
    if template is not None:
        body, template_warnings = rendered_template(ctx, find_template(ctx, template), note_context(ctx, stem_of(path)))
        warnings = [*warnings, *template_warnings]
    else:
        body = params.body if params.body is not None else f"# {title}\n"
    fields = references.normalized(dict(params.frontmatter))
    if ctx.entry.schema is SchemaProfile.TYPED and template is None:
        body = typed_body(title, body if params.body is not None else None, topic_names(fields.get("topics")))
    if params.title is not None:
        fields.setdefault("title", params.title)
    fields.setdefault("created", ctx.today)
    if ctx.entry.stamp_keys:
        fields.setdefault(ctx.entry.stamp_keys[0], ctx.today)
    text = emit(body, fields)
    return Plan(
        op="note.create",
        changes=[Change(path=path, before=None, after=text.encode("utf-8"))],
        summary=f"created {path}",
        log_type="EXTRACT",
        warnings=warnings,
    )
