"""What a method is: its name, its params and result types, and what calling it does.

A :class:`MethodSpec` is declared once, beside its Structs in ``protocol.methods.*``; the daemon
binds its handler to it, the CLI and the MCP shim call through it, and the schemas and reference
are generated from it.

A method's behaviour is described by two independent things:

- its :class:`Effect`, one value on one axis: what a call does to the vaults and the daemon. The
  older flags ``read_only``, ``idempotent`` and ``destructive`` were three booleans on this one
  axis; of their eight combinations only four mean anything (a read that destroys, or a read
  that is not safe to repeat, is not a method this daemon could have), and an enum makes the
  other four unrepresentable. The booleans remain as properties, since MCP hints speak in them.
- its :class:`Trait` flags, each orthogonal to the effect and to each other: whether it is an MCP
  tool (most reads and writes are, administration is not), whether it is two-step (a preview,
  then a confirm carrying the fingerprint: true of some destructive methods but not of
  ``op.undo``), whether it opens the session (``hello``, answered before any other call), and
  whether agents may call it though it is no tool (the event stream the shim relays).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from protocol.methods.common import Params

P = TypeVar("P", bound=Params)
R = TypeVar("R")


class Effect(enum.Enum):
    """What one call does; ordered from harmless to irreversible-without-undo."""

    READ = "read"  #: changes nothing; safe to repeat and to retry after a dropped connection
    IDEMPOTENT_WRITE = "idempotent-write"  #: changes state, but a repeat with the same params changes nothing more
    WRITE = "write"  #: changes state; a repeat may change it again (an append appends twice)
    DESTRUCTIVE = "destructive"  #: removes or replaces what exists (a move, a delete, an unregister)

    @property
    def read_only(self) -> bool:
        return self is Effect.READ

    @property
    def idempotent(self) -> bool:
        return self in (Effect.READ, Effect.IDEMPOTENT_WRITE)

    @property
    def destructive(self) -> bool:
        return self is Effect.DESTRUCTIVE


class Trait(enum.Flag):
    """Properties independent of the effect; combine with ``|``."""

    NONE = 0
    MCP = enum.auto()  #: exposed as an MCP tool, on the ``mcp`` channel
    TWO_STEP = enum.auto()  #: answers a preview with a fingerprint; the confirm call carries it
    OPENS_SESSION = enum.auto()  #: answered before ``hello`` (it is ``hello``)
    #: open to the ``mcp`` channel without being a tool: the event stream, which the MCP shim
    #: relays to a host as resource updates (a tool call answers once; a stream does not fit it)
    AGENT_STREAM = enum.auto()


@dataclass(frozen=True, slots=True)
class MethodSpec(Generic[P, R]):
    """One method. ``P`` is its params Struct, ``R`` its result type (a Struct or a tagged union).

    ``result`` is typed ``Any`` at run time because a tagged union (``A | B``) is a valid msgspec
    type but not a ``type``; the type parameter ``R`` carries what callers get back, and
    ``tests/unit/test_protocol_table.py`` checks that both agree with the handlers.
    """

    name: str
    params: type[P]
    result: Any
    summary: str  #: one line for people and agents: what it does and when to use it
    effect: Effect
    traits: Trait = Trait.NONE

    def __post_init__(self) -> None:
        if Trait.TWO_STEP in self.traits and not {"confirm", "fingerprint"} <= set(self.params.__struct_fields__):
            raise TypeError(f"{self.name} is two-step but its params lack confirm and fingerprint")

    @property
    def tool_name(self) -> str:
        """The MCP tool name: dots become underscores, which every host accepts."""
        return self.name.replace(".", "_")

    @property
    def read_only(self) -> bool:
        return self.effect.read_only

    @property
    def idempotent(self) -> bool:
        return self.effect.idempotent

    @property
    def destructive(self) -> bool:
        return self.effect.destructive

    @property
    def two_step(self) -> bool:
        return Trait.TWO_STEP in self.traits

    @property
    def mcp(self) -> bool:
        return Trait.MCP in self.traits

    @property
    def agent_stream(self) -> bool:
        """Open to the ``mcp`` channel though not a tool (:attr:`Trait.AGENT_STREAM`)."""
        return Trait.AGENT_STREAM in self.traits

    @property
    def session(self) -> bool:
        """Answered before ``hello`` too (``hello`` itself)."""
        return Trait.OPENS_SESSION in self.traits


def spec(name: str, params: type[P], result: type[R], summary: str, effect: Effect, traits: Trait = Trait.NONE) -> MethodSpec[P, R]:
    """A spec whose result is a Struct: both type parameters are inferred from the arguments."""
    return MethodSpec(name, params, result, summary, effect, traits)


AnySpec = MethodSpec[Any, Any]  #: a spec of any method, for code that handles every method alike
