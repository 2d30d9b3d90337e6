"""Memory entries: found in Claude Code's memory folders or in a Markdown list, each with a stable id.

Two shapes are read:

- a **memory file** (a Markdown file in a folder named ``memory``, other than ``MEMORY.md``): one
  entry, titled by its frontmatter ``name``, else its first H1, else its file name;
- a **list** (``MEMORY.md``, or any other Markdown file): each top-level list item is an entry,
  its continuation lines with it. An item that only points at a memory file beside it (Claude
  Code's index line ``- [Title](file.md) — hook``) is that file's entry, not a second one.

An entry's id is ``mem-`` and 16 hex digits of the SHA-256 of its text (line endings and Unicode
form normalised, outer blank space dropped): the same text is the same entry on every run and in
every file, and a changed entry is a new one. Reads are bounded in files, bytes and entries, never
follow a link, and an entry that looks like it holds a secret is left out (and counted).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from protocol.methods.memory import MAX_MEMORY_ENTRIES, MAX_MEMORY_FILE_BYTES, MAX_MEMORY_FILES
from vaultd.errors import InvalidParams, NotFound
from vaultd.fsio import ReadRefused, Refusal, read_regular
from vaultd.policy.secrets import scan_secrets
from vaultd.vault import frontmatter

INDEX_NAME = "MEMORY.md"
MEMORY_FOLDER = "memory"
MAX_TITLE = 80
MAX_EXCERPT = 200
_ITEM = re.compile(r"^(?:[-*+]|\d{1,3}[.)])[ \t]+(.*)$")
_LINK_ONLY = re.compile(r"^\[([^\]]+)\]\(([^)\s]+\.md)\)\s*(?:[—:-]+\s*(.*))?$")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WIKI = re.compile(r"\[\[([^\]|]*\|)?([^\]]*)\]\]")
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


@dataclass(slots=True)
class Entry:
    id: str
    title: str
    text: str  #: the entry's Markdown, as it is in memory
    origin: str  #: the file, with '~' for the home folder
    kind: str  #: claude-memory, claude-index or list


@dataclass(slots=True)
class Found:
    entries: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    truncated: bool = False


def entry_id(text: str) -> str:
    normal = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    return "mem-" + hashlib.sha256(normal.encode("utf-8")).hexdigest()[:16]


def plain(text: str) -> str:
    """One line of ``text`` without link and emphasis marks, for a title."""
    text = _WIKI.sub(lambda m: m.group(2), _MD_LINK.sub(lambda m: m.group(1), text))
    return " ".join(text.replace("**", "").replace("__", "").replace("`", "").split())


def title_of(text: str) -> str:
    """A title from an entry's first line: up to its first sentence or dash, at most 80 characters."""
    first = plain(text.strip().split("\n", 1)[0])
    for mark in (" — ", " – ", " - ", ": ", ". "):
        cut = first.find(mark)
        if 0 < cut <= MAX_TITLE:
            first = first[:cut]
            break
    if len(first) > MAX_TITLE:
        first = first[:MAX_TITLE].rsplit(" ", 1)[0]
    return first.strip(" .:-—") or "Memory entry"


