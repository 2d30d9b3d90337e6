"""search, show, links, list, tags, stats, issues: reads, each with --vault and --json."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from protocol.errors import ErrorCode, ExitStatus
from protocol.limits import DEFAULT_READ_PAGE_BYTES, MAX_ANSWER_BYTES, MAX_READ_PAGE_BYTES, describe
from protocol.methods import reads
from protocol.methods.reads import (
    MAX_STATS_DAYS,
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
    StatsParams,
    StatsResult,
    TagsParams,
    VaultParams,
)
from protocol.schema import field_help as doc
from vaultctl import command_tree, display, note_view, render
from vaultctl.client import CallError, DaemonUnavailable
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, refuse, session
from vaultctl.completion import Complete
from vaultctl.hits import hits_text
from vaultctl.terminal import Escaped

if TYPE_CHECKING:
    from vaultctl.client import Client

FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(VaultParams, "fresh"))]


def search(
    query: Annotated[str | None, typer.Argument(help=doc(SearchParams, "query"))] = None,
    vault: VaultOpt = None,
    type_: Annotated[str | None, typer.Option("--type", help=doc(SearchParams, "type"))] = None,
    domain: Annotated[str | None, typer.Option(help=doc(SearchParams, "domain"))] = None,
    tag: Annotated[str | None, typer.Option(help=doc(SearchParams, "tag"))] = None,
    folder: Annotated[str | None, typer.Option(help=doc(SearchParams, "folder"))] = None,
    limit: Annotated[int, typer.Option(help=doc(SearchParams, "limit"))] = 20,
    meaning: Annotated[
        bool,
        typer.Option(
            "--meaning",
            help="Continue a plain-words query with notes ranked by meaning when fewer hold every word (marked match: meaning).",
        ),
    ] = False,
    color: Annotated[
        display.ColorMode | None,
        typer.Option("--color", help="Show matches in colour: auto (on a terminal, unless NO_COLOR is set), always, never."),
    ] = None,
    fresh: FreshOpt = False,
    include_excluded: Annotated[bool, typer.Option("--include-excluded", help=doc(SearchParams, "include_excluded"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Full-text search: each hit's path, title and snippet, best first (--json adds the scores); exit 1 when
    nothing matches (as grep and rg do). Every word is required unless --meaning continues the answer."""
    if not (query or "").strip() and not any((type_, domain, tag, folder)):
        fail("give words to search for, or a filter (--tag, --folder, --type, --domain)", ExitStatus.USAGE)
    if color is not None:
        display.set_mode(color)
    with session() as c:
        params = SearchParams(
            query=query or "",
            vault=pick_vault(c, vault),
            type=type_,
            domain=domain,
            tag=tag,
            folder=folder,
            limit=limit,
            meaning=meaning,
            max_bytes=MAX_ANSWER_BYTES,  # a person's terminal: every hit up to --limit
            fresh=fresh,
            include_excluded=include_excluded,
        )
        result = call(reads.SEARCH, params, client=c)

    def text(r: SearchResult) -> str:
        return hits_text(r.hits)

    if result.hits or as_json:
        emit(result, as_json, text)
    if not result.hits:
        what = "no notes match" if query else "no notes match the filters"  # the query is not echoed: it may hold anything
        hint = f"; did you mean: vaultctl search {shlex.quote(result.did_you_mean)}" if result.did_you_mean else ""
        render.say(what + hint, file=sys.stderr, multiline=False, reversible=False)
        raise typer.Exit(ExitStatus.REFUSED)


