"""Three-way merges of a note changed on two machines: frontmatter key by key, the body by lines.

A key changed on one side only takes that side's value; a key both sides changed to different
values *collides*, and this machine's value stays. The body is merged by ``git merge-file``.
With no collision and no conflicting hunk the merge is clean and sync writes it. Otherwise the
result keeps both versions: the body with conflict markers around each conflicting hunk, and a
callout naming each colliding key with origin's value, for a person to finish (sync keeps it in
a proposal; see :mod:`vaultd.ops.git.resolve`). Nothing from either side is dropped.

The vault's operation log is append-only on both sides; it merges as a union of their lines.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from vaultd.errors import VaultError
from vaultd.git import command
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

_MISSING = object()
MAX_CONFLICTS = 127  #: git merge-file's exit status counts conflicts up to this


@dataclass(frozen=True, slots=True)
class Labels:
    ours: str = "this machine"
    theirs: str = "origin"


@dataclass(slots=True)
class Merged:
    data: bytes
    clean: bool
    collided: dict[str, Any] = field(default_factory=dict)  #: key -> origin's value, for keys both sides changed
    conflicts: int = 0  #: conflicting body hunks


def merge_text(work: Path, base: str, ours: str, theirs: str, labels: Labels, *, union: bool = False) -> tuple[str, int]:
    """``git merge-file``: the merged text and the number of conflicting hunks (markers around each)."""
    with tempfile.TemporaryDirectory(dir=work, prefix="merge-") as tmp:
        folder = Path(tmp)
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            (folder / name).write_bytes(text.encode("utf-8"))
        args = ["merge-file", "-p", *(["--union"] if union else []), "-L", labels.ours, "-L", "base", "-L", labels.theirs]
        out = command.run(folder, *args, "ours", "base", "theirs", ok=tuple(range(MAX_CONFLICTS + 1)), outside=True)
    return out.stdout.decode("utf-8", "surrogateescape"), out.status


def merge_log(work: Path, base: bytes | None, ours: bytes, theirs: bytes) -> bytes:
    """Both sides' new lines, each side's in its own order (base, this machine's, then origin's)."""
    text, _ = merge_text(
        work,
        (base or b"").decode("utf-8", "replace"),
        ours.decode("utf-8", "replace"),
        theirs.decode("utf-8", "replace"),
        Labels(),
        union=True,
    )
    return text.encode("utf-8", "surrogateescape")


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return bool(msgspec.json.encode(a) == msgspec.json.encode(b))


def _fields(text: str) -> tuple[dict[str, Any], int] | None:
    """The frontmatter mapping and the body's offset; None when the header cannot be read."""
    parsed = frontmatter.parse(text)
    has_header = frontmatter.find_header(text) is not None
    if has_header and parsed.data is None:
        return None
    return dict(parsed.data or {}), parsed.body_offset


def merge_note(work: Path, base: bytes | None, ours: bytes, theirs: bytes, labels: Labels = Labels()) -> Merged | None:
    """Merge two versions of a Markdown note; None when they are not both UTF-8 text."""
    try:
        b_text = (base or b"").decode("utf-8")
        o_text, t_text = ours.decode("utf-8"), theirs.decode("utf-8")
    except UnicodeDecodeError:
        return None
    parts = [_fields(t) for t in (b_text, o_text, t_text)]
    if any(p is None for p in parts):
        body, conflicts = merge_text(work, b_text, o_text, t_text, labels)
        return Merged(body.encode("utf-8"), clean=conflicts == 0, conflicts=conflicts)
    (b_fm, b_at), (o_fm, o_at), (t_fm, t_at) = parts  # type: ignore[misc]
    to_set: dict[str, Any] = {}
    to_unset: list[str] = []
    collided: dict[str, Any] = {}
    for key in sorted(set(b_fm) | set(o_fm) | set(t_fm)):
        b, o, t = (fm.get(key, _MISSING) for fm in (b_fm, o_fm, t_fm))
        if _same(o, t) or _same(t, b):
            continue
        if _same(o, b):
            if t is _MISSING:
                to_unset.append(key)
            else:
                to_set[key] = t
        else:
            collided[key] = None if t is _MISSING else t
    try:
        headed = emit(o_text, to_set, to_unset) if (to_set or to_unset) else o_text
    except VaultError:
        body, conflicts = merge_text(work, b_text, o_text, t_text, labels)
        return Merged(body.encode("utf-8"), clean=conflicts == 0, conflicts=conflicts)
    header_end = frontmatter.parse(headed).body_offset
    body, conflicts = merge_text(work, b_text[b_at:], o_text[o_at:], t_text[t_at:], labels)
    clean = conflicts == 0 and not collided
    if not clean:
        body = callout(collided, conflicts, labels) + body
    return Merged((headed[:header_end] + body).encode("utf-8"), clean=clean, collided=collided, conflicts=conflicts)


def callout(collided: dict[str, Any], conflicts: int, labels: Labels) -> str:
    """What a person reads first in a note that did not merge: what to resolve, and origin's values."""
    lines = [f"> [!warning] vaultd sync: this note changed on {labels.ours} and on {labels.theirs}"]
    if conflicts:
        lines.append(
            f"> Both versions of {conflicts} passage(s) are below, between <<<<<<< and >>>>>>> lines; "
            "keep what you want and remove the markers."
        )
    for key, value in collided.items():
        shown = "(removed)" if value is None else msgspec.json.encode(value).decode()
        lines.append(f"> Frontmatter `{key}`: {labels.theirs} has {shown}; this note keeps {labels.ours}'s value.")
    return "\n".join(lines) + "\n\n"
