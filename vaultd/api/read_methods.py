"""The read methods. All answer from the in-memory index (search from the FTS cache) and never
write a note; ``note.read`` re-reads the file so the body and its hash are the bytes on disk.

Every handler sees the vault through the caller's :class:`~vaultd.policy.visibility.Visibility`
(from :func:`live_view`): a note private to the caller's channel is absent from every answer,
as a result, a candidate, a backlink, a suggestion or a count.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections import Counter
from typing import TYPE_CHECKING

import anyio

from protocol.limits import MAX_NOTE_BYTES, describe
from protocol.methods import reads
from protocol.methods.reads import (
    FileIssue,
    IssuesParams,
    IssuesResult,
    ListParams,
    ListResult,
    NoteSummary,
    ReadFailure,
    ReadManyItem,
    ReadManyParams,
    ReadManyResult,
    ReadParams,
    ReadResult,
    TagCount,
    TagsParams,
    TagsResult,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import Ambiguous, InvalidParams, LimitExceeded, NotFound, PolicyRefused, VaultError
from vaultd.fsio import ReadRefused, Refusal, read_regular
from vaultd.obsidian.property_types import index_types, typed_properties
from vaultd.obsidian.settings import excluded, read_settings
from vaultd.policy.visibility import Visibility
from vaultd.vault import frontmatter, markdown, oplog
from vaultd.vault.lookup import exact_path, find_note
from vaultd.vault.note import Skipped, parse_note
from vaultd.vault.note_table import IssuesOf, TagsOf
from vaultd.vault.walk import shown_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vaultd.vault.index import VaultIndex
    from vaultd.vault.model import NoteRecord
    from vaultd.vault.watcher import LiveIndex

MAX_OUTLINE = 64


async def live_index(ctx: CallContext, vault: str | None, fresh: bool = False) -> LiveIndex:
    runtime = ctx.host.vault(vault)
    await runtime.wait_ready()
    assert runtime.live is not None
    if fresh:
        await runtime.live.barrier()
    return runtime.live


async def live_view(ctx: CallContext, vault: str | None, fresh: bool = False) -> tuple[LiveIndex, Visibility]:
    """The vault's live index and what this caller may see of it."""
    live = await live_index(ctx, vault, fresh)
    return live, Visibility.of(ctx.host.vault(vault).entry, ctx.channel)


async def table_view(ctx: CallContext, vault: str | None, fresh: bool = False) -> tuple[LiveIndex, VaultIndex, Visibility]:
    """The index a read of notes by path alone answers from, and what this caller may see of it.

    A starting daemon's index answers such reads once its note table is whole, before its name
    maps are (``VaultRuntime.wait_table``): the table then holds every note on disk, a note
    changed while the daemon was down read again. A fresh read waits for the whole index and
    its barrier, as every fresh read does.
    """
    if fresh:
        live, view = await live_view(ctx, vault, fresh)
        return live, live.index, view
    runtime = ctx.host.vault(vault)
    index = await runtime.wait_table()
    assert runtime.live is not None
    return runtime.live, index, Visibility.of(runtime.entry, ctx.channel)


def log_path_of(ctx: CallContext, vault: str | None) -> str:
    """The vault's operation log: a file of the vault that the reads about the user's notes leave out."""
    return oplog.log_name(ctx.host.vault(vault).entry)


async def obsidian_shown(root: Path, include_excluded: bool) -> Callable[[str], bool]:
    """Whether a note is shown in a search or a listing: Obsidian's Excluded files
    (``userIgnoreFilters``) are indexed, so links to them resolve, but left out of what a search
    or a listing answers unless the caller asks for them, as Obsidian's search leaves them out."""
    if include_excluded:
        return lambda path: True
    settings = await anyio.to_thread.run_sync(read_settings, root)
    filters = settings.app.ignore_filters
    return lambda path: not excluded(filters, path)


def _scalar(record: NoteRecord, key: str) -> str | None:
    value = (record.frontmatter or {}).get(key)
    return value if isinstance(value, str) else None


