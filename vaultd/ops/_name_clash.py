"""The duplicate-name guard of create and move: a new name that another note already has turns
that note's bare ``[[Name]]`` links ambiguous.

Obsidian resolves ``[[Name]]`` by file name when one file has it; a second note named ``Name``
anywhere in the vault makes every such link ambiguous (Obsidian then picks one silently). So a
create or a move to a name that one other note has, and that links name bare, is judged here
(V12): in the open profile it goes on with a warning that says how many links in how many notes
are concerned (a move rewrites them with the folder path, a create leaves them to the person and
``vaultctl lint``); in the typed profile it is refused. Links are counted in every note, the
caller's private notes included; a note the caller cannot see is never named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.vaults import SchemaProfile
from vaultd.errors import ValidationFailed
from vaultd.relink import link_name
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext


@dataclass(frozen=True, slots=True)
class NameClash:
    name: str  #: the link name the two notes would share
    other: str  #: the note that has it now
    links: int  #: its bare links that would turn ambiguous
    notes: int  #: the notes holding them


def find_clash(ctx: OpContext, new_path: str, moved_from: str | None = None) -> NameClash | None:
    """The note whose bare links ``new_path`` would make ambiguous, when it has any."""
    name = link_name(new_path)
    now = ctx.index.resolver.resolve(name, "")
    if now.status is not ResolutionStatus.RESOLVED or now.path is None or now.path in (new_path, moved_from):
        return None  # nobody has the name, or it is ambiguous already, or it is the note itself
    sources: set[str] = set()
    links = 0
    for source, link in ctx.index.backlinks(now.path):
        if "/" not in link.target.strip():
            links += 1
            sources.add(source)
    return NameClash(name, now.path, links, len(sources)) if links else None


def clash_issue(ctx: OpContext, clash: NameClash, new_path: str, *, rewritten: bool) -> Issue:
    other = clash.other if ctx.visibility.visible(clash.other) else "another note"
    links = f"{clash.links} link{'s' if clash.links != 1 else ''} [[{clash.name}]] in {clash.notes} note{'s' if clash.notes != 1 else ''}"
    if ctx.entry.schema is SchemaProfile.TYPED:
        what = f"would make {links} ambiguous: they name {other}, which has that name; choose another name"
    elif rewritten:
        what = f"is also {other}'s: {links} that name it are rewritten with its folder path to stay unambiguous"
    else:
        what = (
            f"is also {other}'s: {links} that name it turn ambiguous; give the new note another name, "
            "or write those links with the folder path"
        )
    severity = Severity.ERROR if ctx.entry.schema is SchemaProfile.TYPED else Severity.WARNING
    return Issue(code=IssueCode.V12, path=new_path, severity=severity, message=f"the name {clash.name!r} {what}")


def guard_name(ctx: OpContext, new_path: str, moved_from: str | None = None) -> list[Issue]:
    """The warning for a new name that shares bare links with another note (none when it does
    not); in the typed profile the refusal.

    Raises:
        ValidationFailed: VALIDATION (V12) in the typed profile, when the name clashes.
    """
    clash = find_clash(ctx, new_path, moved_from)
    if clash is None:
        return []
    issue = clash_issue(ctx, clash, new_path, rewritten=moved_from is not None)
    if issue.severity == Severity.ERROR:
        raise ValidationFailed(f"refused: {issue.message}", issues=[issue])
    return [issue]
