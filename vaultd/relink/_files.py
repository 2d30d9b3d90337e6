"""Every file whose links a relocation concerns, rewritten by one pass: the notes that link in, then
the files besides notes that name notes, canvases (``.canvas``), bases (``.base``) and
``.obsidian/bookmarks.json``, so move and merge keep the vault's links pointing where they did.

Each file besides notes is read through the same strict read as a note (no symlink followed, bounded,
its hash recorded for the engine's re-check), rewritten in place by :mod:`vaultd.relink._canvas` or
:mod:`vaultd.relink._base`, and planned as one more change of the same operation: journaled,
re-checked, undone and recovered with the notes. A file that cannot be read as its format (not
UTF-8, not JSON or YAML, over the size bound, behind a link) is left as it is, with a warning
naming it, so the person knows which links to check.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from vaultd.errors import Conflict, LimitExceeded
from vaultd.relink._base import rewrite_base
from vaultd.relink._canvas import BOOKMARKS, rewrite_bookmarks, rewrite_canvas
from vaultd.relink._notes import rewrite_links
from vaultd.relink._relocation import Relocation, link_name
from vaultd.txn.plan import MAX_NOTE_BYTES, Change
from vaultd.vault.link_targets import name_key

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vaultd.policy.visibility import Visibility
    from vaultd.relink._notes import Rewrite
    from vaultd.vault.index import VaultIndex


class Reads(Protocol):
    """What link rewriting needs of an operation's context: the index it judges links by, what the
    caller may see, and the strict reads that record each file's hash for the engine's re-check."""

    @property
    def index(self) -> VaultIndex: ...

    @property
    def visibility(self) -> Visibility: ...

    def read(self, rel: str) -> bytes | None: ...

    def read_text(self, rel: str) -> tuple[bytes, str]: ...


CANVAS_SUFFIX = ".canvas"
BASE_SUFFIX = ".base"


@dataclass(slots=True)
class Rewritten:
    """What rewriting the links adds to an operation: its changes, the links rewritten, warnings."""

    changes: list[Change] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)


def linking_files(ctx: Reads) -> list[str]:
    """The canvases and bases the index knows, and the bookmarks file, in path order."""
    found = sorted(p for p in ctx.index.attachments if p.lower().endswith((CANVAS_SUFFIX, BASE_SUFFIX)))
    return [*found, BOOKMARKS]


def _left(path: str, why: str) -> Issue:
    return Issue(
        code=IssueCode.V03,
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


def rewrite_obsidian_files(ctx: Reads, reloc: Relocation) -> Rewritten:
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


def relink(ctx: Reads, reloc: Relocation, sources: Iterable[str]) -> Rewritten:
    """The changes ``reloc`` needs in the notes ``sources`` and then in the files besides notes, in
    that order (receipts list them so); a note whose links all still resolve is left out.

    Raises:
        Conflict: CONFLICT when a note was removed since it was indexed or is not UTF-8.
        ValidationFailed: VALIDATION (V03) when a link in a file besides notes cannot be rewritten.
    """
    out = Rewritten()
    for source in sources:
        raw, text = ctx.read_text(source)
        fixed, found = rewrite_links(text, source, reloc)
        if found:
            out.changes.append(Change(path=source, before=raw, after=fixed.encode("utf-8")))
            out.rewrites += found
    others = rewrite_obsidian_files(ctx, reloc)
    out.changes += others.changes
    out.rewrites += others.rewrites
    out.warnings += others.warnings
    return out
