"""``file.list`` and ``file.read``: any file of a vault, as the caller may see it.

Both answer from the live index (a file's stat is there, kept fresh by the watcher) and read the
disk only for what they return: a page of one file, and the ``file`` nodes of canvases that
changed since last asked. A binary file is read by its byte range (``pread`` on the open
descriptor), so a 200 MB video costs the page asked for, never the whole file. Private paths do
not exist for the caller: never listed, never read, never counted among a file's embedders.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import os
from typing import TYPE_CHECKING

import anyio

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.limits import DEFAULT_READ_PAGE_BYTES, MAX_NOTE_BYTES, MAX_READ_PAGE_BYTES, MAX_REPORT_BYTES, describe
from protocol.methods import files
from protocol.methods.common import Channel
from protocol.methods.files import (
    DEFAULT_FILE_BYTES_PAGE,
    FileEncoding,
    FileKind,
    FileListParams,
    FileListResult,
    FileReadParams,
    FileReadResult,
    FileSummary,
)
from protocol.methods.gate import Gate
from protocol.methods.reports import in_reports
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import decode_cursor, encode_cursor, live_view, log_path_of, utf8_page
from vaultd.errors import InvalidParams, NotFound, PolicyRefused
from vaultd.fsio import ReadRefused, opened_regular, read_bounded
from vaultd.policy.glob_match import GlobSet
from vaultd.vault.files import TEXT_KINDS, canvas_refs, embedders, file_kind, find_file, mime_type, visible_files

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import VaultIndex


def embedded_counts(root: Path, index: VaultIndex, view: Visibility, paths: list[str]) -> dict[str, int]:
    """How many visible notes and canvases embed or link each of ``paths`` (a worker thread, with
    the index held still: it reads canvases from the disk and walks the index's maps)."""
    named = canvas_refs(root).counts(root, index, view.visible)
    return {p: len(embedders(index, p, view.visible, named)) for p in paths}


Selected = tuple[list[tuple[str, int, int]], int, dict[str, int]]


def _selected(root: Path, index: VaultIndex, view: Visibility, params: FileListParams) -> Selected:
    """The files ``params`` selects (path, size, mtime) in path order, where the page starts, and
    the embed counts of the page's files (for ``orphaned``, of every candidate's)."""
    folder = (params.folder or "").strip("/")
    globs = GlobSet([params.glob]) if params.glob else None
    found = sorted(
        (path, size, mtime)
        for path, size, mtime in visible_files(index, view.visible)
        if (not folder or path.startswith(folder + "/"))
        and (params.kind is None or file_kind(path) is params.kind)
        and (globs is None or globs.matches(path))
        and not (params.orphaned and file_kind(path) is FileKind.NOTE)
    )
    if params.orphaned:
        counts = embedded_counts(root, index, view, [p for p, _, _ in found])
        found = [f for f in found if counts[f[0]] == 0]
    start = bisect.bisect_right([p for p, _, _ in found], decode_cursor(params.cursor)) if params.cursor else 0
    if not params.orphaned:
        counts = embedded_counts(root, index, view, [p for p, _, _ in found[start : start + params.limit]])
    return found, start, counts


@handles(files.LIST)
async def list_files(ctx: CallContext, params: FileListParams) -> FileListResult:
    """Files in path order, filtered by kind, folder, glob and being embedded by none.

    Raises:
        InvalidParams: INVALID_PARAMS, the cursor is not one this daemon returned.
    """
    live, view = await live_view(ctx, params.vault, params.fresh)
    if params.cursor:
        decode_cursor(params.cursor)  # a cursor this daemon did not make is refused before any work
    async with live.held_still() as index:
        found, start, counts = await anyio.to_thread.run_sync(_selected, live.root, index, view, params)
    page = found[start : start + params.limit]
    summaries = [FileSummary(path=p, kind=file_kind(p), size=size, mtime_ns=mtime, embedded_by=counts[p]) for p, size, mtime in page]
    more = start + params.limit < len(found)
    return FileListResult(files=summaries, total=len(found), next_cursor=encode_cursor(page[-1][0]) if more and page else None)


def check_file_read(ctx: CallContext, vault: str | None, path: str) -> None:
    """An agent reads a file that is not a note only where the vault's policy lets it.

    Raises:
        PolicyRefused: POLICY (G02), the vault's ``file_read`` is not ``apply``.
    """
    if ctx.channel is not Channel.MCP or file_kind(path) is FileKind.NOTE:
        return
    entry = ctx.host.vault(vault).entry
    gate = entry.agent_policy().file_read
    if gate is not Gate.APPLY:
        message = (
            f"refused: agents may not read files that are not notes in vault '{entry.id}' "
            f"(its policy says file_read: {gate.value}); ask your user"
        )
        raise PolicyRefused(message, issues=[Issue(code=IssueCode.G02, message=message)])


def _read_page(
    root: str, path: str, kind: FileKind, offset: int, max_bytes: int | None
) -> tuple[FileEncoding, str, int, int, str | None, int | None]:
    """(encoding, content, size, mtime_ns, sha256 or None, next offset) of one page of ``path``.

    A text kind within the note bound (a report within a report's) is read whole (its sha256 covers
    it) and paged as text; any other file, or a text file past its bound or not UTF-8, is paged by
    bytes read at ``offset``.

    Raises:
        NotFound: NOT_FOUND, the file is gone or no longer a regular file.
        InvalidParams: INVALID_PARAMS, the offset is past the end (or inside a character of text),
            or a text page was asked larger than a text page may be.
    """
    try:
        with opened_regular(os.path.join(root, path)) as (fd, st):
            text_bound = MAX_REPORT_BYTES if in_reports(path) and kind is FileKind.NOTE else MAX_NOTE_BYTES
            if kind in TEXT_KINDS and st.st_size <= text_bound:
                try:
                    raw = read_bounded(fd, st, text_bound)
                    text = raw.decode("utf-8")
                except (ReadRefused, UnicodeDecodeError):
                    pass  # grew past the bound while read, or not text after all: paged by bytes below
                else:
                    want = DEFAULT_READ_PAGE_BYTES if max_bytes is None else max_bytes
                    if want > MAX_READ_PAGE_BYTES:
                        raise InvalidParams(f"max_bytes of text may be at most {describe(MAX_READ_PAGE_BYTES)}")
                    content, nxt = utf8_page(text, offset, want)
                    return FileEncoding.TEXT, content, len(raw), st.st_mtime_ns, hashlib.sha256(raw).hexdigest(), nxt
            size = st.st_size
            if offset > size:
                raise InvalidParams(f"offset {offset} is past the end ({size} bytes)")
            want = min(DEFAULT_FILE_BYTES_PAGE if max_bytes is None else max_bytes, size - offset)
            chunks, got = [], 0
            while got < want:
                chunk = os.pread(fd, want - got, offset + got)
                if not chunk:
                    break  # shrank while read: what is there is the page
                chunks.append(chunk)
                got += len(chunk)
            data = b"".join(chunks)
            end = offset + len(data)
            whole = offset == 0 and end >= size
            sha = hashlib.sha256(data).hexdigest() if whole else None
            return FileEncoding.BASE64, base64.b64encode(data).decode("ascii"), size, st.st_mtime_ns, sha, (end if end < size else None)
    except (FileNotFoundError, ReadRefused) as exc:
        raise NotFound(f"{path} is no longer a regular file; list the files again") from exc


def _large_report(index: VaultIndex, target: str, hidden: Callable[[str], bool]) -> str | None:
    """The path of a report past the note bound that ``target`` names: the index leaves it out as a
    note (S01), yet it is within a report's bound, so it is read a page at a time like any file."""
    wanted = target.strip().lstrip("/").removeprefix("./")
    skipped = index.skipped.get(wanted)
    if skipped is None or skipped.code != IssueCode.S01 or not in_reports(wanted) or hidden(wanted):
        return None
    return wanted


@handles(files.READ)
async def read_file(ctx: CallContext, params: FileReadParams) -> FileReadResult:
    """One page of any file the caller may see: text as text, anything else as base64 bytes.

    Raises:
        PolicyRefused: POLICY, the path is vaultd's operation log for a caller that cannot see every
            note, or the vault's policy keeps agents from reading files.
    """
    live, view = await live_view(ctx, params.vault, params.fresh)
    path = _large_report(live.index, params.target, view.hidden) or find_file(live.index, params.target, view.hidden)
    if path == log_path_of(ctx, params.vault) and view.hides_anything:
        raise PolicyRefused(f"{path} is vaultd's operation log; read its lines with log_read (view tail or grep)")
    check_file_read(ctx, params.vault, path)
    kind = file_kind(path)
    encoding, content, size, mtime, sha, nxt = await anyio.to_thread.run_sync(
        _read_page, str(live.root), path, kind, params.offset, params.max_bytes
    )
    async with live.held_still() as index:
        counts = await anyio.to_thread.run_sync(embedded_counts, live.root, index, view, [path])
    return FileReadResult(
        path=path,
        kind=kind,
        mime=mime_type(path),
        size=size,
        mtime_ns=mtime,
        sha256=sha,
        encoding=encoding,
        content=content,
        offset=params.offset,
        truncated=nxt is not None,
        next_offset=nxt,
        embedded_by=counts[path],
    )
