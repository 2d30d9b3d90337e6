"""Agent sessions as records: what one agent session did, for the person and for the agent.

A session is an agent's connection through the MCP shim (its id in ``hello``: ``$VAULTD_SESSION``
when the host names one, so a client passing an id it used before continues that record), or a
host session its hooks name (Claude Code's ``SessionStart``, ``UserPromptSubmit`` and ``Stop``).
Its record holds a description, when it started, was last seen and ended, the notes it read and
touched, its operations and proposals, its work, and one-line summaries of its prompts where the
host's hook gives them. Records are bounded (:data:`MAX_SESSIONS`, :data:`MAX_RECORD_BYTES`,
:data:`MAX_PROMPT_CHARS`) and kept in vaultd's home, out of the vaults unless a vault opts in to
session notes (its ``session_notes`` folder; see :mod:`vaultd.ops.session_note`). Over MCP, private
paths are screened out of them like any reply.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import Params, Result
from protocol.methods.spec import Effect, Trait, spec

MAX_SESSIONS = 200  #: records kept; past that the longest-unseen ended ones go first
MAX_RECORD_BYTES = 32 * 1024  #: one record as stored; past that its oldest reads, prompts and paths go
MAX_PROMPT_CHARS = 160  #: one prompt's summary: its first line, cut here
MAX_PROMPTS = 40  #: prompt summaries kept per record, the newest
MAX_ITEMS = 200  #: reads, touched notes and operations kept per record, the newest of each
MAX_DESCRIPTION = 200
MAX_HOOK_PROMPT = 256 * 1024  #: a prompt a hook passes on; only its summary is kept

SessionId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:-]{1,64}$", description="A session id, as session.list gives it.")]


class NoteRef(msgspec.Struct, kw_only=True):
    vault: str
    path: str


class OpRef(msgspec.Struct, kw_only=True):
    vault: str
    id: Annotated[str, msgspec.Meta(description="An operation id (op.undo) or a proposal id (proposal.show).")]
    op: str


class PromptLine(msgspec.Struct, kw_only=True):
    at: float
    text: str


class SessionSummary(Result, kw_only=True):
    id: str
    client: Annotated[str, msgspec.Meta(description="The client or host that opened it (vaultctl-mcp, claude-code, ...).")]
    description: str = ""
    started: float
    seen: Annotated[float, msgspec.Meta(description="When it last did something (Unix time).")]
    ended: Annotated[float | None, msgspec.Meta(description="When its last connection closed or its host ended it; None: open.")] = None
    ops: int = 0
    proposals: int = 0
    running_work: Annotated[list[str], msgspec.Meta(description="Its work documents still running.")] = []


class SessionRecord(SessionSummary, kw_only=True):
    read: Annotated[list[NoteRef], msgspec.Meta(description="Notes it read, newest last.")] = []
    touched: Annotated[list[NoteRef], msgspec.Meta(description="Notes its operations and proposals wrote.")] = []
    op_list: Annotated[list[OpRef], msgspec.Meta(description="Its operations, newest last.")] = []
    proposal_list: Annotated[list[OpRef], msgspec.Meta(description="Its proposals, newest last.")] = []
    work: Annotated[list[str], msgspec.Meta(description="Work documents it started (vault:id).")] = []
    prompts: Annotated[list[PromptLine], msgspec.Meta(description="One-line summaries of its prompts, from the host's hook.")] = []
    dropped: Annotated[int, msgspec.Meta(description="Older entries left out to keep the record bounded.")] = 0


class SessionListParams(Params, kw_only=True):
    open: Annotated[bool, msgspec.Meta(description="Only sessions not ended.")] = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_SESSIONS, description="At most this many, most recently seen first.")] = 20


class SessionListResult(Result, kw_only=True):
    sessions: Annotated[list[SessionSummary], msgspec.Meta(description="Most recently seen first.")]


class SessionShowParams(Params, kw_only=True):
    id: Annotated[SessionId | None, msgspec.Meta(description="Omitted: your own session.")] = None


class HookEvent(enum.StrEnum):
    START = "start"  #: the host's session starts (or resumes)
    PROMPT = "prompt"  #: the person sent a prompt
    STOP = "stop"  #: the agent finished its turn: what is left unfinished?
    END = "end"  #: the host's session ends


class SessionHookParams(Params, kw_only=True):
    event: Annotated[HookEvent, msgspec.Meta(description="What happened: start, prompt, stop or end.")]
    id: SessionId
    host: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="The host: claude-code, codex, ...")]
    prompt: Annotated[str, msgspec.Meta(max_length=MAX_HOOK_PROMPT, description="The prompt (event prompt).")] | None = None


class Unfinished(Result, kw_only=True):
    vault: str
    kind: Annotated[str, msgspec.Meta(description="proposal or work.")]
    id: str
    what: str


class SessionHookResult(Result, kw_only=True):
    unfinished: Annotated[list[Unfinished], msgspec.Meta(description="Pending proposals and running work (event stop).")] = []


SESSION_LIST = spec("session.list", SessionListParams, SessionListResult, "List agent sessions.", Effect.READ, Trait.MCP)
SESSION_SHOW = spec("session.show", SessionShowParams, SessionRecord, "One session's record (default: yours).", Effect.READ, Trait.MCP)
SESSION_HOOK = spec(
    "session.hook",
    SessionHookParams,
    SessionHookResult,
    "For agent-host hooks: a host session started, got a prompt, stopped its turn or ended.",
    Effect.WRITE,
)
SPECS = (SESSION_LIST, SESSION_SHOW, SESSION_HOOK)
