"""vaultctl spec: a vault's spec sources (add, remove, list), their specs read by id (get, graph,
grep, validate) and, for a source inside the vault, written (create, update, delete)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from protocol.errors import ExitStatus
from protocol.methods import specs
from protocol.methods.specs import (
    Direction,
    EdgeKind,
    SpecAddParams,
    SpecCreateParams,
    SpecDeleteParams,
    SpecGetParams,
    SpecGetResult,
    SpecGraphParams,
    SpecGraphResult,
    SpecGrepParams,
    SpecGrepResult,
    SpecListParams,
    SpecListResult,
    SpecRemoveParams,
    SpecSourceInfo,
    SpecStatus,
    SpecType,
    SpecUpdateParams,
    SpecValidateParams,
    SpecValidateResult,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command

SourceOpt = Annotated[str | None, typer.Option("--source", help=doc(SpecGetParams, "source"))]

spec_app = typer.Typer(help="Spec sources: specification files a vault reads by id beside its notes.", no_args_is_help=True)


def _json(raw: str | None, what: str, default: Any) -> Any:
    if raw is None:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        fail(f"{what} is not valid JSON", ExitStatus.USAGE)


def _source_text(r: SpecSourceInfo) -> str:
    where = "inside the vault" if r.inside else "outside the vault, read-only"
    lines = [f"{r.source.id}  {r.source.path}  ({where}, {r.specs} specs)"]
    lines += [f"  skipped {s}" for s in r.skipped]
    return "\n".join(lines)


@spec_app.command("add")
def spec_add(
    source_id: Annotated[str, typer.Argument(metavar="ID", help=doc(SpecAddParams, "id"))],
    path: Annotated[str, typer.Argument(metavar="PATH", help=doc(SpecAddParams, "path"))],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Register PATH (a folder or one Markdown file) as the vault's spec source ID."""
    with session() as c:
        result = call(specs.SPEC_ADD, SpecAddParams(vault=pick_vault(c, vault), id=source_id, path=path), client=c)
    emit(result, as_json, _source_text)


@spec_app.command("remove")
def spec_remove(
    source_id: Annotated[str, typer.Argument(metavar="ID", help=doc(SpecRemoveParams, "id"))],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Unregister the spec source ID; its files stay where they are."""
    with session() as c:
        result = call(specs.SPEC_REMOVE, SpecRemoveParams(vault=pick_vault(c, vault), id=source_id), client=c)
    emit(result, as_json, lambda r: f"removed spec source {r.source.id} ({r.source.path}); its files are untouched")


@spec_app.command("list")
def spec_list(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List the vault's spec sources and how many specs each holds."""
    with session() as c:
        result = call(specs.SPEC_LIST, SpecListParams(vault=pick_vault(c, vault)), client=c)

    def text(r: SpecListResult) -> str:
        if not r.sources:
            return "no spec sources; add one with 'vaultctl spec add ID PATH'"
        return render.table(
            ["id", "specs", "where", "path"],
            [(s.source.id, s.specs, "inside" if s.inside else "outside", s.source.path) for s in r.sources],
        )

    emit(result, as_json, text)


@spec_app.command("get")
def spec_get(
    spec_id: Annotated[str, typer.Argument(metavar="SPEC", help=doc(SpecGetParams, "id"))],
    source: SourceOpt = None,
    section: Annotated[str | None, typer.Option("--section", help=doc(SpecGetParams, "section"))] = None,
    body: Annotated[bool, typer.Option("--body", help=doc(SpecGetParams, "body"))] = False,
    offset: Annotated[int, typer.Option("--offset", help=doc(SpecGetParams, "offset"))] = 0,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help=doc(SpecGetParams, "max_bytes"))] = 16_384,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the spec SPEC: its metadata, references both ways, children and notes naming it; --body or --section for its text."""
    with session() as c:
        params = SpecGetParams(
            vault=pick_vault(c, vault), source=source, id=spec_id, section=section, body=body, offset=offset, max_bytes=max_bytes
        )
        result = call(specs.SPEC_GET, params, client=c)

    def text(r: SpecGetResult) -> str:
        lines = [f"{r.id}  {r.frontmatter.get('title', '')}", f"  source    {r.source}:{r.path}", f"  sha256    {r.sha256[:12]}"]
        for key in ("type", "status"):
            if key in r.frontmatter:
                lines.append(f"  {key:<9} {r.frontmatter[key]}")
        lines += [f"  -> {e.kind.value} {e.target}{'' if e.resolved else '  (no such spec)'}" for e in r.outgoing]
        lines += [f"  <- {e.kind.value} {e.source}" for e in r.backlinks]
        lines += [f"  note      {n}" for n in r.notes]
        if r.freshness is not None:
            f = r.freshness
            state = "stale" if f.stale else ("unknown: " + f.note if f.commits_since is None else "fresh")
            lines.append(f"  freshness {state} (verified against {f.verified_against[:12]})")
        if r.body is not None:
            lines += ["", r.body.rstrip()]
            if r.next_offset is not None:
                lines.append(f"[bytes {r.offset}..{r.next_offset} of {r.size}; next page: --offset {r.next_offset}]")
        return "\n".join(lines)

    emit(result, as_json, text)


@spec_app.command("graph")
def spec_graph(
    spec_id: Annotated[str, typer.Argument(metavar="SPEC", help=doc(SpecGraphParams, "id"))],
    source: SourceOpt = None,
    direction: Annotated[Direction, typer.Option("--direction", help=doc(SpecGraphParams, "direction"))] = Direction.SUBTREE,
    edge: Annotated[EdgeKind | None, typer.Option("--edge", help=doc(SpecGraphParams, "edge"))] = None,
    depth: Annotated[int, typer.Option("--depth", min=0, max=specs.MAX_SPEC_DEPTH, help=doc(SpecGraphParams, "depth"))] = 1,
    limit: Annotated[int, typer.Option("--limit", min=1, max=specs.MAX_SPEC_ROWS, help=doc(SpecGraphParams, "limit"))] = 100,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The specs around SPEC (its subtree, ancestors or neighbours) and the notes that name them."""
    with session() as c:
        params = SpecGraphParams(
            vault=pick_vault(c, vault), source=source, id=spec_id, direction=direction, edge=edge, depth=depth, limit=limit
        )
        result = call(specs.SPEC_GRAPH, params, client=c)

    def text(r: SpecGraphResult) -> str:
        lines = [f"{'  ' * n.depth}{n.id}  {n.title or ''}  ({n.type or '?'}, {n.path})" for n in r.nodes]
        lines += [f"note {ref.note} -> {ref.spec}" for ref in r.notes]
        if r.truncated:
            lines.append(f"[truncated at --limit {limit}]")
        return "\n".join(lines)

    emit(result, as_json, text)


