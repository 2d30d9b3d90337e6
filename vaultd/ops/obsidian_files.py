"""The files besides notes that name notes, kept in step by move and merge: canvases (``.canvas``),
bases (``.base``) and ``.obsidian/bookmarks.json``.

Each is read through the same strict read as a note (no link followed, bounded, its hash recorded
for the engine's re-check), rewritten in place by :mod:`vaultd.ops.canvas_links` or
:mod:`vaultd.ops.base_links`, and planned as one more change of the same operation: journaled,
re-checked, undone and recovered with the notes. A file that cannot be read as its format (not
UTF-8, not JSON or YAML, over the size bound, behind a link) is left as it is, with a warning
naming it, so the person knows which links to check.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from vaultd.errors import Conflict, LimitExceeded
from vaultd.ops.base_links import rewrite_base
from vaultd.ops.canvas_links import BOOKMARKS, rewrite_bookmarks, rewrite_canvas
from vaultd.ops.relocation import Relocation, link_name
from vaultd.txn.plan import MAX_NOTE_BYTES, Change
from vaultd.vault.link_targets import name_key

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext
    from vaultd.ops.rewrite import Rewrite

CANVAS_SUFFIX = ".canvas"
BASE_SUFFIX = ".base"


@dataclass(slots=True)
class Rewritten:
    """What the files besides notes add to an operation."""

    changes: list[Change] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)


def linking_files(ctx: OpContext) -> list[str]:
    """The canvases and bases the index knows, and the bookmarks file, in path order."""
    found = sorted(p for p in ctx.index.attachments if p.lower().endswith((CANVAS_SUFFIX, BASE_SUFFIX)))
    return [*found, BOOKMARKS]


def _left(path: str, why: str) -> Issue:
    return Issue(
        code="V03",
        path=path,
        severity=Severity.WARNING,
        message=f"{path} {why}; its links were not checked or rewritten: check them after the change",
    )


def _mentions(text: str, reloc: Relocation) -> bool:
    """Whether ``text`` holds the name of a file the change moves or repoints (or gives a name),
    so that a file unreadable as its format is worth a warning."""
    folded = unicodedata.normalize("NFC", text).casefold()  # not name_key: its cache is for names
    return any(name_key(link_name(p)) in folded for p in (*reloc.repoint, *reloc.repoint.values()))


def _may_link(text: str, reloc: Relocation) -> bool:
    """False only when a JSON file cannot hold a link the change concerns: every such link or
    path spells a concerned note's name, unless an escape (``\\u``, ``%``) or a name JSON must
    escape hides it."""
    names = [link_name(p) for p in (*reloc.repoint, *reloc.repoint.values())]
    if "\\u" in text or "%" in text or any('"' in n or "\\" in n for n in names):
        return True
    return _mentions(text, reloc)


def rewrite_obsidian_files(ctx: OpContext, reloc: Relocation) -> Rewritten:
    """Every change the canvases, bases and bookmarks need for ``reloc``.

    Raises:
        ValidationFailed: VALIDATION (V03) when a link in one of them cannot be rewritten.
    """
    out = Rewritten()
    for path in linking_files(ctx):
        try:
            raw = ctx.read(path)
        except LimitExceeded:
            out.warnings.append(_left(path, f"is over {MAX_NOTE_BYTES} bytes"))
            continue
        except Conflict as exc:  # a link, or not a regular file
            out.warnings.append(_left(path, f"cannot be read safely ({exc.message})"))
            continue
        if raw is None:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            if _mentions(raw.decode("utf-8", "replace"), reloc):
                out.warnings.append(_left(path, "is not UTF-8"))
            continue
        if path == BOOKMARKS or path.lower().endswith(CANVAS_SUFFIX):
            if not _may_link(text, reloc):
                continue  # JSON that never names the notes concerned: nothing to parse
        try:
            if path == BOOKMARKS:
                new, found = rewrite_bookmarks(text, reloc)
            elif path.lower().endswith(CANVAS_SUFFIX):
                new, found = rewrite_canvas(text, path, reloc)
            else:
                new, found = rewrite_base(text, path, reloc)
        except ValueError as exc:
            if _mentions(text, reloc):
                out.warnings.append(_left(path, f"cannot be read ({exc})"))
            continue
        if found:
            out.changes.append(Change(path=path, before=raw, after=new.encode("utf-8")))
            out.rewrites += found
    return out
