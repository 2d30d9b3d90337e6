"""Every file of a vault as the index knows it: its kind and media type by extension, the one file
a caller names, and how many notes and canvases embed or link it.

The index already holds each file that is not a note as its stat (:class:`~vaultd.vault.walk.FileStat`,
kept fresh by the watcher like a note); the kind is a function of the path, so nothing more is
stored per file. Notes' embeds and links to a file are in the index's link table (a link is
resolved when asked, so a file added or gone is never counted stale); a canvas's ``file`` nodes
are read from the canvas when asked (:class:`CanvasRefs`), remembered by the canvas's stat so a
listing reads a canvas again only once it changed.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Final

from protocol.limits import MAX_NOTE_BYTES
from protocol.methods.files import FileKind
from vaultd.errors import InvalidParams, NotFound
from vaultd.fsio import ReadRefused, read_regular
from vaultd.vault import json_text
from vaultd.vault.link_targets import ResolutionStatus
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from vaultd.vault.index import VaultIndex
    from vaultd.vault.walk import FileStat

#: The kinds by extension (lower case), as Obsidian tells its file types apart.
_KINDS: Final[dict[str, FileKind]] = {
    **dict.fromkeys(("png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "tif", "tiff", "ico", "heic"), FileKind.IMAGE),
    "pdf": FileKind.PDF,
    **dict.fromkeys(("mp3", "wav", "m4a", "ogg", "3gp", "flac", "aac", "opus"), FileKind.AUDIO),
    **dict.fromkeys(("mp4", "webm", "ogv", "mov", "mkv", "avi"), FileKind.VIDEO),
    "canvas": FileKind.CANVAS,
    "base": FileKind.BASE,
    **dict.fromkeys(
        (
            "txt",
            "json",
            "css",
            "csv",
            "tsv",
            "js",
            "ts",
            "py",
            "sh",
            "yaml",
            "yml",
            "toml",
            "xml",
            "html",
            "htm",
            "ini",
            "log",
            "tex",
            "bib",
        ),
        FileKind.TEXT,
    ),
}

#: Media types by extension; a kind without its own is ``application/octet-stream``.
_MIME: Final[dict[str, str]] = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "bmp": "image/bmp",
    "svg": "image/svg+xml",
    "webp": "image/webp",
    "avif": "image/avif",
    "tif": "image/tiff",
    "tiff": "image/tiff",
    "ico": "image/x-icon",
    "heic": "image/heic",
    "pdf": "application/pdf",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "m4a": "audio/mp4",
    "ogg": "audio/ogg",
    "flac": "audio/flac",
    "aac": "audio/aac",
    "opus": "audio/opus",
    "mp4": "video/mp4",
    "webm": "video/webm",
    "ogv": "video/ogg",
    "mov": "video/quicktime",
    "mkv": "video/x-matroska",
    "avi": "video/x-msvideo",
    "md": "text/markdown",
    "canvas": "application/json",
    "base": "application/yaml",
    "json": "application/json",
    "css": "text/css",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "html": "text/html",
    "htm": "text/html",
    "xml": "application/xml",
    "yaml": "application/yaml",
    "yml": "application/yaml",
}

#: Kinds read and written as UTF-8 text.
TEXT_KINDS: Final = frozenset({FileKind.NOTE, FileKind.CANVAS, FileKind.BASE, FileKind.TEXT})

MAX_CANVAS_READ: Final = MAX_NOTE_BYTES  #: a canvas larger than a note is not read for its file nodes


def extension(path: str) -> str:
    name = path.rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem else ""


def file_kind(path: str) -> FileKind:
    if is_note_path(path):
        return FileKind.NOTE
    return _KINDS.get(extension(path), FileKind.OTHER)


def mime_type(path: str) -> str:
    ext = extension(path)
    if ext in _MIME:
        return _MIME[ext]
    return "text/plain" if file_kind(path) is FileKind.TEXT else "application/octet-stream"


def find_file(index: VaultIndex, target: str, hidden: Callable[[str], bool]) -> str:
    """The vault path of the file ``target`` names: its path (a leading ``/`` or ``./`` allowed),
    or a bare file name that names one file as a link would. Strict like a note's lookup, and a
    file private to the caller is not found.

    Raises:
        NotFound: NOT_FOUND, no file the caller may see has that path or name.
        InvalidParams: INVALID_PARAMS, the target holds a NUL byte.
    """
    if "\x00" in target:
        raise InvalidParams("the target contains a NUL byte")
    wanted = target.strip().lstrip("/").removeprefix("./")
    for exact in dict.fromkeys((target, wanted)):
        if (exact in index.attachments or exact in index.notes) and not hidden(exact):
            return exact
    if "/" not in wanted:
        res = index.resolver.resolve(wanted, "")
        if res.status == ResolutionStatus.RESOLVED and res.path is not None and not hidden(res.path):
            if res.path in index.attachments or res.path in index.notes:
                return res.path
    if any(p in index.skipped and not hidden(p) for p in (target, wanted)):
        raise NotFound(f"{wanted!r} is not indexed; see 'vaultctl issues'")
    raise NotFound(f"no file {target!r}; try 'vaultctl files'")


def canvas_files(text: str) -> list[str]:
    """The vault paths a canvas's ``file`` nodes name (JSON Canvas 1.0), in node order.

    Raises:
        ValueError: the text is not JSON (or nests past the bound).
    """
    doc = json_text.load(text)
    nodes = doc.get("nodes") if isinstance(doc, dict) else None
    if not isinstance(nodes, list):
        return []
    return [n["file"] for n in nodes if isinstance(n, dict) and n.get("type") == "file" and isinstance(n.get("file"), str)]


class CanvasRefs:
    """The file nodes of a vault's canvases, each canvas read once per stat (size, mtime, inode).

    Shared by the readers of one vault (a lock guards the table); a canvas gone from the index is
    dropped at the next count, so the table never outgrows the vault's canvases."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[tuple[int, int, int], tuple[str, ...]]] = {}

    def files_of(self, root: Path, stat: FileStat) -> tuple[str, ...]:
        key = (stat.size, stat.mtime_ns, stat.ino)
        with self._lock:
            known = self._seen.get(stat.path)
        if known is not None and known[0] == key:
            return known[1]
        try:
            data, _ = read_regular(root / stat.path, MAX_CANVAS_READ)
            found = tuple(canvas_files(data.decode("utf-8")))
        except (OSError, ReadRefused, ValueError):
            found = ()
        with self._lock:
            self._seen[stat.path] = (key, found)
        return found

    def counts(self, root: Path, index: VaultIndex, visible: Callable[[str], bool]) -> dict[str, set[str]]:
        """Vault path -> the visible canvases with a file node naming it."""
        canvases = [s for p, s in list(index.attachments.items()) if file_kind(p) is FileKind.CANVAS and visible(p)]
        with self._lock:
            for gone in set(self._seen) - {s.path for s in canvases}:
                del self._seen[gone]
        named: dict[str, set[str]] = {}
        for stat in canvases:
            for path in self.files_of(root, stat):
                named.setdefault(path, set()).add(stat.path)
        return named


#: Each vault's canvases' file nodes, by the vault's folder (read again only when a canvas changes).
_CANVAS_REFS: Final[dict[str, CanvasRefs]] = {}
_CANVAS_REFS_LOCK: Final = threading.Lock()


def canvas_refs(root: Path) -> CanvasRefs:
    with _CANVAS_REFS_LOCK:
        return _CANVAS_REFS.setdefault(str(root), CanvasRefs())


def embedders(index: VaultIndex, path: str, visible: Callable[[str], bool], canvases: dict[str, set[str]]) -> set[str]:
    """The visible notes and canvases that embed or link ``path``."""
    found = {source for source, _ in index.backlinks(path) if source != path and visible(source)}
    return found | canvases.get(path, set())


def visible_files(index: VaultIndex, visible: Callable[[str], bool]) -> Iterable[tuple[str, int, int]]:
    """(path, size, mtime_ns) of every file the caller may see, notes included, in no order."""
    for path, record in list(index.notes.items()):
        if visible(path):
            yield path, record.size, record.mtime_ns
    for path, stat in list(index.attachments.items()):
        if visible(path):
            yield path, stat.size, stat.mtime_ns