def show(
    target: Annotated[str, typer.Argument(help=doc(ReadParams, "target")), Complete.NOTE],
    vault: VaultOpt = None,
    section: Annotated[str | None, typer.Option(help=doc(ReadParams, "section"))] = None,
    offset: Annotated[int, typer.Option(help=doc(ReadParams, "offset"))] = 0,
    max_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-bytes",
            help=doc(ReadParams, "max_bytes") + f" Default: {describe(DEFAULT_READ_PAGE_BYTES)}, or the whole note on a terminal.",
            show_default=False,
        ),
    ] = None,
    whole: Annotated[bool, typer.Option("--all", help="The whole note, every page, however long.")] = False,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="Never page the output, even on a terminal.")] = False,
    fresh: FreshOpt = False,
    at: Annotated[str | None, typer.Option("--at", metavar="REV", help=doc(ReadParams, "at"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a note: a header (path, sha, size), its frontmatter, then its body (or one H2 section);
    --at REV prints it as it was then.

    On a terminal the whole note is shown, through a pager ($VAULTD_PAGER, $PAGER or less) when it
    is longer than the screen; elsewhere one page at a time, the next page's command on stderr."""
    whole = whole or (sys.stdout.isatty() and not as_json and offset == 0 and max_bytes is None)
    page = max_bytes if max_bytes is not None else MAX_READ_PAGE_BYTES if whole else DEFAULT_READ_PAGE_BYTES
    with session() as c:
        chosen = pick_vault(c, vault)
        params = ReadParams(target=target, vault=chosen, section=section, offset=offset, max_bytes=page, fresh=fresh, at=at)
        try:
            result = c.call(reads.READ, params)
        except (UnicodeEncodeError, DaemonUnavailable):
            result = call(reads.READ, params, client=c)  # refused there as every command refuses them
        except CallError as exc:
            if exc.data.code is not ErrorCode.NOT_FOUND or section is not None or at is not None or offset:
                refuse(exc.data)
            _show_file(c, target, chosen, as_json, exc)
            return
        if whole:
            result = _read_rest(c, params, result)
    if as_json:
        print(render.json_line(result))
        return
    on = display.colour()
    lines = [note_view.header(result, on)]
    if result.offset == 0 and result.section is None:
        lines += note_view.frontmatter(result.frontmatter)
    show_paged(Escaped("\n".join(lines)) + "\n" + result.body.rstrip("\n"), enabled=not no_pager)
    if result.truncated and result.next_offset is not None:
        shown = f"bytes {result.offset}..{result.next_offset} of {result.size}"
        more = command_tree.again(target=result.path, offset=result.next_offset, vault=chosen)
        render.say(f"[{shown}; next page: {more}; --all shows the whole note]", file=sys.stderr)


def _show_file(client: Client, target: str, vault: str | None, as_json: bool, not_a_note: CallError) -> None:
    """``show`` of a file that is not a note: a text kind (a canvas, a base, .txt, .json) whole, as
    ``file read`` prints it; a target that is no file either is refused as the note read was."""
    from protocol.methods import files
    from protocol.methods.files import FileEncoding, FileReadParams
    from vaultctl.commands.files_cmd import read_text_file

    params = FileReadParams(target=target, vault=vault)
    try:
        first = client.call(files.READ, params)
    except CallError as exc:
        refuse(not_a_note.data if exc.data.code is ErrorCode.NOT_FOUND else exc.data)
    if first.encoding is not FileEncoding.TEXT:
        shown = shlex.quote(first.path)
        fail(f"{first.path} is a {first.kind.value} file, not text; see it with 'vaultctl file read {shown}'", ExitStatus.REFUSED)
    result = read_text_file(client, params) if first.next_offset is not None else first
    if as_json:
        print(render.json_line(result))
        return
    sha = f"  sha256 {result.sha256[:12]}" if result.sha256 else ""
    render.say(f"{result.path}  {result.kind.value}  {result.size} bytes{sha}", file=sys.stderr)
    render.say(result.content.rstrip("\n"))


def _read_rest(client: Client, params: ReadParams, first: ReadResult) -> ReadResult:
    """``first`` with every following page appended; refused (exit 75) if the note changes meanwhile."""
    body, page = [first.body], first
    while page.truncated and page.next_offset is not None:
        page = call(reads.READ, msgspec.structs.replace(params, target=first.path, offset=page.next_offset), client=client)
        if page.sha256 != first.sha256:
            fail(f"{first.path} changed while it was read page by page; run the command again", ExitStatus.CONFLICT)
        body.append(page.body)
    return msgspec.structs.replace(first, body="".join(body), truncated=False, next_offset=None)


def links(
    target: Annotated[str, typer.Argument(help=doc(LinksParams, "target")), Complete.NOTE],
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(LinksParams, "limit"))] = 50,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """A note's outgoing links (with status) and its backlinks."""
    with session() as c:
        chosen = pick_vault(c, vault)
        result = call(reads.LINKS, LinksParams(target=target, vault=chosen, limit=limit, fresh=fresh), client=c)

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
        return render.compose(parts)

    emit(result, as_json, text)
    if result.truncated and not as_json:
        render.say(
            f"[the first {limit} links each way; more with: {command_tree.again(limit=min(limit * 4, 500), vault=chosen)}]", file=sys.stderr
        )


def list_notes(
    folder: Annotated[str | None, typer.Argument(help=doc(ListParams, "folder"))] = None,
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(ListParams, "limit"))] = 50,
    cursor: Annotated[str | None, typer.Option(help=doc(ListParams, "cursor"))] = None,
    fresh: FreshOpt = False,
    include_excluded: Annotated[bool, typer.Option("--include-excluded", help=doc(ListParams, "include_excluded"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """List notes in path order, a page at a time."""
    with session() as c:
        chosen = pick_vault(c, vault)
        params = ListParams(vault=chosen, folder=folder, limit=limit, cursor=cursor, fresh=fresh, include_excluded=include_excluded)
        result = call(reads.LIST, params, client=c)

    def text(r: ListResult) -> str:
        if not r.notes:
            return "no notes" + (f" under {folder}" if folder else "")
        return render.table(["path", "title", "type", "tags"], [(n.path, n.title, n.type, n.tags) for n in r.notes])

    emit(result, as_json, text)
    if not as_json:
        tail = f"[{len(result.notes)} of {result.total} notes"
        tail += f"; next page: {command_tree.again(cursor=result.next_cursor, vault=chosen)}]" if result.next_cursor else "]"
        render.say(tail, file=sys.stderr)


def tags(
    vault: VaultOpt = None,
    prefix: Annotated[str | None, typer.Option(help=doc(TagsParams, "prefix"))] = None,
    limit: Annotated[int, typer.Option(help=doc(TagsParams, "limit"))] = 500,
    as_json: JsonOpt = False,
) -> None:
    """Every tag with the number of notes carrying it."""
    with session() as c:
        chosen = pick_vault(c, vault)
        result = call(reads.TAGS, TagsParams(vault=chosen, prefix=prefix, limit=limit), client=c)
    emit(result, as_json, lambda r: render.table(["tag", "notes"], [(t.tag, t.notes) for t in r.tags]) if r.tags else "no tags")
    if result.truncated and not as_json:
        render.say(
            f"[the {limit} most used tags; more with: {command_tree.again(limit=min(limit * 4, 5000), vault=chosen)}]", file=sys.stderr
        )


def stats(
    vault: VaultOpt = None,
    days: Annotated[int, typer.Option("--days", min=1, max=MAX_STATS_DAYS, help=doc(StatsParams, "days"))] = 30,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Counts: notes by type, domain, status and folder; links, orphans, size, activity, log events, note-to-source ratio.

    Exits 1 when the operation log cannot be read (its counts are then null)."""
    with session() as c:
        result = call(reads.STATS, StatsParams(vault=pick_vault(c, vault), fresh=fresh, days=days), client=c)

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

        parts = [head, by("type", r.by_type), by("domain", r.by_domain), by("status", r.by_status), by("folder", r.by_folder)]
        if r.recent is not None:
            parts.append(render.fields("notes changed", [("last 7 days", r.recent.last_7_days), ("last 30 days", r.recent.last_30_days)]))
        if r.log is not None:
            if r.log.by_type is None:
                parts.append(f"log since {r.log.since}: not readable ({'; '.join(r.log.issues)})")
            else:
                parts.append(
                    f"log events since {r.log.since} ({r.log.days} days): {r.log.total}\n"
                    + render.table(["type", "events"], list(r.log.by_type.items()))
                )
        if r.size is not None:
            sizes = [(t, c.notes, c.bytes, c.words) for t, c in r.size.by_type.items()]
            parts.append(render.table(["type", "notes", "bytes", "words"], sizes))
        if r.ratio is not None and r.ratio.notes:
            q = r.ratio
            parts.append(
                render.fields(
                    "note-to-source ratio",
                    [
                        ("notes", q.notes),
                        ("sources", q.sources),
                        ("median", q.median),
                        ("p90", q.p90),
                        ("over one", q.over_one),
                        ("skipped", q.skipped),
                    ],
                )
            )
        return render.compose(parts, "\n\n")

    emit(result, as_json, text)
    if result.log is not None and result.log.total is None:
        raise typer.Exit(int(ExitStatus.REFUSED))


def issues(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(IssuesParams, "limit"))] = 100,
    cursor: Annotated[str | None, typer.Option(help=doc(IssuesParams, "cursor"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """Problems found while indexing: malformed frontmatter, skipped files and why."""
    with session() as c:
        chosen = pick_vault(c, vault)
        result = call(reads.ISSUES, IssuesParams(vault=chosen, limit=limit, cursor=cursor), client=c)

    def text(r: IssuesResult) -> str:
        if not r.issues:
            return "no issues"
        return render.table(["path", "line", "code", "issue"], [(i.path, i.line, i.code, i.message) for i in r.issues])

    emit(result, as_json, text)
    if result.issues and not as_json:
        tail = f"[{len(result.issues)} of {result.total} issues"
        tail += f"; next page: {command_tree.again(cursor=result.next_cursor, vault=chosen)}]" if result.next_cursor else "]"
        render.say(tail, file=sys.stderr)


PAGER_ENV = "VAULTD_PAGER"


def pager_command(environ: dict[str, str] | None = None) -> list[str] | None:
    """The pager to run, or None for none (unset to ``cat``, empty, or not installed)."""
    env = os.environ if environ is None else environ
    raw = env.get(PAGER_ENV, env.get("PAGER", "less")).strip()
    try:
        argv = shlex.split(raw)
    except ValueError:
        return None
    if not argv or argv[0] == "cat" or shutil.which(argv[0]) is None:
        return None
    return argv


def show_paged(text: str, *, enabled: bool = True) -> None:
    """Print ``text`` (already escaped) to stdout, through the pager when it is longer than the
    terminal. The text ends with a newline either way.

    The pager is chosen as ``git`` chooses it: only on a terminal, only when the text is longer
    than the screen, with ``$VAULTD_PAGER``, else ``$PAGER``, else ``less``. ``less`` gets
    ``LESS=FRX`` unless the user set ``LESS`` (quit when it fits, keep colours, leave the text on
    the screen). A pager that cannot start, or ``PAGER=cat``, prints the text directly.
    """
    lines = display.height(sys.stdout) if enabled else None
    argv = pager_command() if lines is not None and text.count("\n") + 1 >= lines else None
    if argv is None:
        print(text)
        return
    sys.stdout.flush()
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    except OSError:
        print(text)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write((text + "\n").encode("utf-8", "surrogateescape"))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit the pager early: nothing more to show
    proc.wait()
