"""The git methods: history reads, the vault's git settings, snapshots, sync, promotion, reverts.

A vault in a git repository gets history reads whatever its mode (``note.history``, ``note.diff``,
``note.read`` with ``at``). Its ``git`` mode (:mod:`protocol.methods.git_settings`) decides what
vaultd commits: nothing, a commit per operation (checkpoint), or also hand edits after a quiet
period (snapshot). ``vault.sync`` is the only method that talks to a remote; agents cannot call it,
nor change the settings: those are a person's (or the background job's).
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result, VaultId
from protocol.methods.git_settings import GitMode, QuietSeconds, RemoteUrl
from protocol.methods.reads import Target
from protocol.methods.receipts import ChangeReceipt, NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.vaults import VaultInfo
from protocol.methods.writes import NotePath, OpId, TwoStepParams, WriteParams

MAX_HISTORY = 200  #: commits one note.history call lists
MAX_DIFF_TEXT_BYTES = 256 * 1024  #: a note.diff answer's diff text; a longer one is cut and says so
MAX_SYNC_LISTED = 500  #: files and conflicts a sync result lists; the rest are counted

Rev = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=256,
        pattern=r"^(?![-.])[A-Za-z0-9_./~^@{}+-]+$",
        description="A git revision: a commit id (full or abbreviated), a branch or tag, or an expression like HEAD~3.",
    ),
]
BlobId = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{40}([0-9a-f]{24})?$", description="A git blob id.")]


class Revision(msgspec.Struct, kw_only=True):
    """One commit as a history answer shows it."""

    commit: Annotated[str, msgspec.Meta(description="The full commit id.")]
    date: Annotated[float, msgspec.Meta(description="The commit's author date (Unix time).")]
    author: Annotated[str, msgspec.Meta(description="The author's name.")]
    subject: Annotated[str, msgspec.Meta(description="The commit message's first line.")]
    op_id: Annotated[str | None, msgspec.Meta(description="The vaultd operation the commit records, if it records one.")] = None
    channel: Annotated[str | None, msgspec.Meta(description="Who made that operation: cli, mcp, editor, or sync.")] = None


class HistoryStatus(enum.StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"


class HistoryEntry(Revision, kw_only=True):
    path: Annotated[str, msgspec.Meta(description="The note's vault-relative path in that commit.")]
    status: Annotated[HistoryStatus, msgspec.Meta(description="What the commit did to the note.")]
    renamed_from: Annotated[str | None, msgspec.Meta(description="For a rename: the path before.")] = None


class NoteHistoryParams(Params):
    target: Target
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_HISTORY, description="At most this many commits, newest first.")] = 20


class NoteHistoryResult(Result):
    path: Annotated[str, msgspec.Meta(description="The note's current path (or its last one, for a deleted note).")]
    entries: Annotated[list[HistoryEntry], msgspec.Meta(description="The commits that touched the note, renames followed.")]
    truncated: Annotated[bool, msgspec.Meta(description="More commits touched it than listed.")]


class NoteDiffParams(Params):
    target: Target
    vault: OptionalVault = None
    from_rev: Annotated[Rev | None, msgspec.Meta(description="The older revision; omitted, the note's last commit.")] = None
    to_rev: Annotated[Rev | None, msgspec.Meta(description="The newer revision; omitted, the file as it is now.")] = None


class NoteDiffResult(Result):
    path: Annotated[str, msgspec.Meta(description="The note's vault-relative path (at the newer side).")]
    from_commit: Annotated[str | None, msgspec.Meta(description="The older side's commit; null when the note had no commit.")]
    to_commit: Annotated[str | None, msgspec.Meta(description="The newer side's commit; null for the file on disk.")]
    diff: Annotated[str, msgspec.Meta(description=f"A unified diff; at most {MAX_DIFF_TEXT_BYTES} bytes.")]
    truncated: Annotated[bool, msgspec.Meta(description="The diff was cut.")]
    added: Annotated[int, msgspec.Meta(description="Lines added.")]
    removed: Annotated[int, msgspec.Meta(description="Lines removed.")]


class VaultGitParams(Params):
    id: VaultId
    mode: Annotated[
        GitMode | None, msgspec.Meta(description="off, checkpoint or snapshot; omitted: unchanged. The vault must be in a git repository.")
    ] = None
    remote: RemoteUrl | None = None
    clear_remote: Annotated[bool, msgspec.Meta(description="Forget the remote (the repository's own remotes are untouched).")] = False
    snapshot_quiet_s: QuietSeconds | None = None
    sync_interval_s: (
        Annotated[
            int, msgspec.Meta(ge=0, le=7 * 24 * 3600, description="Background sync every this many seconds (at least 60); 0 turns it off.")
        ]
        | None
    ) = None


class SnapshotParams(Params):
    vault: OptionalVault = None


class SnapshotResult(Result, kw_only=True):
    commit: Annotated[str | None, msgspec.Meta(description="The snapshot commit; null when there was nothing to commit.")]
    paths: Annotated[list[str], msgspec.Meta(description=f"The files it committed, at most {MAX_SYNC_LISTED}.")]
    omitted: Annotated[int, msgspec.Meta(description="Files committed beyond the listed ones.")] = 0
    message: Annotated[str, msgspec.Meta(description="What happened, in a line.")]


class SyncParams(Params):
    vault: OptionalVault = None
    dry_run: Annotated[
        bool, msgspec.Meta(description="Check the remote and fetch, then report what would be integrated and pushed; change nothing.")
    ] = False


class SyncOutcome(enum.StrEnum):
    UP_TO_DATE = "up_to_date"  #: nothing to integrate or push
    SYNCED = "synced"  #: remote commits integrated and/or local ones pushed; the remote has the local head
    PREVIEW = "preview"  #: dry_run: what would happen


class SyncConflict(msgspec.Struct, kw_only=True):
    path: Annotated[str, msgspec.Meta(description="The vault-relative path changed on both sides.")]
    proposal: Annotated[str | None, msgspec.Meta(description="The proposal holding both versions, for a person to apply or reject.")]
    kept: Annotated[str, msgspec.Meta(description="Which version is in the vault now: origin's, or this machine's.")]


class SyncResult(Result, kw_only=True):
    vault: Annotated[str, msgspec.Meta(description="The vault synced.")]
    outcome: Annotated[SyncOutcome, msgspec.Meta(description="up_to_date, synced or preview.")]
    branch: Annotated[str, msgspec.Meta(description="The branch synced (the same name on origin).")]
    head: Annotated[str | None, msgspec.Meta(description="The local branch's commit after the sync.")]
    remote_head: Annotated[str | None, msgspec.Meta(description="Origin's branch after the sync (equal to head when pushed).")]
    incoming: Annotated[int, msgspec.Meta(description="Files the remote's commits changed that were integrated (or would be).")]
    outgoing: Annotated[int, msgspec.Meta(description="Local commits pushed (or that would be).")]
    pushed: Annotated[bool, msgspec.Meta(description="Whether the remote was advanced.")]
    changes: Annotated[list[ChangeReceipt], msgspec.Meta(description=f"The files integrated, at most {MAX_SYNC_LISTED}.")] = []
    op_ids: Annotated[
        list[str], msgspec.Meta(description="The operations that integrated the remote's changes (op.undo reverses one).")
    ] = []
    conflicts: Annotated[list[SyncConflict], msgspec.Meta(description="Notes changed on both sides that did not merge.")] = []
    untouched: Annotated[
        list[str],
        msgspec.Meta(
            description="Files origin changed that vaultd never writes (Obsidian's folder, links): the branch has origin's version, "
            "the files on disk are left as they were ('git checkout HEAD -- PATH' takes them)."
        ),
    ] = []
    message: Annotated[str, msgspec.Meta(description="What happened, in a line.")]


class PromoteParams(TwoStepParams, kw_only=True):
    target: Annotated[Target, msgspec.Meta(description="The note to promote (a path, name or alias) in the source vault.")]
    to: Annotated[VaultId, msgspec.Meta(description="The org vault that receives the copy.")]
    path: Annotated[NotePath | None, msgspec.Meta(description="Its path in the org vault; omitted, the same as here.")] = None
    again: Annotated[bool, msgspec.Meta(description="Promote a note promoted before, to a new path; nothing is overwritten.")] = False


class PromoteDetail(msgspec.Struct, kw_only=True):
    from_vault: Annotated[str, msgspec.Meta(description="The source vault.")]
    from_path: Annotated[str, msgspec.Meta(description="The note's path there.")]
    to_vault: Annotated[str, msgspec.Meta(description="The org vault.")]
    to_path: Annotated[str, msgspec.Meta(description="The copy's path there.")]
    dropped_links: Annotated[
        list[str], msgspec.Meta(description="Links that resolve in no note of the org vault, turned into their text (the first 100).")
    ]
    dropped_omitted: Annotated[int, msgspec.Meta(description="How many more links were turned into text than dropped_links lists.")] = 0
    source_change: Annotated[ChangeReceipt | None, msgspec.Meta(description="The provenance written to the source note.")] = None
    source_op_id: Annotated[str | None, msgspec.Meta(description="The operation that wrote it, in the source vault.")] = None
    source_commit: Annotated[str | None, msgspec.Meta(description="Its commit in the source vault, when that vault keeps checkpoints.")] = (
        None
    )


class RevertParams(TwoStepParams, kw_only=True):
    op_id: OpId


class RevertDetail(msgspec.Struct, kw_only=True):
    commit: Annotated[str, msgspec.Meta(description="The commit that recorded the operation.")]
    files: Annotated[list[str], msgspec.Meta(description="The files put back as they were before it.")]


class ResolveParams(WriteParams, kw_only=True):
    """A sync conflict, kept as a proposal: applying it writes both versions into the note for a
    person to finish (frontmatter merged key by key where the keys do not collide)."""

    path: Annotated[NotePath, msgspec.Meta(description="The note changed on both sides.")]
    base: Annotated[BlobId | None, msgspec.Meta(description="Its blob in the last common commit; null: absent there.")] = None
    ours: Annotated[BlobId | None, msgspec.Meta(description="This machine's version; null: deleted here.")] = None
    theirs: Annotated[BlobId | None, msgspec.Meta(description="Origin's version; null: deleted there.")] = None
    ours_label: Annotated[str, msgspec.Meta(max_length=100, description="How the markers name this machine's side.")] = "this machine"
    theirs_label: Annotated[str, msgspec.Meta(max_length=100, description="How the markers name origin's side.")] = "origin"


NOTE_HISTORY = spec(
    "note.history",
    NoteHistoryParams,
    NoteHistoryResult,
    "The commits that touched a note. Newest first, renames followed (the vault must be in a git repository).",
    Effect.READ,
    Trait.MCP,
)
NOTE_DIFF = spec(
    "note.diff",
    NoteDiffParams,
    NoteDiffResult,
    "A note's unified diff between two revisions. By default between its last commit and the file now.",
    Effect.READ,
    Trait.MCP,
)
VAULT_GIT = spec(
    "vault.git",
    VaultGitParams,
    VaultInfo,
    "Set how a vault records history in git (off, checkpoint, snapshot), its remote and background sync.",
    Effect.IDEMPOTENT_WRITE,
)
VAULT_SNAPSHOT = spec(
    "vault.snapshot",
    SnapshotParams,
    SnapshotResult,
    "Commit the vault's hand edits now as one snapshot commit (the vault must keep checkpoints or snapshots).",
    Effect.WRITE,
)
VAULT_SYNC = spec(
    "vault.sync",
    SyncParams,
    SyncResult,
    "Fetch the vault's remote, integrate its commits as operations, push fast-forward only; never force.",
    Effect.WRITE,
)
PROMOTE: MethodSpec[PromoteParams, WriteReceipt[PromoteDetail]] = MethodSpec(
    "note.promote",
    PromoteParams,
    receipt_type(PromoteDetail),
    "Copy a note into an org vault through a screen, recording provenance on both sides (two-step: preview, then confirm).",
    Effect.DESTRUCTIVE,  # it publishes into a shared vault: hosts should ask before confirming
    Trait.MCP | Trait.TWO_STEP,
)
REVERT: MethodSpec[RevertParams, WriteReceipt[RevertDetail]] = MethodSpec(
    "op.revert",
    RevertParams,
    receipt_type(RevertDetail),
    "Reverse, from git history, an operation op.undo no longer keeps (two-step: preview, then confirm). It is reversed as a new operation.",
    Effect.DESTRUCTIVE,
    Trait.MCP | Trait.TWO_STEP,
)
#: Not a method: the operation a sync conflict's proposal holds, made by the daemon's sync and
#: applied only through ``proposal.apply`` by a person. Declared as a spec so that its operation
#: is typed and catalogued like every other; it is in no table a caller reaches.
RESOLVE: MethodSpec[ResolveParams, WriteReceipt[NoDetail]] = MethodSpec(
    "git.resolve",
    ResolveParams,
    receipt_type(NoDetail),
    "Write both versions of a note that changed here and on origin into it, for a person to finish.",
    Effect.WRITE,
)
SPECS = (NOTE_HISTORY, NOTE_DIFF, VAULT_GIT, VAULT_SNAPSHOT, VAULT_SYNC, PROMOTE, REVERT)
