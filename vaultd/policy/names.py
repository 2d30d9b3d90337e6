"""The one rule for a note name a write creates (create and move): linkable and portable.

Obsidian links a note by its name, so a name holding a character a wiki-link cannot carry is a
note nobody can link to: ``[[C# notes]]`` is the heading " notes" of a note C, ``[[a|b]]`` is a
note a labelled b, ``^`` starts a block id, ``[ ]`` close or open the link. Obsidian itself also
refuses ``* " \\ < > : ?`` in file names, and Windows cannot store them, so a vault synced there
loses such a note. Both apply to every folder of the path too: a link by path names them.
"""

from __future__ import annotations

from typing import Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode

LINK_BREAKING: Final = "[]#^|"
NOT_PORTABLE: Final = '*"<>:?'


def name_issue(path: str) -> Issue | None:
    """V04 for the first character of ``path`` (vault-relative, '.md' included) that breaks the rule."""
    for part in path.split("/"):
        for char in part:
            if char in LINK_BREAKING:
                return Issue(
                    code=IssueCode.V04,
                    path=path,
                    message=(
                        f"the name {part!r} holds {char!r}, which a wiki-link cannot carry, so no link could reach "
                        f"the note; choose a name without any of {' '.join(LINK_BREAKING)}"
                    ),
                )
            if char in NOT_PORTABLE:
                return Issue(
                    code=IssueCode.V04,
                    path=path,
                    message=(
                        f"the name {part!r} holds {char!r}, which Obsidian refuses in file names and Windows cannot "
                        f"store; choose a name without any of {' '.join(NOT_PORTABLE)}"
                    ),
                )
    return None
