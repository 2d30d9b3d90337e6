"""The handler of every write operation, made from its declaration in the catalogue.

No operation has a hand-written handler: the handler of ``SPEC`` runs the catalogue's
:class:`~vaultd.ops.Operation` for the call, and carries ``SPEC``'s params and result as its
annotations, so the handler table's checks see it typed as the spec like any other handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from protocol.methods.writes import WriteParams
from vaultd.api.handlers import CallContext, handles
from vaultd.ops import Operation, operations

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from protocol.methods.receipts import WriteReceipt

P = TypeVar("P", bound=WriteParams)
D = TypeVar("D")


def handler_of(op: Operation[P, D]) -> Callable[[CallContext, P], Awaitable[WriteReceipt[D]]]:
    """The handler that answers ``op``'s method: the operation, run for the caller."""

    async def handle(ctx: CallContext, params: P) -> WriteReceipt[D]:
        return await op.run(ctx, params)

    handle.__name__ = handle.__qualname__ = op.spec.tool_name
    handle.__doc__ = op.spec.summary
    handle.__annotations__ = {"ctx": CallContext, "params": op.spec.params, "return": op.spec.result}
    return handle


def register(op: Operation[Any, Any]) -> None:
    """Put ``op``'s handler in the handler table (a proposal-only operation has none)."""
    if not op.proposal_only:
        handles(op.spec)(handler_of(op))


for _op in operations().values():
    register(_op)
