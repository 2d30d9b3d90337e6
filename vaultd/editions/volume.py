"""A journal volume's rules: its entries, its name, the hash of what it holds, and its edition's text.

Pure over paths and texts. A volume is a folder directly under the volumes folder; its entries are
every Markdown note under it, in path order, dot files and dot folders left out. The hash covers
each entry's path in the volume and its body (frontmatter dropped, trimmed), so neither a date,
a title nor an entry's properties change it; an edition records it in its own frontmatter, where
the next publish reads it to refuse an edition with no change.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from vaultd.policy.roles import within
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from protocol.methods.editions import VolumesSettings

_WORD_SPLIT = re.compile(r"[-_\s]+")


def clean_folder(folder: str) -> str | None:
    """The folder as a vault-relative path without slashes at its ends; None for one that leaves
    the vault or hides (an empty part, ``.``, ``..``, a dot folder)."""
    folder = folder.strip().strip("/")
    parts = folder.split("/")
    if not folder or any(not p or p.startswith(".") or "\\" in p or "\x00" in p for p in parts):
        return None
    return folder


def volume_name(folder: str) -> str:
    """The volume's name from its folder's: ``-`` and ``_`` become spaces, a word of letters and
    digits is upper case when it holds a digit, any other word starts with a capital
    (``cs566-notes`` -> ``CS566 Notes``)."""
    words = [w for w in _WORD_SPLIT.split(folder) if w]
    return " ".join(w.upper() if w.isalnum() and any(c.isdigit() for c in w) else w[:1].upper() + w[1:] for w in words) or folder


def under(folder: str, path: str) -> bool:
    return path.startswith(folder + "/")


def in_volumes(settings: VolumesSettings | None, path: str) -> bool:
    """Whether ``path`` is a volume's entry or an edition: a person's writing, never an agent's.
    Compared by path key, so another letter case or Unicode form of the folders counts too."""
    if settings is None:
        return False
    return within(path, settings.folder) or within(path, settings.editions)


def volumes(settings: VolumesSettings, paths: Iterable[str]) -> dict[str, list[str]]:
    """Each volume (a folder directly under the volumes folder) with its entries, in path order."""
    found: dict[str, list[str]] = {}
    for path in paths:
        if not under(settings.folder, path) or not path.lower().endswith(".md"):
            continue
        rest = path[len(settings.folder) + 1 :].split("/")
        if len(rest) < 2 or any(part.startswith(".") for part in rest):
            continue
        found.setdefault(rest[0], []).append(path)
    return {v: sorted(p) for v, p in sorted(found.items())}


def body_of(text: str) -> str:
    """An entry's body: its frontmatter dropped, trimmed."""
    _, offset = frontmatter.split(text)
    return text[offset:].strip()


def volume_hash(entries: Iterable[tuple[str, str]]) -> str:
    """The hash of (path in the volume, body) pairs, in order."""
    digest = hashlib.sha256()
    for rel, body in entries:
        digest.update(rel.encode("utf-8") + b"\0" + body.encode("utf-8") + b"\0")
    return digest.hexdigest()


def edition_text(volume: str, name: str, day: str, published: str, entries: list[tuple[str, str]], digest: str) -> str:
    """The edition note: its frontmatter (volume, edition, published, volume_hash, entries), a
    title, then a heading per entry (its path in the volume, without .md) and its body."""
    head = (
        f"---\nvolume: {_yaml_string(volume)}\nedition: {day}\npublished: {_yaml_string(published)}\n"
        f"volume_hash: {digest}\nentries: {len(entries)}\n---\n"
    )
    parts = [f"# {name} — {day} edition\n"]
    for rel, body in entries:
        parts.append(f"\n## {rel.removesuffix('.md')}\n" + (f"\n{body}\n" if body else ""))
    return head + "".join(parts)


def _yaml_string(value: str) -> str:
    """A YAML double-quoted scalar: a folder name may hold what plain YAML reads otherwise."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def edition_path(settings: VolumesSettings, name: str, day: str, taken: Callable[[str], bool]) -> str:
    """Where the edition goes: ``<editions>/<name> <day>.md``, `` (2)`` and on when taken."""
    base = f"{settings.editions}/{name} {day}"
    path, n = f"{base}.md", 1
    while taken(path):
        n += 1
        path = f"{base} ({n}).md"
    return path


def latest_edition(settings: VolumesSettings, volume: str, notes: Mapping[str, Mapping[str, Any] | None]) -> tuple[str, str] | None:
    """The volume's latest edition (path, recorded hash): the note in the editions folder whose
    frontmatter names the volume, with the latest ``edition`` date, then ``published`` time."""
    best: tuple[str, str, int, str, str] | None = None
    for path, data in notes.items():
        if not under(settings.editions, path) or not data or data.get("volume") != volume:
            continue
        # Two editions of one day published within the same second tie on both; the later is
        # the one numbered higher (" (2)" after the bare name), which a path's order gets wrong.
        key = (str(data.get("edition") or ""), str(data.get("published") or ""), _number(path), path, str(data.get("volume_hash") or ""))
        if best is None or key[:4] > best[:4]:
            best = key
    return None if best is None else (best[3], best[4])


def _number(path: str) -> int:
    """An edition's number among its day's: 1 for the bare name, N for ``name (N).md``."""
    found = re.search(r" \((\d{1,9})\)\.md$", path)
    return int(found.group(1)) if found else 1
