"""The write operations, each declared once: its method spec, its planner, its receipt detail.

A planner declares itself where it is written, with ``@operation(SPEC, detail=...)``; the spec
(``MethodSpec[P, WriteReceipt[D]]``) holds the planner to its params ``P`` and the detail to
its ``D``, so the type checker refuses a planner bound to the wrong method. Everything else is
made from this catalogue: the daemon's handler of each operation (:mod:`vaultd.api.operation_methods`),
and the application of a stored proposal, which looks its operation up here and runs it again
through the runner, so a proposal is applied by exactly the code that would have applied it when
it was made. :func:`operations` imports every module that may declare one, so no list of them is
kept by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from protocol.methods.receipts import WriteReceipt
from protocol.methods.writes import WriteParams
from vaultd.ops._context import OpContext
from vaultd.ops._runner import Approval, WriteCall, run_operation
from vaultd.txn.plan import Plan
from vaultd.vault_work import VAULT_WORK

if TYPE_CHECKING:
    from protocol.methods.spec import MethodSpec

P = TypeVar("P", bound=WriteParams)
D = TypeVar("D")
PL = TypeVar("PL", bound=Plan)  #: what a planner returns: a Plan, or one that carries more for its detail

Planner = Callable[[OpContext, P], Plan]
Apply = Callable[[WriteCall, P, Approval | None], Awaitable[WriteReceipt[D]]]

#: The packages whose modules may declare operations: every planner is under vaultd.ops, a room's
#: own in its subpackage (vaultd.ops.sources, vaultd.ops.git).
PACKAGES = ("vaultd.ops",)


@dataclass(frozen=True, slots=True)
class Operation(Generic[P, D]):
    """One write operation: what the runner needs to run it for a call or for an approval."""

    spec: MethodSpec[P, WriteReceipt[D]]
    #: Plans the change (worker thread, index held still); None for one that applies itself.
    planner: Planner[P] | None
    detail: Callable[[OpContext, Plan], D] | None
    #: The operation id the call reverses (``op.undo``), for the journal and the event.
    undoes: Callable[[P], str | None] | None = None
    #: For an operation that writes more than one vault (``note.promote``): runs it itself,
    #: under every vault's writer, instead of the one-vault runner.
    apply: Apply[P, D] | None = None
    #: Made by the daemon and applied only as a proposal (``git.resolve``): no caller calls it.
    proposal_only: bool = False
    #: Plans over the whole vault (``vault.tidy``, ``lint.fix``): admitted as vault-wide work
    #: (:mod:`vaultd.vault_work`), in turn and bounded per connection, before it runs.
    vault_wide: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    async def run(self, call: WriteCall, params: P, approval: Approval | None = None) -> WriteReceipt[D]:
        """Run it for ``call``, or apply it as the proposal ``approval`` names; vault-wide work
        waits for its turn first, holding nothing of the vault while it waits.

        Raises:
            LimitExceeded: LIMIT, vault-wide work past the connection's bound.
        """
        if not self.vault_wide:
            return await self._run(call, params, approval)
        async with VAULT_WORK.admitted(call, self.name), VAULT_WORK.turn():
            return await self._run(call, params, approval)

    async def _run(self, call: WriteCall, params: P, approval: Approval | None) -> WriteReceipt[D]:
        if self.apply is not None:
            return await self.apply(call, params, approval)
        if self.planner is None or self.detail is None:
            raise TypeError(f"{self.name} has neither a planner nor its own apply")
        undoes = self.undoes(params) if self.undoes is not None else None
        return await run_operation(call, params, self.planner, self.detail, undoes=undoes, approval=approval)


OPERATIONS: dict[str, Operation[Any, Any]] = {}


def declare(op: Operation[P, D]) -> Operation[P, D]:
    """Add ``op`` to the catalogue; a second declaration of one method is a start-up failure."""
    if op.name in OPERATIONS:
        raise KeyError(f"{op.name} is declared twice as an operation")
    OPERATIONS[op.name] = op
    return op


def operation(
    spec: MethodSpec[P, WriteReceipt[D]],
    *,
    detail: Callable[[OpContext, Plan], D],
    undoes: Callable[[P], str | None] | None = None,
    proposal_only: bool = False,
    vault_wide: bool = False,
) -> Callable[[Callable[[OpContext, P], PL]], Callable[[OpContext, P], PL]]:
    """Declare the decorated function as the planner of ``spec``, run by the one-vault runner."""

    def register(planner: Callable[[OpContext, P], PL]) -> Callable[[OpContext, P], PL]:
        declare(Operation(spec, planner, detail, undoes=undoes, proposal_only=proposal_only, vault_wide=vault_wide))
        return planner

    return register


def applies_itself(spec: MethodSpec[P, WriteReceipt[D]], *, vault_wide: bool = False) -> Callable[[Apply[P, D]], Apply[P, D]]:
    """Declare the decorated coroutine as the whole of ``spec``'s operation (plans, gates and
    applies across vaults), for the one operation the one-vault runner cannot run."""

    def register(apply: Apply[P, D]) -> Apply[P, D]:
        declare(Operation(spec, None, None, apply=apply, vault_wide=vault_wide))
        return apply

    return register


_DISCOVERED: set[str] = set()


def discover(packages: tuple[str, ...] = PACKAGES) -> None:
    """Import every module below ``packages``, so each operation declares itself (once a package)."""
    for name in packages:
        if name in _DISCOVERED:
            continue
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            importlib.import_module(module.name)
        _DISCOVERED.add(name)


def operations() -> dict[str, Operation[Any, Any]]:
    """The whole catalogue, by method name."""
    discover()
    return OPERATIONS
