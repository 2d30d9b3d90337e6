"""A spec source's files: found by walking its folder without following a link, each read bounded.

A candidate is any ``SPEC.md`` and any Markdown file whose frontmatter has an ``id`` or a
``type``; other Markdown (a README) is not a spec. The walk opens every folder relative to its
parent's descriptor and refuses links, so nothing outside the registered folder is ever read,
whatever is renamed while it runs. Folders whose name starts with '.' (``.git``, ``.obsidian``,
``.vaultd``, ``.trash``) are not entered.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.methods.specs import MAX_SPEC_FILE_BYTES, MAX_SPEC_FILES, MAX_SPEC_FOLDER_DEPTH, MAX_SPEC_TOTAL_BYTES, EdgeKind
from vaultd.errors import InvalidParams, LimitExceeded, NotFound, ValidationFailed
from vaultd.fsio import ReadRefused, Refusal, read_regular
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from collections.abc import Callable

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
SCALAR_LINKS = (EdgeKind.PARENT, EdgeKind.SUPERSEDED_BY)
LIST_LINKS = (EdgeKind.DEPENDS_ON, EdgeKind.REFERENCES, EdgeKind.IMPLEMENTS)
_WIKI = re.compile(r"^\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^(```|~~~)")


@dataclass(slots=True)
class SpecDoc:
    source: str
    path: str  #: relative to the source's root (a file source: its name)
    text: str
    sha256: str
    meta: dict[str, Any]
    body_offset: int  #: character offset of the body

    @property
    def id(self) -> str | None:
        value = self.meta.get("id")
        return str(value) if isinstance(value, (str, int)) and str(value) else None

    def scalar(self, key: str) -> str | None:
        value = self.meta.get(key)
        return value if isinstance(value, str) and value else None

    def links(self, kind: EdgeKind) -> list[str]:
        """The ids this spec names under ``kind``: plain ids or wiki-links (label and heading dropped)."""
        raw = self.meta.get(kind.value)
        values = [raw] if kind in SCALAR_LINKS else (raw if isinstance(raw, list) else [])
        return [target for v in values if isinstance(v, str) and (target := link_target(v))]

    @property
    def body(self) -> str:
        return self.text[self.body_offset :]


def link_target(value: str) -> str:
    """The spec id a metadata link names: ``id``, ``[[id]]``, ``[[id|label]]`` or ``[[id#heading]]``."""
    value = value.strip()
    match = _WIKI.match(value)
    return (match.group(1) if match else value).strip()


@dataclass(slots=True)
class SpecSet:
    """One source's specs as read now, in path order."""

    source: str
    root: str  #: the source's canonical path
    docs: list[SpecDoc] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  #: "path: why"
    unreadable: list[tuple[str, str]] = field(default_factory=list)  #: candidates that cannot be read (path, why)

    def by_id(self) -> dict[str, SpecDoc]:
        """Each id's spec: the first in path order (a later one with the same id is a duplicate)."""
        found: dict[str, SpecDoc] = {}
        for doc in self.docs:
            if doc.id is not None:
                found.setdefault(doc.id, doc)
        return found


def headings(body: str) -> list[tuple[int, int, str]]:
    """(level, character offset, text) of each ATX heading of ``body``, outside code fences."""
    out: list[tuple[int, int, str]] = []
    offset, fenced = 0, False
    for line in body.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        if _FENCE.match(stripped):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(stripped)):
            out.append((len(match.group(1)), offset, match.group(2).strip()))
        offset += len(line)
    return out


def section(body: str, heading: str) -> str | None:
    """The text of the section under ``heading`` (any case; '#' marks optional), to the next
    heading of its level or a wider one; None when the body has no such heading."""
    wanted = heading.lstrip("#").strip().casefold()
    found = headings(body)
    for i, (level, start, text) in enumerate(found):
        if text.casefold() == wanted:
            end = next((s for lv, s, _ in found[i + 1 :] if lv <= level), len(body))
            return body[start:end]
    return None


def page(text: str, offset: int, max_bytes: int) -> tuple[str, int | None, int]:
    """One page of ``text`` from byte ``offset``, never splitting a character.

    Raises:
        InvalidParams: INVALID_PARAMS, the offset is past the end or inside a character.
    """
    data = text.encode("utf-8")
    if offset > len(data) or (offset < len(data) and (data[offset] & 0xC0) == 0x80):
        raise InvalidParams(f"offset {offset} is not the start of a character of this {len(data)}-byte body")
    end = min(len(data), offset + max_bytes)
    while end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    if end == offset < len(data):  # a page smaller than one character still moves on: by that character
        end += 1
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end += 1
    return data[offset:end].decode("utf-8"), (end if end < len(data) else None), len(data)


def read_source(source: str, root: str, hidden: Callable[[str], bool] | None = None) -> SpecSet:
    """Every spec of the source at ``root`` (a folder or one Markdown file), ``hidden`` paths left
    out as if absent (a private note of the vault, for an agent).

    Raises:
        NotFound: NOT_FOUND, the source's path is gone.
        ValidationFailed: VALIDATION, the source's path is now a link or neither a folder nor a file.
        LimitExceeded: LIMIT, the source holds more Markdown files or bytes than one read takes.
    """
    found = SpecSet(source=source, root=root)
    try:
        st = os.lstat(root)
    except FileNotFoundError as exc:
        raise NotFound(f"spec source {source!r} is gone from {root}; remove it or restore the folder") from exc
    if stat.S_ISLNK(st.st_mode):
        raise ValidationFailed(f"spec source {source!r} at {root} is now a symbolic link; vaultd does not follow it")
    if stat.S_ISREG(st.st_mode):
        parent, name = os.path.split(root)
        fd = os.open(parent, _DIR_FLAGS)
        try:
            _take(found, fd, name, name, [0])
        finally:
            os.close(fd)
        return found
    if not stat.S_ISDIR(st.st_mode):
        raise ValidationFailed(f"spec source {source!r} at {root} is neither a folder nor a file")
    fd = os.open(root, _DIR_FLAGS)
    try:
        _walk(found, fd, "", hidden, [0], [0])
    finally:
        os.close(fd)
    found.docs.sort(key=lambda d: d.path)
    return found


def _walk(
    found: SpecSet, fd: int, prefix: str, hidden: Callable[[str], bool] | None, files: list[int], total: list[int], depth: int = 0
) -> None:
    """Walk one folder (open at ``fd``, ``depth`` folders below the source's) and its folders, in
    name order; a folder deeper than :data:`MAX_SPEC_FOLDER_DEPTH` is reported, not entered, so a
    folder nested without end neither exhausts the stack nor holds a descriptor per level.

    Raises:
        LimitExceeded: LIMIT, the source holds more Markdown files than one read takes.
    """
    with os.scandir(fd) as entries:
        names = sorted((e.name, e.is_symlink(), e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False)) for e in entries)
    for name, link, folder, regular in names:
        rel = prefix + name
        if name.startswith(".") or (hidden is not None and hidden(rel)):
            continue
        if link:
            found.skipped.append(f"{rel}: a symbolic link, not followed")
            continue
        if folder:
            if depth >= MAX_SPEC_FOLDER_DEPTH:
                found.skipped.append(f"{rel}/: deeper than {MAX_SPEC_FOLDER_DEPTH} folders, not read")
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                found.skipped.append(f"{rel}/: cannot be opened ({exc.strerror})")
                continue
            try:
                _walk(found, sub, rel + "/", hidden, files, total, depth + 1)
            finally:
                os.close(sub)
        elif regular and name.lower().endswith(".md"):
            files[0] += 1
            if files[0] > MAX_SPEC_FILES:
                raise LimitExceeded(
                    f"spec source {found.source!r} holds more than {MAX_SPEC_FILES} Markdown files; register a narrower folder"
                )
            _take(found, fd, name, rel, total)


