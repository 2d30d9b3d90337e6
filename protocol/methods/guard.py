"""The agent-host guard's two questions to the daemon, and the rule that answers the first.

Agent hosts (Claude Code, Codex, Gemini CLI) run ``vaultctl guard`` before their own file-edit
and shell tools. It asks ``guard.check``: are these paths inside a registered vault, and does
that vault's policy keep agents' own edit tools off it? If so the host refuses the tool and tells
the agent which vaultd tool does the same job through the validated, journaled path. At session
start it asks ``guard.context`` for the facts a user chose to give the agent (off by default: what
a hook prints becomes model context, so it is an egress decision per vault).

:func:`verdict` is the rule, kept here so that the daemon and the hook (when no daemon answers,
from the registry file) apply the same one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import msgspec

from protocol.location import VAULT_STATE_DIR
from protocol.methods.common import Empty, Params, Result
from protocol.methods.spec import Effect, spec

if TYPE_CHECKING:
    from protocol.methods.vaults import VaultEntry

MAX_GUARD_PATHS = 64
GuardPath = Annotated[str, msgspec.Meta(min_length=1, max_length=4096, pattern=r"^/[^\x00]*$", description="An absolute path.")]


class GuardCheckParams(Params):
    paths: Annotated[
        list[GuardPath],
        msgspec.Meta(max_length=MAX_GUARD_PATHS, description="Absolute paths a host tool is about to write."),
    ]


class GuardVerdict(Result):
    path: str
    vault: Annotated[str | None, msgspec.Meta(description="The registered vault holding the path, if any.")] = None
    refused: bool = False
    reason: str = ""


class GuardCheckResult(Result):
    refused: Annotated[bool, msgspec.Meta(description="True when any path is refused: the host must not run the tool.")]
    verdicts: list[GuardVerdict]
    guarded: Annotated[
        list[str], msgspec.Meta(description="The vaults whose guard is on; while any is, vaultctl commands acting as the user are refused.")
    ] = []


class VaultContext(Result):
    id: str
    path: str
    notes: int
    pending_proposals: int
    proposes: Annotated[list[str], msgspec.Meta(description="Operation classes agents may only propose here.")]
    refuses: Annotated[list[str], msgspec.Meta(description="Operation classes refused to agents here.")]
    hot: Annotated[str, msgspec.Meta(description="The hot summary the person chose (recent operations, proposals, ...), bounded.")] = ""


class GuardContextResult(Result):
    vaults: Annotated[list[VaultContext], msgspec.Meta(description="The vaults whose users turned session context on; often none.")]


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` when it is the root or under it, else None."""
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def canonical(path: str) -> str:
    """The path as the registry names folders: absolute, links resolved as far as they exist.

    A file a tool is about to create does not exist yet; ``realpath`` resolves its existing
    parents, so a link into a vault is seen as the vault path it leads to. Links are resolved
    before ``..`` is applied, as the kernel does (``link/..`` is the parent of the link's target,
    not the folder holding the link), so the path is never normalised first.
    """
    return os.path.realpath(path)


def guarded(entries: list[VaultEntry]) -> list[str]:
    return [e.id for e in entries if e.agent_policy().guard]


def verdict(entries: list[VaultEntry], path: str) -> GuardVerdict:
    """Refuse a path inside a vault whose agent policy guards it, and the vault's ``.vaultd/``
    always, and any folder that holds a vault (``rm -rf``, ``mv``, ``chmod -R`` or ``git clean``
    on it reach the vault too). ``path`` must already be :func:`canonical`."""
    for entry in entries:
        if _inside(entry.path, path) not in (None, ""):
            reason = (
                f"{path} holds vault {entry.id!r} ({entry.path}), which vaultd keeps: a command on the whole folder "
                "reaches the vault's notes and vaultd's own state folder; name paths outside the vault, or use the vaultd MCP tools"
            )
            return GuardVerdict(path=path, vault=entry.id, refused=True, reason=reason)
    for entry in entries:
        rel = _inside(path, entry.path)
        if rel is None:
            continue
        if rel.split("/", 1)[0] == VAULT_STATE_DIR:
            reason = f"{path} is the state folder of vault {entry.id!r} (its lock, journal and proposals); no tool may edit it"
            return GuardVerdict(path=path, vault=entry.id, refused=True, reason=reason)
        if entry.agent_policy().guard:
            reason = (
                f"{path} is in vault {entry.id!r}, which vaultd keeps: change its notes with the vaultd MCP tools "
                "(note_create, note_patch, note_append, note_set_frontmatter, note_move, note_delete), which validate, "
                "journal and let your user review and undo every change; do not edit its files directly"
            )
            return GuardVerdict(path=path, vault=entry.id, refused=True, reason=reason)
        return GuardVerdict(path=path, vault=entry.id)
    return GuardVerdict(path=path)


GUARD_CHECK = spec(
    "guard.check",
    GuardCheckParams,
    GuardCheckResult,
    "For agent-host hooks: which of these paths lie in a vault whose policy keeps agents' own edit tools off them.",
    Effect.READ,
)
GUARD_CONTEXT = spec(
    "guard.context",
    Empty,
    GuardContextResult,
    "For agent-host session-start hooks: the vaults whose users chose to tell agents about them.",
    Effect.READ,
)
SPECS = (GUARD_CHECK, GUARD_CONTEXT)
