"""search, show, links, list, tags, stats, issues: reads, each with --vault and --json."""

from __future__ import annotations

import shlex
import sys
from typing import Annotated

import typer

from protocol.errors import ExitStatus
from protocol.limits import DEFAULT_READ_PAGE_BYTES
from protocol.methods import reads
from protocol.methods.reads import (
    IssuesParams,
    IssuesResult,
    LinksParams,
    LinksResult,
    ListParams,
    ListResult,
    ReadParams,
    ReadResult,
    SearchParams,
    SearchResult,
    StatsResult,
    TagsParams,
    VaultParams,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.terminal import Colour, highlighted, wants_colour

FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(VaultParams, "fresh"))]


def search(
    query: Annotated[str | None, typer.Argument(help=doc(SearchParams, "query"))] = None,
    vault: VaultOpt = None,
    type_: Annotated[str | None, typer.Option("--type", help=doc(SearchParams, "type"))] = None,
    domain: Annotated[str | None, typer.Option(help=doc(SearchParams, "domain"))] = None,
    tag: Annotated[str | None, typer.Option(help=doc(SearchParams, "tag"))] = None,
    folder: Annotated[str | None, typer.Option(help=doc(SearchParams, "folder"))] = None,
    limit: Annotated[int, typer.Option(help=doc(SearchParams, "limit"))] = 20,
    color: Annotated[
        Colour, typer.Option("--color", help="Show matches in colour: auto (on a terminal, unless NO_COLOR is set), always, never.")
    ] = Colour.AUTO,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Full-text search: path, title, score and the matching text; exit 1 when nothing matches (as grep and rg do)."""
    if not (query or "").strip() and not any((type_, domain, tag, folder)):
        fail("give words to search for, or a filter (--tag, --folder, --type, --domain)", ExitStatus.USAGE)
    with session() as c:
        params = SearchParams(
            query=query or "", vault=pick_vault(c, vault), type=type_, domain=domain, tag=tag, folder=folder, limit=limit, fresh=fresh
        )
        result = call(reads.SEARCH, params, client=c)
    colour = wants_colour(sys.stdout, color)

    def text(r: SearchResult) -> str:
        rows = [(h.score, h.path, h.title, highlighted(h.excerpt, h.highlights, colour)) for h in r.hits]
        return render.table(["score", "path", "title", "match"], rows)

    if result.hits or as_json:
        emit(result, as_json, text)
    if not result.hits:
        what = "no notes match" if query else "no notes match the filters"  # the query is not echoed: it may hold anything
        hint = f"; did you mean: vaultctl search {shlex.quote(result.did_you_mean)}" if result.did_you_mean else ""
        render.say(what + hint, file=sys.stderr, multiline=False, reversible=False)
        raise typer.Exit(ExitStatus.REFUSED)


def show(
    target: Annotated[str, typer.Argument(help=doc(ReadParams, "target"))],
    vault: VaultOpt = None,
    section: Annotated[str | None, typer.Option(help=doc(ReadParams, "section"))] = None,
    offset: Annotated[int, typer.Option(help=doc(ReadParams, "offset"))] = 0,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help=doc(ReadParams, "max_bytes"))] = DEFAULT_READ_PAGE_BYTES,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Print a note (or one H2 section), paged by bytes."""
    with session() as c:
        chosen = pick_vault(c, vault)
        params = ReadParams(target=target, vault=chosen, section=section, offset=offset, max_bytes=max_bytes, fresh=fresh)
        result = call(reads.READ, params, client=c)

    def text(r: ReadResult) -> str:
        out: str = r.body
        if r.truncated:
            more = [f"vaultctl show {shlex.quote(r.path)} --offset {r.next_offset}"]
            if section:
                more.append(f"--section {shlex.quote(section)}")
            if chosen:
                more.append(f"--vault {chosen}")
            out += f"\n\n[truncated; sha256 {r.sha256}; next page: {' '.join(more)}]"
        return out

    emit(result, as_json, text)


def links(
    target: Annotated[str, typer.Argument(help=doc(LinksParams, "target"))],
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(LinksParams, "limit"))] = 50,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """A note's outgoing links (with status) and its backlinks."""
    with session() as c:
        result = call(reads.LINKS, LinksParams(target=target, vault=pick_vault(c, vault), limit=limit, fresh=fresh), client=c)

    def text(r: LinksResult) -> str:
        out_rows = [
            (
                o.line,
                o.kind,
                o.target + (f"#{o.anchor}" if o.anchor else ""),
                o.status,
                o.resolved
                or (", ".join(o.candidates) if o.candidates else (f"did you mean {o.suggestion}?" if o.suggestion else o.reason or "")),
            )
            for o in r.out
        ]
        parts = [
            f"{r.path}",
            "",
            "outgoing:",
            render.table(["line", "kind", "target", "status", "resolves to"], out_rows) if out_rows else "  none",
            "",
            "backlinks:",
            render.table(["path", "line", "kind"], [(i.path, i.line, i.kind) for i in r.incoming]) if r.incoming else "  none",
        ]
        if r.truncated:
            parts.append(f"\n[truncated at {limit}; raise --limit]")
        return render.compose(parts)

    emit(result, as_json, text)