def _take(found: SpecSet, fd: int, name: str, rel: str, total: list[int]) -> None:
    """Read one Markdown file and keep it when it is a spec.

    Raises:
        LimitExceeded: LIMIT, the source's specs together are over the byte bound.
    """
    candidate_name = name == "SPEC.md"
    try:
        data, _ = read_regular(name, MAX_SPEC_FILE_BYTES, dir_fd=fd)
    except ReadRefused as exc:
        why = {Refusal.LINK: "a symbolic link, not followed", Refusal.NOT_REGULAR: "not a regular file"}.get(
            exc.refusal, f"over the {MAX_SPEC_FILE_BYTES // (1024 * 1024)} MiB bound"
        )
        (found.unreadable.append((rel, why)) if candidate_name else found.skipped.append(f"{rel}: {why}"))
        return
    except OSError as exc:
        found.skipped.append(f"{rel}: cannot be read ({exc.strerror})")
        return
    total[0] += len(data)
    if total[0] > MAX_SPEC_TOTAL_BYTES:
        raise LimitExceeded(
            f"spec source {found.source!r} is over {MAX_SPEC_TOTAL_BYTES // (1024 * 1024)} MiB of Markdown; register a narrower folder"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        (found.unreadable.append((rel, "not UTF-8")) if candidate_name else found.skipped.append(f"{rel}: not UTF-8"))
        return
    parsed = frontmatter.parse(text)
    if parsed.present and parsed.data is None:
        if candidate_name:
            found.unreadable.append((rel, "its frontmatter cannot be parsed"))
        return
    meta = parsed.data or {}
    if not candidate_name and "id" not in meta and "type" not in meta:
        return
    found.docs.append(SpecDoc(found.source, rel, text, hashlib.sha256(data).hexdigest(), meta, parsed.body_offset))
