"""Files and links as Bases sees them: the ``file.*`` fields, the file and link methods, and
how a link written in a note resolves, all read from the index (:class:`Universe`).

Only what the caller may see is in the universe, so a private note is never a field's value, a
link's target or a backlink.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from vaultd.obsidian.bases.functions import EvalError
from vaultd.obsidian.bases.values import Date, FileRef, Link, display

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vaultd.vault.model import NoteRecord
    from vaultd.vault.walk import FileStat

__all__ = ["FILE_FIELDS", "FileAccess", "Universe", "props"]

FILE_FIELDS: Final = frozenset(
    {"name", "basename", "path", "folder", "ext", "size", "ctime", "mtime", "tags", "links", "backlinks", "embeds", "properties", "file"}
)


@dataclass(slots=True)
class Universe:
    """What the evaluator may see of one vault: the visible notes and other files, how a link
    resolves, and who links to a note. Hidden files are simply absent."""

    notes: Mapping[str, NoteRecord]
    files: Mapping[str, FileStat]  #: the vault's other files (attachments, bases, canvases)
    resolve: Callable[[str, str], str | None]  #: (link target, source path) -> path, when it resolves to a visible file
    backlinks: Callable[[str], list[str]]  #: visible notes linking to a path, in path order
    ctime: Callable[[str], float | None] = lambda _path: None  #: seconds since 1970, when the disk says

    def exists(self, path: str) -> bool:
        return path in self.notes or path in self.files


def props(record: NoteRecord | None) -> dict[str, Any]:
    return (record.frontmatter or {}) if record is not None else {}


class FileAccess:
    """The file and link side of one query: resolutions are remembered for the query's length."""

    def __init__(self, universe: Universe, this: str | None) -> None:
        self.u = universe
        self.this = this
        self._link_cache: dict[tuple[str, str], str | None] = {}

    def resolve(self, target: str, source: str) -> str | None:
        key = (target, source)
        if key not in self._link_cache:
            self._link_cache[key] = self.u.resolve(target, source)
        return self._link_cache[key]

    def target_text(self, text: str) -> tuple[str, str | None]:
        text = text.strip()
        if text.startswith("[[") and text.endswith("]]"):
            inner = text[2:-2]
            target, _bar, label = inner.partition("|")
            return target.partition("#")[0], label or None
        return text, None

    def make_link(self, source: str, value: Any, label: Any, pos: int) -> Link | None:
        shown = None if label is None else display(label)
        if value is None:
            return None
        if isinstance(value, FileRef):
            return Link(value.path.removesuffix(".md"), value.path, shown)
        if isinstance(value, Link):
            return Link(value.target, value.path, shown or value.label)
        if not isinstance(value, str):
            raise EvalError(f"link() needs a path, not a {type(value).__name__}", pos)
        target, written_label = self.target_text(value)
        path = target if self.u.exists(target) else self.resolve(target, self.this or source)
        return Link(target, path, shown or written_label)

    def make_file(self, source: str, value: Any) -> FileRef | None:
        if isinstance(value, FileRef):
            return value
        if isinstance(value, Link):
            return FileRef(value.path) if value.path is not None else None
        if isinstance(value, str):
            target, _label = self.target_text(value)
            if self.u.exists(target):
                return FileRef(target)
            path = self.resolve(target, self.this or source)
            return FileRef(path) if path is not None else None
        return None

    def _links(self, record: NoteRecord | None, source: str, embeds: bool) -> list[Link]:
        if record is None:
            return []
        out: list[Link] = []
        for link in record.links:
            if (link.kind == "embed") != embeds or not link.target:
                continue
            path = self.resolve(link.target, source)
            out.append(Link(link.target, path, None))
        return out

    def field(self, path: str, name: str, record: NoteRecord | None = None) -> Any:
        record = record if record is not None else self.u.notes.get(path)
        stat = self.u.files.get(path)
        if record is None and stat is None:
            return None
        filename = path.rpartition("/")[2]
        if name == "name":
            return filename
        if name == "path":
            return path
        if name == "basename":
            stem, dot, _ext = filename.rpartition(".")
            return stem if dot else filename
        if name == "ext":
            _stem, dot, ext = filename.rpartition(".")
            return ext if dot else ""
        if name == "folder":
            return path.rpartition("/")[0] or "/"
        if name == "size":
            return record.size if record is not None else stat.size  # type: ignore[union-attr]
        if name == "mtime":
            ns = record.mtime_ns if record is not None else stat.mtime_ns  # type: ignore[union-attr]
            return Date(dt.datetime.fromtimestamp(ns / 1e9), True)
        if name == "ctime":
            seconds = self.u.ctime(path)
            if seconds is None:
                return self.field(path, "mtime", record)
            return Date(dt.datetime.fromtimestamp(seconds), True)
        if name == "properties":
            return dict(props(record))
        if name == "tags":
            seen: dict[str, None] = {}
            for tag in record.tags if record is not None else ():
                seen.setdefault("#" + tag.name, None)
            return list(seen)
        if name == "links":
            return self._links(record, path, embeds=False)
        if name == "embeds":
            return self._links(record, path, embeds=True)
        if name == "backlinks":
            return [Link(p.removesuffix(".md"), p, None) for p in self.u.backlinks(path)]
        if name == "file":
            return FileRef(path)
        raise EvalError(f"file.{name} is not a file field")

    def method(self, path: str, name: str, args: list[Any]) -> Any:
        record = self.u.notes.get(path)
        if name == "hasTag":
            wanted = [display(a).lstrip("#").casefold() for a in args if a is not None]
            tags = {t.name.casefold() for t in record.tags} if record is not None else set()
            return any(t == w or t.startswith(w + "/") for w in wanted for t in tags)
        if name == "hasProperty":
            if len(args) != 1:
                raise EvalError("hasProperty() takes 1 argument")
            return display(args[0]) in props(record)
        if name == "inFolder":
            if len(args) != 1:
                raise EvalError("inFolder() takes 1 argument")
            folder = display(args[0]).strip("/")
            return folder == "" or path.startswith(folder + "/")
        if name == "hasLink":
            if len(args) != 1:
                raise EvalError("hasLink() takes 1 argument")
            target = args[0]
            if isinstance(target, FileRef):
                wanted_path: str | None = target.path
            elif isinstance(target, Link):
                wanted_path = target.path
            elif isinstance(target, str):
                text, _label = self.target_text(target)
                wanted_path = text if self.u.exists(text) else self.resolve(text, path)
            else:
                return False
            if wanted_path is None or record is None:
                return False
            return any(link.target and self.resolve(link.target, path) == wanted_path for link in record.links)
        if name == "asLink":
            if len(args) > 1:
                raise EvalError("asLink() takes 0 to 1 arguments")
            return Link(path.removesuffix(".md"), path, display(args[0]) if args and args[0] is not None else None)
        raise EvalError(f"{name}() is not a method of a file")

    def link_method(self, link: Link, name: str, args: list[Any]) -> Any:
        if name == "asFile":
            if args:
                raise EvalError("asFile() takes no arguments")
            return FileRef(link.path) if link.path is not None else None
        if name == "linksTo":
            if len(args) != 1:
                raise EvalError("linksTo() takes 1 argument")
            other = args[0]
            target = other.path if isinstance(other, FileRef | Link) else None
            if isinstance(other, str):
                text, _label = self.target_text(other)
                target = text if self.u.exists(text) else self.resolve(text, link.path or "")
            return target is not None and link.path == target
        raise EvalError(f"{name}() is not a method of a link")