@spec_app.command("grep")
def spec_grep(
    query: Annotated[str, typer.Argument(metavar="QUERY", help=doc(SpecGrepParams, "query"))] = "",
    literal: Annotated[bool, typer.Option("--literal", help="Match QUERY as an exact substring.")] = False,
    type_: Annotated[SpecType | None, typer.Option("--type", help=doc(SpecGrepParams, "type"))] = None,
    status: Annotated[SpecStatus | None, typer.Option("--status", help=doc(SpecGrepParams, "status"))] = None,
    tag: Annotated[str | None, typer.Option("--tag", help=doc(SpecGrepParams, "tag"))] = None,
    parent: Annotated[str | None, typer.Option("--parent", help="Only the children of this spec.")] = None,
    source: SourceOpt = None,
    offset: Annotated[int, typer.Option("--offset", min=0, max=specs.MAX_SPEC_OFFSET, help=doc(SpecGrepParams, "offset"))] = 0,
    limit: Annotated[int, typer.Option("--limit", min=1, max=specs.MAX_SPEC_ROWS, help=doc(SpecGrepParams, "limit"))] = 20,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find specs by words in their text (or --literal text) and by metadata."""
    with session() as c:
        params = SpecGrepParams(
            vault=pick_vault(c, vault),
            source=source,
            query=query,
            literal=literal,
            type=type_,
            status=status,
            tag=tag,
            parent=parent,
            offset=offset,
            limit=limit,
        )
        result = call(specs.SPEC_GREP, params, client=c)

    def text(r: SpecGrepResult) -> str:
        if not r.hits:
            return "no spec matches"
        out = render.table(["id", "source", "line", "excerpt"], [(h.id, h.source, h.line or "", h.excerpt) for h in r.hits])
        return out + (f"\n[{r.total} matches; next page: --offset {r.next_offset}]" if r.next_offset is not None else "")

    emit(result, as_json, text)


@spec_app.command("validate")
def spec_validate(
    source: SourceOpt = None,
    require_fresh: Annotated[bool, typer.Option("--require-fresh", help=doc(SpecValidateParams, "require_fresh"))] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=specs.MAX_SPEC_ROWS, help=doc(SpecValidateParams, "limit"))] = 100,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check the vault's specs: missing fields, bad values, references to no spec, ranks, cycles, staleness. Exit 1 on errors."""
    with session() as c:
        params = SpecValidateParams(vault=pick_vault(c, vault), source=source, require_fresh=require_fresh, limit=limit)
        result = call(specs.SPEC_VALIDATE, params, client=c)

    def text(r: SpecValidateResult) -> str:
        rows = [(f.severity.upper(), f.code.value, f"{f.source}:{f.path}", f.message) for f in r.findings]
        verdict = f"{'pass' if r.ok else 'fail'}: {r.specs} specs, {r.errors} errors, {r.warnings} warnings"
        return (render.table(["level", "check", "where", "finding"], rows) + "\n" if rows else "") + verdict

    emit(result, as_json, text)
    if not result.ok:
        raise typer.Exit(1)


@spec_app.command("create")
@write_command(specs.SPEC_CREATE)
def spec_create(
    path: Annotated[str, typer.Argument(metavar="PATH", help=doc(SpecCreateParams, "path"))],
    spec_id: Annotated[str, typer.Option("--id", help=doc(SpecCreateParams, "id"))],
    type_: Annotated[SpecType, typer.Option("--type", help=doc(SpecCreateParams, "type"))],
    title: Annotated[str, typer.Option("--title", help=doc(SpecCreateParams, "title"))],
    status: Annotated[SpecStatus, typer.Option("--status", help=doc(SpecCreateParams, "status"))] = SpecStatus.DRAFT,
    parent: Annotated[str | None, typer.Option("--parent", help="The parent spec's id.")] = None,
    depends_on: Annotated[str | None, typer.Option("--depends-on", metavar="JSON", help="A JSON array of spec ids.")] = None,
    references: Annotated[str | None, typer.Option("--references", metavar="JSON", help="A JSON array of spec ids.")] = None,
    implements: Annotated[str | None, typer.Option("--implements", metavar="JSON", help="A JSON array of spec ids.")] = None,
    covers: Annotated[str | None, typer.Option("--covers", metavar="JSON", help="A JSON array of what it covers.")] = None,
    tags: Annotated[str | None, typer.Option("--tags", metavar="JSON", help="A JSON array of tags.")] = None,
    paths: Annotated[str | None, typer.Option("--paths", metavar="JSON", help="A JSON array of the repository paths it covers.")] = None,
    source: SourceOpt = None,
    *,
    flags: WriteFlags[SpecCreateParams],
) -> None:
    """Create a spec at PATH in a source inside the vault: frontmatter, its title and the empty sections of its type."""
    flags.run(
        lambda steering: SpecCreateParams(
            source=source,
            path=path,
            id=spec_id,
            type=type_,
            title=title,
            status=status,
            parent=parent,
            depends_on=_json(depends_on, "--depends-on", []),
            references=_json(references, "--references", []),
            implements=_json(implements, "--implements", []),
            covers=_json(covers, "--covers", []),
            tags=_json(tags, "--tags", []),
            paths=_json(paths, "--paths", []),
            **steering,
        )
    )


@spec_app.command("update")
@write_command(specs.SPEC_UPDATE)
def spec_update(
    spec_id: Annotated[str, typer.Argument(metavar="SPEC", help=doc(SpecUpdateParams, "id"))],
    set_: Annotated[str | None, typer.Option("--set", metavar="JSON", help=doc(SpecUpdateParams, "set") + " A JSON object.")] = None,
    unset: Annotated[str | None, typer.Option("--unset", metavar="JSON", help=doc(SpecUpdateParams, "unset") + " A JSON array.")] = None,
    add: Annotated[str | None, typer.Option("--add", metavar="JSON", help=doc(SpecUpdateParams, "add") + " A JSON object.")] = None,
    remove: Annotated[
        str | None, typer.Option("--remove", metavar="JSON", help=doc(SpecUpdateParams, "remove") + " A JSON object.")
    ] = None,
    source: SourceOpt = None,
    *,
    flags: WriteFlags[SpecUpdateParams],
) -> None:
    """Change SPEC's frontmatter (a source inside the vault); its body and other keys keep their bytes."""
    flags.run(
        lambda steering: SpecUpdateParams(
            source=source,
            id=spec_id,
            set=_json(set_, "--set", {}),
            unset=_json(unset, "--unset", []),
            add=_json(add, "--add", {}),
            remove=_json(remove, "--remove", {}),
            **steering,
        )
    )


@spec_app.command("delete")
@write_command(specs.SPEC_DELETE)
def spec_delete(
    spec_id: Annotated[str, typer.Argument(metavar="SPEC", help=doc(SpecDeleteParams, "id"))],
    source: SourceOpt = None,
    *,
    flags: WriteFlags[SpecDeleteParams],
) -> None:
    """Move SPEC to .trash (undo restores it): a preview listing what names it, then --confirm --fingerprint F."""
    words = ("spec", "delete", spec_id, *(("--source", source) if source else ()))
    flags.run(lambda steering: SpecDeleteParams(source=source, id=spec_id, **steering), *words)
