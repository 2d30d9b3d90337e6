"""The read methods. All answer from the in-memory index (search from the FTS cache) and never
write a note; ``note.read`` re-reads the file so the body and its hash are the bytes on disk."""

from __future__ import annotations

import hashlib
import os
from collections import Counter

import anyio

from protocol.methods.reads import (
    FileIssue,
    InLink,
    IssuesParams,
    IssuesResult,
    LinksParams,
    LinksResult,
    LinkStatus,
    ListParams,
    ListResult,
    NoteSummary,
    OutLink,
    ReadParams,
    ReadResult,
    SearchHit,
    SearchParams,
    SearchResult,
    StatsResult,
    TagCount,
    TagsParams,
    TagsResult,
    VaultParams,
)
from vaultd.api.registry import CallContext, handles
from vaultd.errors import Ambiguous, InvalidParams, NotFound
from vaultd.vault import frontmatter, markdown
from vaultd.vault.index import VaultIndex
from vaultd.vault.live import LiveIndex
from vaultd.vault.lookup import find_note
from vaultd.vault.model import Link, LinkKind, NoteRecord
from vaultd.vault.paging import decode_cursor, encode_cursor, utf8_page
from vaultd.vault.resolve import ResolutionStatus, check_anchor
from vaultd.vault.walk import shown_path

MAX_QUERY_BYTES = 1024
MAX_OUTLINE = 64


async def live_index(ctx: CallContext, vault: str | None, fresh: bool = False) -> LiveIndex:
    runtime = ctx.daemon.vault(vault)
    await runtime.wait_ready()
    assert runtime.live is not None
    if fresh:
        await runtime.live.barrier()
    return runtime.live


def _scalar(record: NoteRecord, key: str) -> str | None:
    value = (record.frontmatter or {}).get(key)
    return value if isinstance(value, str) else None


@handles("note.search")
async def search(ctx: CallContext, params: SearchParams) -> SearchResult:
    if len(params.query.encode("utf-8")) > MAX_QUERY_BYTES:
        raise InvalidParams(f"the query is over {MAX_QUERY_BYTES} UTF-8 bytes")
    live = await live_index(ctx, params.vault, params.fresh)
    index = live.index
    if index.cache is None:
        return SearchResult(hits=[])
    folder = params.folder.strip("/") if params.folder else None
    hits = await anyio.to_thread.run_sync(lambda: index.cache.search(  # type: ignore[union-attr]
        params.query, type=params.type, domain=params.domain, tag=params.tag, folder=folder,
        limit=params.limit))
    return SearchResult(hits=[
        SearchHit(path=h.path, title=h.title, score=h.score, snippet=h.snippet)
        for h in hits if h.path in index.notes
    ])


