"""Every note operation by its method name: its params, its planner and its receipt detail.

A stored proposal names its operation and keeps its params; applying it looks the operation up
here and runs it again through the runner, so a proposal is applied by exactly the code that
would have applied it when it was made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.methods import writes
from vaultd.ops.append import plan_append
from vaultd.ops.create import plan_create
from vaultd.ops.delete import delete_detail, plan_delete
from vaultd.ops.link import plan_link
from vaultd.ops.merge import merge_detail, plan_merge
from vaultd.ops.move import move_detail, plan_move
from vaultd.ops.patch import plan_patch
from vaultd.ops.runner import no_detail
from vaultd.ops.set_frontmatter import plan_set_frontmatter
from vaultd.ops.supersede import plan_supersede
from vaultd.ops.undo import plan_undo

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from protocol.methods.writes import WriteParams
    from vaultd.ops.context import OpContext
    from vaultd.txn.plan import Plan


@dataclass(frozen=True, slots=True)
class Operation:
    params: type[WriteParams]
    planner: Callable[[OpContext, Any], Plan]
    detail: Callable[[OpContext, Plan], Any]
    #: For an operation that writes more than one vault (``note.promote``): applies an approved
    #: proposal itself, as ``apply(call, params, approval)``, instead of the one-vault runner.
    apply: Callable[[Any, Any, Any], Awaitable[Any]] | None = None


OPERATIONS: dict[str, Operation] = {
    writes.CREATE.name: Operation(writes.CreateParams, plan_create, no_detail),
    writes.PATCH.name: Operation(writes.PatchParams, plan_patch, no_detail),
    writes.APPEND.name: Operation(writes.AppendParams, plan_append, no_detail),
    writes.SET_FRONTMATTER.name: Operation(writes.SetFrontmatterParams, plan_set_frontmatter, no_detail),
    writes.LINK.name: Operation(writes.LinkParams, plan_link, no_detail),
    writes.SUPERSEDE.name: Operation(writes.SupersedeParams, plan_supersede, no_detail),
    writes.MOVE.name: Operation(writes.MoveParams, plan_move, move_detail),
    writes.DELETE.name: Operation(writes.DeleteParams, plan_delete, delete_detail),
    writes.MERGE.name: Operation(writes.MergeParams, plan_merge, merge_detail),
    writes.UNDO.name: Operation(writes.UndoParams, plan_undo, no_detail),
}


def register(name: str, operation: Operation) -> None:
    """Add an operation declared outside this package (a room's own write, e.g. ``lint.fix``)."""
    if name in OPERATIONS:
        raise KeyError(f"{name} is already an operation")
    OPERATIONS[name] = operation
