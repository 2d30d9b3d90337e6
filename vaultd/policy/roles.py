"""Folder roles as write rules: what a vault's user-only, journal and raw folders refuse.

A user-only or journal folder is the user's: an agent (the ``mcp`` channel) may not write there,
whatever its gate says, so the refusal is the policy's (P06), not a proposal. A raw folder keeps
what capture put there as it was captured: a write may add a file, never change, move or remove
one (V17); the undo of the capture that wrote it, or a revert of it, may take it back. With no
role set, nothing here applies.
"""

from __future__ import annotations

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.vaults import FolderRoles, in_folder
from vaultd.policy.paths import path_key

#: Operations that put back what an earlier operation found; they may remove a raw copy it added.
TAKES_BACK = frozenset({"op.undo", "op.revert"})


def within(path: str, folder: str) -> bool:
    """Whether ``path`` lies in ``folder`` by their :func:`~vaultd.policy.paths.path_key`: a rule
    about a folder holds whatever the filesystem makes of letter case and Unicode form, as deny and
    private globs do (on a case-insensitive disk ``sessions/`` is ``Sessions/``)."""
    return in_folder(path_key(path), path_key(folder))


def closed_to_agents(path: str, roles: FolderRoles, channel: Channel) -> Issue | None:
    """P06 when an agent writes inside a user-only or journal folder."""
    if channel is not Channel.MCP:
        return None
    for folder in roles.agent_closed():
        if within(path, folder):
            return Issue(
                code=IssueCode.P06,
                path=path,
                message=f"{folder}/ is kept for the vault's user (a user-only or journal folder): agents may not write there",
            )
    return None


def session_notes_closed(path: str, folder: str | None, channel: Channel) -> Issue | None:
    """P06 when an agent writes inside the folder vaultd keeps agent sessions' notes in: they are
    the person's account of what agents did, so no agent edits one."""
    if channel is not Channel.MCP or folder is None or not within(path, folder):
        return None
    return Issue(
        code=IssueCode.P06,
        path=path,
        message=f"{folder.strip('/')}/ holds the notes vaultd keeps of agent sessions: agents may not write there",
    )


def raw_copy_changed(path: str, existed: bool, roles: FolderRoles, op: str) -> Issue | None:
    """V17 when a write changes, moves or removes a file already in the raw folder."""
    if roles.raw is None or not existed or op in TAKES_BACK or not within(path, roles.raw):
        return None
    return Issue(
        code=IssueCode.V17,
        path=path,
        message=f"{path} is a raw copy in {roles.raw}/, kept as captured: it is never changed, moved or removed",
    )