def _read_file(root: str, path: str) -> bytes:
    fd = os.open(os.path.join(root, path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(2 * 1024 * 1024 + 1)
    finally:
        os.close(fd)


@handles("note.read")
async def read(ctx: CallContext, params: ReadParams) -> ReadResult:
    live = await live_index(ctx, params.vault, params.fresh)
    path = find_note(live.index, params.target)
    try:
        raw = await anyio.to_thread.run_sync(_read_file, str(live.root), path)
    except FileNotFoundError as exc:
        raise NotFound(f"{path} was removed; search again") from exc
    text = raw.decode("utf-8", "replace")
    fm = frontmatter.parse(text)
    selected = text[fm.body_offset:]
    if params.section is not None:
        spans = markdown.section_spans(text, fm.body_offset, params.section)
        if not spans:
            record = live.index.notes.get(path)
            names = [h.text for h in (record.headings if record else []) if h.level == 2]
            raise NotFound(f"no H2 section {params.section!r} in {path}; sections: {', '.join(names) or 'none'}")
        if len(spans) > 1:
            raise Ambiguous(f"{path} has {len(spans)} H2 sections named {params.section!r}")
        selected = text[spans[0][0]:spans[0][1]]
    body, next_offset = utf8_page(selected, params.offset, params.max_bytes)
    record = live.index.notes.get(path)
    outline = [h.text for h in (record.headings if record else []) if h.level <= 3][:MAX_OUTLINE]
    return ReadResult(
        path=path, title=record.title if record else path, frontmatter=fm.data, body=body,
        sha256=hashlib.sha256(raw).hexdigest(), size=len(raw), section=params.section, offset=params.offset,
        truncated=next_offset is not None, next_offset=next_offset, headings=outline,
    )


def _out_link(index: VaultIndex, source: str, link: Link) -> OutLink:
    res = index.resolve(link, source)
    out = OutLink(target=link.target, anchor=link.anchor, kind=str(link.kind), line=link.line,
                  status=LinkStatus.RESOLVED, resolved=res.path, reason=res.reason or None)
    if res.status == ResolutionStatus.AMBIGUOUS:
        out.status, out.candidates, out.resolved = LinkStatus.AMBIGUOUS, list(res.candidates), None
    elif res.status == ResolutionStatus.MISSING:
        out.status, out.resolved = LinkStatus.MISSING, None
        hint = index.suggester.suggest(link.target)
        out.suggestion = hint[0] if hint else None
    elif link.anchor and res.path in index.notes:
        target = index.notes[res.path]
        problem = check_anchor(link.anchor, target.headings, target.blocks)
        if problem:
            out.status, out.reason = LinkStatus.BAD_ANCHOR, problem
    return out


def _source_order(record: NoteRecord) -> list[Link]:
    return sorted(record.links, key=lambda lk: (lk.kind != LinkKind.FRONTMATTER, lk.start, lk.line))


@handles("note.links")
async def links(ctx: CallContext, params: LinksParams) -> LinksResult:
    live = await live_index(ctx, params.vault, params.fresh)
    index = live.index
    path = find_note(index, params.target)
    record = index.notes[path]
    ordered = _source_order(record)
    out = [_out_link(index, path, lk) for lk in ordered[: params.limit]]
    incoming: list[InLink] = []
    for source, link in index.backlinks(path):
        if len(incoming) > params.limit:
            break
        incoming.append(InLink(path=source, line=link.line, kind=str(link.kind)))
    truncated = len(ordered) > params.limit or len(incoming) > params.limit
    return LinksResult(path=path, out=out, incoming=incoming[: params.limit],
                       dead=[o for o in out if o.status != LinkStatus.RESOLVED], truncated=truncated)


@handles("note.list")
async def list_notes(ctx: CallContext, params: ListParams) -> ListResult:
    live = await live_index(ctx, params.vault, params.fresh)
    index = live.index
    prefix = (params.folder or "").lstrip("/")
    paths = sorted(p for p in index.notes if p.startswith(prefix))
    after = decode_cursor(params.cursor) if params.cursor else None
    start = 0
    if after is not None:
        import bisect

        start = bisect.bisect_right(paths, after)
    page = paths[start: start + params.limit]
    notes = [NoteSummary(path=p, title=index.notes[p].title, type=_scalar(index.notes[p], "type"),
                         size=index.notes[p].size, tags=sorted({t.name for t in index.notes[p].tags}))
             for p in page]
    more = start + params.limit < len(paths)
    return ListResult(notes=notes, total=len(paths), next_cursor=encode_cursor(page[-1]) if more and page else None)


@handles("vault.tags")
async def tags(ctx: CallContext, params: TagsParams) -> TagsResult:
    live = await live_index(ctx, params.vault)
    counts: Counter[str] = Counter()
    spelled: dict[str, str] = {}
    for record in live.index.notes.values():
        seen = set()
        for tag in record.tags:
            key = tag.name.casefold()
            spelled.setdefault(key, tag.name)
            seen.add(key)
        counts.update(seen)
    prefix = (params.prefix or "").lstrip("#").casefold()
    rows = sorted(((spelled[k], n) for k, n in counts.items() if k.startswith(prefix)), key=lambda r: (-r[1], r[0]))
    return TagsResult(tags=[TagCount(tag=t, notes=n) for t, n in rows[: params.limit]],
                      truncated=len(rows) > params.limit)


@handles("vault.stats")
async def stats(ctx: CallContext, params: VaultParams) -> StatsResult:
    runtime = ctx.daemon.vault(params.vault)
    live = await live_index(ctx, params.vault, params.fresh)
    index = live.index
    by_type: Counter[str] = Counter()
    by_domain: Counter[str] = Counter()
    by_folder: Counter[str] = Counter()
    linked: set[str] = set()
    n_links = dead = ambiguous = words = size = issues = 0
    for path, record in index.notes.items():
        by_type[_scalar(record, "type") or "(none)"] += 1
        by_domain[_scalar(record, "domain") or "(none)"] += 1
        by_folder[path.rpartition("/")[0] or "."] += 1
        words += record.words
        size += record.size
        issues += len(record.issues)
        for link in record.links:
            if not link.target:
                continue
            n_links += 1
            res = index.resolve(link, path)
            if res.status == ResolutionStatus.MISSING:
                dead += 1
            elif res.status == ResolutionStatus.AMBIGUOUS:
                ambiguous += 1
            elif res.path is not None and res.path != path:
                linked.add(res.path)
                linked.add(path)
    return StatsResult(
        vault=runtime.entry.id, notes=len(index.notes), attachments=len(index.attachments), bytes=size,
        words=words, links=n_links, dead_links=dead, ambiguous_links=ambiguous,
        orphans=sum(1 for p in index.notes if p not in linked), by_type=dict(by_type.most_common()),
        by_domain=dict(by_domain.most_common()), by_folder=dict(sorted(by_folder.items())),
        issues=issues + len(index.skipped), skipped=len(index.skipped),
    )


@handles("vault.issues")
async def issues(ctx: CallContext, params: IssuesParams) -> IssuesResult:
    live = await live_index(ctx, params.vault)
    index = live.index
    found = [FileIssue(path=shown_path(s.path), code=s.code, message=s.reason) for s in index.skipped.values()]
    for path, record in index.notes.items():
        found += [FileIssue(path=path, code=i.code, message=i.message, line=i.line) for i in record.issues]
    found.sort(key=lambda i: (i.path, i.line or 0, i.code))
    start = 0
    if params.cursor:
        try:
            start = int(decode_cursor(params.cursor))
        except ValueError as exc:
            raise InvalidParams("the cursor is not one this daemon returned") from exc
    page = found[start: start + params.limit]
    more = start + params.limit < len(found)
    return IssuesResult(issues=page, total=len(found),
                        next_cursor=encode_cursor(str(start + params.limit)) if more else None)