def note_bytes(root: str, path: str, log_path: str) -> bytes:
    """A note's bytes, whole or refused: never a first part passed off as the note (with its
    size and sha) when the file grew past the note bound since it was indexed, nor for vaultd's
    log, which is indexed at any length.

    Raises:
        NotFound: NOT_FOUND, the path is no longer a regular file.
        LimitExceeded: LIMIT, the file is over the note bound (the log: read it by lines instead).
    """
    try:
        raw, _ = read_regular(os.path.join(root, path), MAX_NOTE_BYTES)
    except ReadRefused as exc:
        if exc.refusal is not Refusal.TOO_BIG:
            raise NotFound(f"{path} is no longer a regular file; search again") from exc
        size = f" ({exc.size} bytes)" if exc.size is not None else ""
        lines = "; read its lines with log.tail or log.grep" if path == log_path else ""
        raise LimitExceeded(f"{path} is over the {describe(MAX_NOTE_BYTES)} a note read returns{size}{lines}") from exc
    return raw


@handles(reads.READ)
async def read(ctx: CallContext, params: ReadParams) -> ReadResult:
    """A note now, or at a revision; vaultd's log is read by its lines only, which leave private
    notes out.

    Raises:
        PolicyRefused: POLICY, the path is vaultd's operation log.
        NotFound: NOT_FOUND, the note was removed since it was indexed.
    """
    if params.at is not None:
        return await _read_at(ctx, params, params.at)
    live, index, view = await table_view(ctx, params.vault, params.fresh)
    path = exact_path(index.notes, params.target, view.hidden)
    if path is None:  # a name or an alias: the name maps resolve it, whole once the index is ready
        live, view = await live_view(ctx, params.vault, params.fresh)
        index = live.index
        path = find_note(index, params.target, view.hidden)
    log_path = log_path_of(ctx, params.vault)
    if path == log_path and view.hides_anything:
        # The log's lines name private notes; log.tail and log.grep leave those lines out, a
        # read of the file whole cannot.
        raise PolicyRefused(f"{path} is vaultd's operation log; read its lines with log_read (view tail or grep)")
    try:
        raw = await anyio.to_thread.run_sync(note_bytes, str(live.root), path, log_path)
    except FileNotFoundError as exc:
        raise NotFound(f"{path} was removed; search again") from exc
    result = read_result(path, raw, params, index.notes.get(path))
    if result.frontmatter:
        vault_types = index_types(index, live.root, view.hidden if view.hides_anything else None)
        result.property_types = {k: str(t) for k, t in typed_properties(result.frontmatter, vault_types).items()}
    return result


_PER_NOTE = (NotFound, Ambiguous, PolicyRefused, LimitExceeded, InvalidParams)  #: what one note's read may fail with alone


@handles(reads.READ_MANY)
async def read_many(ctx: CallContext, params: ReadManyParams) -> ReadManyResult:
    """Each target read as ``note.read`` reads it (its first page of ``max_bytes``), in order; a
    target that names no note, or several, or one too large is that item's error only.

    Raises:
        NotFound: NOT_FOUND, the vault does not exist (no note is read then).
    """
    await live_view(ctx, params.vault, params.fresh)  # the vault exists, and the barrier once for all
    items: list[ReadManyItem] = []
    for target in params.targets:
        one = ReadParams(target=target, vault=params.vault, max_bytes=params.max_bytes)
        try:
            items.append(ReadManyItem(target=target, note=await read(ctx, one)))
        except _PER_NOTE as exc:
            items.append(ReadManyItem(target=target, error=_failure(exc)))
    return ReadManyResult(notes=items)


def _failure(exc: VaultError) -> ReadFailure:
    return ReadFailure(code=exc.code, message=exc.message, candidates=exc.candidates)


