"""The method table: the one place each method's name, shape and flags are declared.

The daemon dispatches from it, the CLI builds its requests from its params Structs, the MCP shim
lists its tools from it, and ``vaultctl schema`` and the reference docs are generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.methods import reads, service, vaults, writes
from protocol.methods.common import Empty, Params, Result


@dataclass(frozen=True, slots=True)
class MethodSpec:
    name: str
    params: type[Params]
    result: type[Result]
    summary: str  #: one line for people and agents: what it does and when to use it
    read_only: bool = False
    destructive: bool = False
    two_step: bool = False  #: answers a preview with a fingerprint; the confirm call carries it
    idempotent: bool = False
    mcp: bool = False  #: exposed as an MCP tool
    session: bool = False  #: answered before ``hello`` too (``hello`` itself)

    @property
    def tool_name(self) -> str:
        """The MCP tool name: dots become underscores, which every host accepts."""
        return self.name.replace(".", "_")


_SPECS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "hello", service.HelloParams, service.HelloResult,
        "Open a session: name the client and channel, negotiate the protocol version.",
        read_only=True, idempotent=True, session=True,
    ),
    MethodSpec(
        "daemon.status", Empty, service.DaemonStatus,
        "The daemon's pid, uptime, version, socket, home, and each vault's health.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec("daemon.stop", Empty, service.StopResult, "Stop the daemon gracefully.", idempotent=True),
    MethodSpec(
        "doctor", service.DoctorParams, service.DoctorResult,
        "Check the home, the socket, the config and every vault; a verdict and findings.",
        read_only=True, idempotent=True,
    ),
    MethodSpec(
        "vault.add", vaults.VaultAddParams, vaults.VaultInfo,
        "Register an existing folder as a vault and index it. Never writes a note.",
    ),
    MethodSpec(
        "vault.list", Empty, vaults.VaultListResult,
        "The registered vaults with their policies and health.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "vault.remove", vaults.VaultRemoveParams, vaults.VaultRemoveResult,
        "Unregister a vault (two-step: preview, then confirm with the fingerprint). Never deletes files.",
        destructive=True, two_step=True,
    ),
)

_READS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "note.search", reads.SearchParams, reads.SearchResult,
        "Full-text search (every word must match); filters by type, domain, tag and folder. Start here.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "note.read", reads.ReadParams, reads.ReadResult,
        "Read a note by path, name or alias: frontmatter and body, or one H2 section, paged by bytes.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "note.links", reads.LinksParams, reads.LinksResult,
        "A note's outgoing links (resolved, missing or ambiguous, with a suggestion) and its backlinks.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "note.list", reads.ListParams, reads.ListResult,
        "List notes in path order, optionally under a folder; page with the returned cursor.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "vault.tags", reads.TagsParams, reads.TagsResult,
        "Every tag in the vault with the number of notes carrying it.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "vault.stats", reads.VaultParams, reads.StatsResult,
        "Counts: notes by type, domain and folder; links, dead links, orphans, bytes, words.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "vault.issues", reads.IssuesParams, reads.IssuesResult,
        "Problems found while indexing: malformed frontmatter, skipped files (too large, not UTF-8, links).",
        read_only=True, idempotent=True, mcp=True,
    ),
)

_RECEIPT = writes.WriteReceipt
_WRITES: tuple[MethodSpec, ...] = (
    MethodSpec(
        "note.create", writes.CreateParams, _RECEIPT,
        "Create a note at a new path (title, frontmatter, body or a skeleton); refuses existing names.",
        mcp=True,
    ),
    MethodSpec(
        "note.patch", writes.PatchParams, _RECEIPT,
        "Replace text that occurs exactly once (or up to 32 non-overlapping edits, all or nothing).",
        mcp=True,
    ),
    MethodSpec(
        "note.append", writes.AppendParams, _RECEIPT,
        "Append Markdown to an H2 section, creating the section when absent.",
        mcp=True,
    ),
    MethodSpec(
        "note.set_frontmatter", writes.SetFrontmatterParams, _RECEIPT,
        "Set or unset frontmatter keys; every other key keeps its exact bytes.",
        idempotent=True, mcp=True,
    ),
    MethodSpec(
        "note.link", writes.LinkParams, _RECEIPT,
        "Link two notes under '## Relevant Notes' (a relation optional), both ways unless bidirectional is false.",
        mcp=True,
    ),
    MethodSpec(
        "note.supersede", writes.SupersedeParams, _RECEIPT,
        "Mark an old note superseded by a new one (status, superseded_by) and link the new one back.",
        mcp=True,
    ),
    MethodSpec(
        "note.move", writes.MoveParams, _RECEIPT,
        "Rename or move a note and rewrite every link to it (two-step: preview, then confirm with the fingerprint).",
        destructive=True, two_step=True, mcp=True,
    ),
    MethodSpec(
        "note.delete", writes.DeleteParams, _RECEIPT,
        "Move a note to .trash (undoable); refuses to break links unless told to (two-step: preview, then confirm).",
        destructive=True, two_step=True, mcp=True,
    ),
    MethodSpec(
        "note.merge", writes.MergeParams, _RECEIPT,
        "Fold one note into another, repoint its links, mark it superseded (two-step: preview, then confirm).",
        destructive=True, two_step=True, mcp=True,
    ),
    MethodSpec(
        "op.undo", writes.UndoParams, _RECEIPT,
        "Reverse a committed operation while the files it wrote are unchanged since.",
        destructive=True, mcp=True,
    ),
    MethodSpec(
        "op.list", writes.OpListParams, writes.OpListResult,
        "Recent operations kept for undo, newest first.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "log.append", writes.LogAppendParams, writes.LogReceipt,
        "Append one event line to the vault's log.",
        mcp=True,
    ),
    MethodSpec(
        "log.tail", writes.LogTailParams, writes.LogLines,
        "The last events of the vault's log, optionally of one type.",
        read_only=True, idempotent=True, mcp=True,
    ),
    MethodSpec(
        "log.grep", writes.LogGrepParams, writes.LogLines,
        "Log events matching a pattern (a safe regular-expression subset).",
        read_only=True, idempotent=True, mcp=True,
    ),
)

METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in (*_SPECS, *_READS, *_WRITES)}