def shown(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text == home or text.startswith(home + "/") else text


def default_files() -> tuple[list[Path], list[str]]:
    """Claude Code's memory files: ``~/.claude/projects/*/memory/*.md``, links not followed."""
    projects = Path.home() / ".claude" / "projects"
    files: list[Path] = []
    skipped: list[str] = []
    try:
        entries = sorted(os.scandir(projects), key=lambda e: e.name)
    except OSError:
        return files, skipped
    for project in entries:
        if project.is_symlink() or not project.is_dir(follow_symlinks=False):
            continue
        memory = Path(project.path) / MEMORY_FOLDER
        try:
            if not stat.S_ISDIR(os.lstat(memory).st_mode):
                continue
        except OSError:
            continue
        found, why = _markdown_in(memory)
        files += found
        skipped += why
    return files, skipped


def _markdown_in(folder: Path) -> tuple[list[Path], list[str]]:
    out: list[Path] = []
    skipped: list[str] = []
    with os.scandir(folder) as it:
        for e in sorted(it, key=lambda e: e.name):
            if not e.name.lower().endswith(".md") or e.name.startswith("."):
                continue
            if e.is_symlink():
                skipped.append(f"{shown(Path(e.path))}: a symbolic link, not followed")
            elif e.is_file(follow_symlinks=False):
                out.append(Path(e.path))
    return out, skipped


def files_at(raw: str) -> tuple[list[Path], list[str]]:
    """The memory files at a path a person named: one file, or a folder's Markdown files.

    Raises:
        InvalidParams: INVALID_PARAMS, the path is relative or holds a NUL byte.
        NotFound: NOT_FOUND, nothing is there, or it is a link.
    """
    if "\x00" in raw or not os.path.isabs(raw):
        raise InvalidParams(f"a memory path must be absolute: {raw!r}")
    path = Path(raw)
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise NotFound(f"nothing at {raw}") from exc
    if stat.S_ISDIR(st.st_mode):
        return _markdown_in(path)
    if stat.S_ISREG(st.st_mode):
        return [path], []
    raise NotFound(f"{raw} is not a Markdown file or a folder (links are not followed)")


def read_entries(files: list[Path], skipped: list[str]) -> Found:
    """Every entry of ``files``, in file order, within the bounds."""
    found = Found(skipped=list(skipped))
    if len(files) > MAX_MEMORY_FILES:
        found.skipped.append(f"{len(files) - MAX_MEMORY_FILES} more files past the {MAX_MEMORY_FILES}-file bound")
        found.truncated = True
        files = files[:MAX_MEMORY_FILES]
    secrets = 0
    for path in files:
        try:
            data, _ = read_regular(path, MAX_MEMORY_FILE_BYTES)
            text = data.decode("utf-8")
        except ReadRefused as exc:
            why = "a symbolic link, not followed" if exc.refusal is Refusal.LINK else f"over {MAX_MEMORY_FILE_BYTES // 1024} KiB"
            found.skipped.append(f"{shown(path)}: {why}")
            continue
        except (OSError, UnicodeDecodeError):
            found.skipped.append(f"{shown(path)}: cannot be read as UTF-8 text")
            continue
        for entry in _entries_of(path, text):
            if scan_secrets(entry.text):
                secrets += 1
                continue
            if len(found.entries) >= MAX_MEMORY_ENTRIES:
                found.truncated = True
                break
            found.entries.append(entry)
    if secrets:
        found.skipped.append(f"{secrets} entries look like they hold a secret; left out")
    return found


def _entries_of(path: Path, text: str) -> list[Entry]:
    parsed = frontmatter.parse(text)
    body = text[parsed.body_offset :]
    if path.parent.name == MEMORY_FOLDER and path.name != INDEX_NAME:
        meta = parsed.data or {}
        name = meta.get("name")
        heading = _H1.search(body)
        title = (
            name
            if isinstance(name, str) and name.strip()
            else heading.group(1)
            if heading
            else path.stem.replace("-", " ").replace("_", " ")
        )
        return (
            [Entry(entry_id(text), plain(title)[:200] or "Memory entry", body.strip(), shown(path), "claude-memory")]
            if body.strip()
            else []
        )
    kind = "claude-index" if path.name == INDEX_NAME else "list"
    out: list[Entry] = []
    for item in _items(body):
        link = _LINK_ONLY.match(item)
        if link is not None and "\n" not in item and (path.parent / link.group(2)).name == link.group(2):
            sibling = path.parent / link.group(2)
            if os.path.lexists(sibling):
                continue  # the file beside it is the entry
        out.append(Entry(entry_id(item), title_of(item), item, shown(path), kind))
    return out


def _items(body: str) -> list[str]:
    """The top-level list items of ``body``, each with its continuation lines."""
    items: list[list[str]] = []
    current: list[str] | None = None
    fenced = False
    for line in body.split("\n"):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _ITEM.match(line)
        if match is not None:
            current = [match.group(1)]
            items.append(current)
        elif current is not None and (line.startswith((" ", "\t")) or fenced) and line.strip():
            current.append(line.strip() if not fenced else line)
        elif current is not None and not line.strip():
            continue
        else:
            current = None
    return [text for lines in items if (text := "\n".join(lines).strip())]


def excerpt(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= MAX_EXCERPT else one[: MAX_EXCERPT - 1] + "…"