async def history_path(ctx: CallContext, vault: str | None, target: str) -> str:
    """The note a read of the past is about: a current note by path, name or alias, else a path
    the note had (a deleted or renamed note still has history); never one private to the caller."""
    live, view = await live_view(ctx, vault)
    try:
        return find_note(live.index, target, view.hidden)
    except NotFound:
        from vaultd.ops.create import note_path  # the writes' rule, loaded with the first read of the past

        path = note_path(target)
        if view.hidden(path):
            raise
        return path


async def _read_at(ctx: CallContext, params: ReadParams, rev: str) -> ReadResult:
    """The note as it was at a git revision, renames followed.

    Raises:
        NotFound: NOT_FOUND, the note was private to the caller at that revision.
    """
    from vaultd.git import history  # git's reader, loaded with the first read of the past
    from vaultd.git.repo import require

    runtime = ctx.host.vault(params.vault)
    path = await history_path(ctx, params.vault, params.target)
    repo = await anyio.to_thread.run_sync(require, runtime.root, runtime.entry.id)
    version = await anyio.to_thread.run_sync(history.at, repo, path, rev)
    if Visibility.of(runtime.entry, ctx.channel).hidden(version.path):
        raise NotFound(f"{path} did not exist at {rev}")
    raw = version.data or b""
    try:
        record = parse_note(version.path, raw, size=len(raw), mtime_ns=0, ino=0)[0]
    except Skipped:
        record = None
    return read_result(version.path, raw, params, record)


def read_result(path: str, raw: bytes, params: ReadParams, record: NoteRecord | None) -> ReadResult:
    """A page of ``raw`` (a note's bytes now, or at a revision) as ``note.read`` answers it.

    Raises:
        NotFound: NOT_FOUND, the note has no H2 section of that name (the message lists those it
            has).
        Ambiguous: AMBIGUOUS, more than one H2 section has that name.
    """
    text = raw.decode("utf-8", "replace")
    fm = frontmatter.parse(text)
    selected = text[fm.body_offset :]
    if params.section is not None:
        spans = markdown.section_spans(text, fm.body_offset, params.section)
        if not spans:
            names = [h.text for h in (record.headings if record else []) if h.level == 2]
            raise NotFound(f"no H2 section {params.section!r} in {path}; sections: {', '.join(names) or 'none'}")
        if len(spans) > 1:
            raise Ambiguous(f"{path} has {len(spans)} H2 sections named {params.section!r}")
        selected = text[spans[0][0] : spans[0][1]]
    body, next_offset = utf8_page(selected, params.offset, params.max_bytes)
    outline = [h.text for h in (record.headings if record else []) if h.level <= 3][:MAX_OUTLINE]
    return ReadResult(
        path=path,
        title=record.title if record else path,
        frontmatter=fm.data,
        body=body,
        sha256=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        section=params.section,
        offset=params.offset,
        truncated=next_offset is not None,
        next_offset=next_offset,
        headings=outline,
    )


@handles(reads.LIST)
async def list_notes(ctx: CallContext, params: ListParams) -> ListResult:
    live, index, view = await table_view(ctx, params.vault, params.fresh)
    prefix = (params.folder or "").lstrip("/")
    shown_here = await obsidian_shown(live.root, params.include_excluded)
    log_path = log_path_of(ctx, params.vault)  # vaultd's log is no note of the user's, as in search, tags and stats
    paths = sorted(p for p in index.notes if p.startswith(prefix) and p != log_path and view.visible(p) and shown_here(p))
    after = decode_cursor(params.cursor) if params.cursor else None
    start = 0
    if after is not None:
        import bisect

        start = bisect.bisect_right(paths, after)
    page = paths[start : start + params.limit]
    notes = [
        NoteSummary(
            path=p,
            title=index.notes[p].title,
            type=_scalar(index.notes[p], "type"),
            size=index.notes[p].size,
            tags=sorted({t.name for t in index.notes[p].tags}),
        )
        for p in page
    ]
    more = start + params.limit < len(paths)
    return ListResult(notes=notes, total=len(paths), next_cursor=encode_cursor(page[-1]) if more and page else None)


