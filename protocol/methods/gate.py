"""What an agent may do to a vault: per operation class, apply it, propose it to a person, or refuse.

The policy is part of the vault's registry entry (``agents`` in config.json). It binds the ``mcp``
channel only: a person (``cli``, ``editor``) applies. An omitted policy is the kind's default,
so a vault registered before the gate existed gets the safe one.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec


class Gate(enum.StrEnum):
    """What happens to an agent's operation of one class, from most to least trusting."""

    APPLY = "apply"  #: applied at once, journaled and undoable like any write
    PROPOSE = "propose"  #: stored as a proposal; a person applies or rejects it
    REFUSE = "refuse"  #: refused with the reason; nothing is stored

    @property
    def rank(self) -> int:
        """Higher is stricter; a change that lowers a cell's rank loosens the policy."""
        return {Gate.APPLY: 0, Gate.PROPOSE: 1, Gate.REFUSE: 2}[self]


class OpClass(enum.StrEnum):
    """The classes an agent's operation falls into; an operation may fall into more than one
    (a move that rewrites fifty backlinks is a ``move`` and ``wide``) and takes the strictest."""

    CREATE = "create"
    APPEND = "append"
    PATCH = "patch"
    SET_FRONTMATTER = "set_frontmatter"
    LINK = "link"
    MOVE = "move"
    DELETE = "delete"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    WIDE = "wide"  #: any operation changing more than ``wide_files`` files
    UNDO_OWN = "undo_own"  #: undoing an operation the same agent session made
    UNDO_OTHERS = "undo_others"  #: undoing anyone else's operation (a person's, another session's)
    CAPTURE = "capture"  #: source.capture: raw copies and source notes (files inside the vault, or sent content)
    CLAIM = "claim"  #: claim.add and claim.update
    VERDICT = "verdict"  #: any write that makes a claim accepted or rejected: a judgement, a person's by default
    FILE_READ = "file_read"  #: file.read of a file that is not a note (apply: allowed; propose or refuse: refused)
    FILE_WRITE = "file_write"  #: file.write: a canvas, base or other text file created or replaced
    FILE_MOVE = "file_move"  #: file.move and file.rename (every embed and link rewritten)
    FILE_DELETE = "file_delete"  #: file.delete: a file that is not a note, to .trash


WideFiles = Annotated[int, msgspec.Meta(ge=1, le=1024, description="An operation changing more files than this is 'wide'.")]


class HotPart(enum.StrEnum):
    """A part of a vault's hot session context: what the person chose an agent starts with."""

    OPS = "ops"  #: the most recent operations (method and files)
    PROPOSALS = "proposals"  #: the pending proposals
    DAILY = "daily"  #: today's daily note's headings
    PINNED = "pinned"  #: the start of one note the person pinned


DEFAULT_HOT_BYTES = 1000
MAX_HOT_BYTES = 8000
HotBytes = Annotated[int, msgspec.Meta(ge=0, le=MAX_HOT_BYTES, description="The hot summary's bound, in UTF-8 bytes.")]
HotPinned = Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=r"^[^\x00]*$", description="The pinned note's path.")]


class AgentPolicy(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """One vault's rules for agents. The defaults are a personal vault's."""

    create: Gate = Gate.APPLY
    append: Gate = Gate.APPLY
    patch: Gate = Gate.APPLY
    set_frontmatter: Gate = Gate.APPLY
    link: Gate = Gate.APPLY
    move: Gate = Gate.PROPOSE
    delete: Gate = Gate.PROPOSE
    merge: Gate = Gate.PROPOSE
    supersede: Gate = Gate.PROPOSE
    wide: Gate = Gate.PROPOSE
    undo_own: Gate = Gate.APPLY
    undo_others: Gate = Gate.REFUSE
    capture: Gate = Gate.APPLY
    claim: Gate = Gate.APPLY
    verdict: Gate = Gate.PROPOSE
    file_read: Gate = Gate.APPLY
    file_write: Gate = Gate.APPLY
    file_move: Gate = Gate.PROPOSE
    file_delete: Gate = Gate.PROPOSE
    wide_files: WideFiles = 10
    #: The agent-host hook refuses the host's own edit tools on this vault's files.
    guard: bool = True
    #: The session-start hook tells the agent about this vault (off: it prints nothing).
    session_context: bool = False
    #: What the session-start context adds as a "hot" summary, in this order (with session_context on).
    hot: Annotated[list[HotPart], msgspec.Meta(max_length=4)] = []
    hot_pinned: HotPinned | None = None  #: the note the ``pinned`` part shows the start of
    hot_bytes: HotBytes = DEFAULT_HOT_BYTES  #: the hot summary's bound, in UTF-8 bytes

    def gate(self, op_class: OpClass) -> Gate:
        return Gate(getattr(self, op_class.value))


class AgentPolicyChange(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Cells of an :class:`AgentPolicy` to change; an omitted cell keeps its value."""

    create: Gate | None = None
    append: Gate | None = None
    patch: Gate | None = None
    set_frontmatter: Gate | None = None
    link: Gate | None = None
    move: Gate | None = None
    delete: Gate | None = None
    merge: Gate | None = None
    supersede: Gate | None = None
    wide: Gate | None = None
    undo_own: Gate | None = None
    undo_others: Gate | None = None
    capture: Gate | None = None
    claim: Gate | None = None
    verdict: Gate | None = None
    file_read: Gate | None = None
    file_write: Gate | None = None
    file_move: Gate | None = None
    file_delete: Gate | None = None
    wide_files: WideFiles | None = None
    guard: bool | None = None
    session_context: bool | None = None
    hot: Annotated[list[HotPart], msgspec.Meta(max_length=4)] | None = None
    hot_pinned: HotPinned | None = None
    hot_bytes: HotBytes | None = None

    def applied_to(self, policy: AgentPolicy) -> AgentPolicy:
        changed = {name: getattr(self, name) for name in self.__struct_fields__ if getattr(self, name) is not None}
        return msgspec.structs.replace(policy, **changed)


#: An org vault is shared: every agent change waits for a person.
ORG_DEFAULT = AgentPolicy(
    create=Gate.PROPOSE,
    append=Gate.PROPOSE,
    patch=Gate.PROPOSE,
    set_frontmatter=Gate.PROPOSE,
    link=Gate.PROPOSE,
    capture=Gate.PROPOSE,
    claim=Gate.PROPOSE,
    file_write=Gate.PROPOSE,
)
PERSONAL_DEFAULT = AgentPolicy()
