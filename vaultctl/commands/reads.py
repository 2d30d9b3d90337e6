"""search, show, links, list, tags, stats, issues: reads, each with --vault and --json."""

from __future__ import annotations

import shlex
from typing import Annotated, Any

import typer

from protocol.methods.reads import (
    IssuesParams,
    LinksParams,
    ListParams,
    ReadParams,
    SearchParams,
    TagsParams,
    VaultParams,
)
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session

FreshOpt = Annotated[bool, typer.Option("--fresh", help="Wait until every earlier file change is indexed.")]
LimitOpt = Annotated[int, typer.Option("--limit", help="At most this many results (1..500).")]


def search(
    query: Annotated[str, typer.Argument(help="Words to find; every word must match.")],
    vault: VaultOpt = None,
    type_: Annotated[str | None, typer.Option("--type", help="Only notes of this frontmatter type.")] = None,
    domain: Annotated[str | None, typer.Option(help="Only notes of this frontmatter domain.")] = None,
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag (or a tag nested under it).")] = None,
    folder: Annotated[str | None, typer.Option(help="Only notes below this folder.")] = None,
    limit: LimitOpt = 20,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Full-text search; results with path, title, score and a snippet."""
    with session() as c:
        params = SearchParams(query=query, vault=pick_vault(c, vault), type=type_, domain=domain, tag=tag,
                              folder=folder, limit=limit, fresh=fresh)
        result = call("note.search", params, client=c)

    def text(r: Any) -> str:
        if not r.hits:
            return f"no notes match {query!r}"
        return render.table(["score", "path", "title", "snippet"],
                            [(h.score, h.path, h.title, h.snippet) for h in r.hits])
    emit(result, as_json, text)


def show(
    target: Annotated[str, typer.Argument(help="A path, note name or alias.")],
    vault: VaultOpt = None,
    section: Annotated[str | None, typer.Option(help="Only this H2 section.")] = None,
    offset: Annotated[int, typer.Option(help="UTF-8 byte offset to start at (from next_offset).")] = 0,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help="At most this many bytes (1..65536).")] = 16384,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Print a note (or one H2 section), paged by bytes."""
    with session() as c:
        chosen = pick_vault(c, vault)
        params = ReadParams(target=target, vault=chosen, section=section, offset=offset, max_bytes=max_bytes,
                            fresh=fresh)
        result = call("note.read", params, client=c)

    def text(r: Any) -> str:
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
    target: Annotated[str, typer.Argument(help="A path, note name or alias.")],
    vault: VaultOpt = None,
    limit: LimitOpt = 50,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """A note's outgoing links (with status) and its backlinks."""
    with session() as c:
        result = call("note.links", LinksParams(target=target, vault=pick_vault(c, vault), limit=limit, fresh=fresh),
                      client=c)

    def text(r: Any) -> str:
        out_rows = [(o.line, o.kind, o.target + (f"#{o.anchor}" if o.anchor else ""), o.status,
                     o.resolved or (", ".join(o.candidates) if o.candidates else (
                         f"did you mean {o.suggestion}?" if o.suggestion else o.reason or "")))
                    for o in r.out]
        parts = [f"{r.path}", "", "outgoing:",
                 render.table(["line", "kind", "target", "status", "resolves to"], out_rows) if out_rows else "  none",
                 "", "backlinks:",
                 render.table(["path", "line", "kind"], [(i.path, i.line, i.kind) for i in r.incoming])
                 if r.incoming else "  none"]
        if r.truncated:
            parts.append(f"\n[truncated at {limit}; raise --limit]")
        return render.compose(parts)
    emit(result, as_json, text)


def list_notes(
    folder: Annotated[str | None, typer.Argument(help="Only notes under this folder or path prefix.")] = None,
    vault: VaultOpt = None,
    limit: LimitOpt = 50,
    cursor: Annotated[str | None, typer.Option(help="The cursor the previous page printed.")] = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """List notes in path order, a page at a time."""
    with session() as c:
        chosen = pick_vault(c, vault)
        result = call("note.list", ListParams(vault=chosen, folder=folder, limit=limit, cursor=cursor, fresh=fresh),
                      client=c)

    def text(r: Any) -> str:
        body = render.table(["path", "title", "type", "tags"], [(n.path, n.title, n.type, n.tags) for n in r.notes])
        tail = f"\n\n{len(r.notes)} of {r.total} notes"
        if r.next_cursor:
            tail += f"; next page: vaultctl list{' ' + shlex.quote(folder) if folder else ''} --cursor {r.next_cursor}"
        return body + tail
    emit(result, as_json, text)


def tags(
    vault: VaultOpt = None,
    prefix: Annotated[str | None, typer.Option(help="Only tags starting with this.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many tags (1..5000).")] = 500,
    as_json: JsonOpt = False,
) -> None:
    """Every tag with the number of notes carrying it."""
    with session() as c:
        result = call("vault.tags", TagsParams(vault=pick_vault(c, vault), prefix=prefix, limit=limit), client=c)
    emit(result, as_json, lambda r: render.table(["tag", "notes"], [(t.tag, t.notes) for t in r.tags]))


def stats(vault: VaultOpt = None, fresh: FreshOpt = False, as_json: JsonOpt = False) -> None:
    """Counts: notes by type, domain and folder; links, dead links, orphans, bytes, words."""
    with session() as c:
        result = call("vault.stats", VaultParams(vault=pick_vault(c, vault), fresh=fresh), client=c)

    def text(r: Any) -> str:
        head = render.fields(f"vault {r.vault}", [
            ("notes", r.notes), ("attachments", r.attachments), ("bytes", r.bytes), ("words", r.words),
            ("links", r.links), ("dead links", r.dead_links), ("ambiguous links", r.ambiguous_links),
            ("orphans", r.orphans), ("issues", r.issues), ("skipped files", r.skipped)])
        def by(title: str, counts: dict[str, int]) -> str:
            return render.table([title, "notes"], list(counts.items()))

        return render.compose([head, by("type", r.by_type), by("domain", r.by_domain), by("folder", r.by_folder)],
                              "\n\n")
    emit(result, as_json, text)


def issues(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help="At most this many issues (1..500).")] = 100,
    cursor: Annotated[str | None, typer.Option(help="The cursor the previous page printed.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Problems found while indexing: malformed frontmatter, skipped files and why."""
    with session() as c:
        result = call("vault.issues", IssuesParams(vault=pick_vault(c, vault), limit=limit, cursor=cursor), client=c)

    def text(r: Any) -> str:
        if not r.issues:
            return "no issues"
        body = render.table(["path", "line", "code", "issue"], [(i.path, i.line, i.code, i.message) for i in r.issues])
        more = f"\nnext page: vaultctl issues --cursor {r.next_cursor}" if r.next_cursor else ""
        return body + f"\n\n{len(r.issues)} of {r.total}{more}"
    emit(result, as_json, text)