@handles(reads.TAGS)
async def tags(ctx: CallContext, params: TagsParams) -> TagsResult:
    live, view = await live_view(ctx, params.vault)
    counts: Counter[str] = Counter()
    spelled: dict[str, str] = {}
    log_path = log_path_of(ctx, params.vault)  # a log from before the header is parsed as a note
    for path, record in live.index.notes.fields(TagsOf):
        if view.hidden(path) or path == log_path:
            continue
        seen = set()
        for tag in record.tags:
            key = tag.name.casefold()
            spelled.setdefault(key, tag.name)
            seen.add(key)
        counts.update(seen)
    prefix = (params.prefix or "").lstrip("#").casefold()
    rows = sorted(((spelled[k], n) for k, n in counts.items() if k.startswith(prefix)), key=lambda r: (-r[1], r[0]))
    return TagsResult(tags=[TagCount(tag=t, notes=n) for t, n in rows[: params.limit]], truncated=len(rows) > params.limit)


@handles(reads.ISSUES)
async def issues(ctx: CallContext, params: IssuesParams) -> IssuesResult:
    """The files the index skipped and the notes whose frontmatter has issues, paged by an opaque
    cursor; the caller's private paths and vaultd's log left out.

    Raises:
        InvalidParams: INVALID_PARAMS, the cursor is not one this daemon returned.
    """
    live, view = await live_view(ctx, params.vault)
    index = live.index
    log_path = log_path_of(ctx, params.vault)
    # vaultd's own log is left out: its lines are events, not the user's writing to lint
    found = [
        FileIssue(path=shown_path(s.path), code=s.code, message=s.reason)
        for s in index.skipped.values()
        if view.visible(s.path) and s.path != log_path
    ]
    for path, record in index.notes.fields(IssuesOf):
        if view.hidden(path) or path == log_path:
            continue
        found += [FileIssue(path=path, code=i.code, message=i.message, line=i.line) for i in record.issues]
    found.sort(key=lambda i: (i.path, i.line or 0, i.code))
    start = 0
    if params.cursor:
        try:
            start = int(decode_cursor(params.cursor))
        except ValueError as exc:
            raise InvalidParams("the cursor is not one this daemon returned") from exc
    page = found[start : start + params.limit]
    more = start + params.limit < len(found)
    return IssuesResult(issues=page, total=len(found), next_cursor=encode_cursor(str(start + params.limit)) if more else None)


# Byte paging of note text: UTF-8 offsets that never split a character, and opaque cursors.


def utf8_page(text: str, offset: int, max_bytes: int) -> tuple[str, int | None]:
    """The piece of ``text`` starting at byte ``offset``, at most ``max_bytes`` long, and the
    next offset (None at the end). An offset inside a character, or a budget too small for the
    next character, is refused rather than silently moved.

    Raises:
        InvalidParams: INVALID_PARAMS, the offset is past the end or inside a character, or the
            budget is smaller than the next character.
    """
    data = text.encode("utf-8")
    if offset > len(data):
        raise InvalidParams(f"offset {offset} is past the end ({len(data)} bytes)")
    if offset < len(data) and (data[offset] & 0xC0) == 0x80:
        raise InvalidParams(f"offset {offset} is inside a UTF-8 character; use a next_offset value")
    end = min(len(data), offset + max_bytes)
    while end < len(data) and end > offset and (data[end] & 0xC0) == 0x80:
        end -= 1
    if end == offset and offset < len(data):
        raise InvalidParams(f"max_bytes {max_bytes} is smaller than the character at offset {offset}")
    return data[offset:end].decode("utf-8"), (end if end < len(data) else None)


def encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The text a cursor encodes (URL-safe base64, unpadded), refusing one this daemon did not make.

    Raises:
        InvalidParams: INVALID_PARAMS, it is not base64 of UTF-8 text.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return base64.b64decode(padded, altchars=b"-_", validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:  # binascii.Error is a ValueError
        raise InvalidParams("the cursor is not one this daemon returned") from exc