def list_notes(
    folder: Annotated[str | None, typer.Argument(help=doc(ListParams, "folder"))] = None,
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(ListParams, "limit"))] = 50,
    cursor: Annotated[str | None, typer.Option(help=doc(ListParams, "cursor"))] = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """List notes in path order, a page at a time."""
    with session() as c:
        chosen = pick_vault(c, vault)
        result = call(reads.LIST, ListParams(vault=chosen, folder=folder, limit=limit, cursor=cursor, fresh=fresh), client=c)

    def text(r: ListResult) -> str:
        body = render.table(["path", "title", "type", "tags"], [(n.path, n.title, n.type, n.tags) for n in r.notes])
        tail = f"\n\n{len(r.notes)} of {r.total} notes"
        if r.next_cursor:
            tail += f"; next page: vaultctl list{' ' + shlex.quote(folder) if folder else ''} --cursor {r.next_cursor}"
        return body + tail

    emit(result, as_json, text)


def tags(
    vault: VaultOpt = None,
    prefix: Annotated[str | None, typer.Option(help=doc(TagsParams, "prefix"))] = None,
    limit: Annotated[int, typer.Option(help=doc(TagsParams, "limit"))] = 500,
    as_json: JsonOpt = False,
) -> None:
    """Every tag with the number of notes carrying it."""
    with session() as c:
        result = call(reads.TAGS, TagsParams(vault=pick_vault(c, vault), prefix=prefix, limit=limit), client=c)
    emit(result, as_json, lambda r: render.table(["tag", "notes"], [(t.tag, t.notes) for t in r.tags]))


def stats(vault: VaultOpt = None, fresh: FreshOpt = False, as_json: JsonOpt = False) -> None:
    """Counts: notes by type, domain and folder; links, dead links, orphans, bytes, words."""
    with session() as c:
        result = call(reads.STATS, VaultParams(vault=pick_vault(c, vault), fresh=fresh), client=c)

    def text(r: StatsResult) -> str:
        head = render.fields(
            f"vault {r.vault}",
            [
                ("notes", r.notes),
                ("attachments", r.attachments),
                ("bytes", r.bytes),
                ("words", r.words),
                ("links", r.links),
                ("dead links", r.dead_links),
                ("ambiguous links", r.ambiguous_links),
                ("orphans", r.orphans),
                ("issues", r.issues),
                ("skipped files", r.skipped),
            ],
        )

        def by(title: str, counts: dict[str, int]) -> str:
            return render.table([title, "notes"], list(counts.items()))

        return render.compose([head, by("type", r.by_type), by("domain", r.by_domain), by("folder", r.by_folder)], "\n\n")

    emit(result, as_json, text)


def issues(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(IssuesParams, "limit"))] = 100,
    cursor: Annotated[str | None, typer.Option(help=doc(IssuesParams, "cursor"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """Problems found while indexing: malformed frontmatter, skipped files and why."""
    with session() as c:
        result = call(reads.ISSUES, IssuesParams(vault=pick_vault(c, vault), limit=limit, cursor=cursor), client=c)

    def text(r: IssuesResult) -> str:
        if not r.issues:
            return "no issues"
        body = render.table(["path", "line", "code", "issue"], [(i.path, i.line, i.code, i.message) for i in r.issues])
        more = f"\nnext page: vaultctl issues --cursor {r.next_cursor}" if r.next_cursor else ""
        return body + f"\n\n{len(r.issues)} of {r.total}{more}"

    emit(result, as_json, text)
