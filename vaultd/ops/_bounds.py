"""An operation's bounds, judged from the index before a wide operation reads its notes.

The engine refuses a plan over :data:`~vaultd.txn.plan.MAX_OP_FILES` files or
:data:`~vaultd.txn.plan.MAX_OP_BYTES` bytes, and the runner does so right after planning, so
even a preview says it; a move or a merge asks first, from the index's backlinks and sizes, so
that one over a bound is refused at once rather than after reading and rewriting every note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultd.errors import LimitExceeded
from vaultd.txn.plan import over_bounds

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext


def check_size_first(ctx: OpContext, what: str, sources: list[str], written: list[str], removed: int = 0) -> None:
    """Refuse (LIMIT) before reading any note an operation that would rewrite more notes, or more
    bytes, than one operation may write: the index knows both, so a preview over a bound answers
    at once instead of after planning thousands of rewrites. ``sources`` are the notes whose links
    it rewrites, ``written`` the other notes it writes (their sizes now as the estimate), and
    ``removed`` how many files it deletes.

    Raises:
        LimitExceeded: LIMIT, naming the bound and how many notes link.
    """
    sizes = [ctx.index.notes[p].size for p in (*sources, *written) if p in ctx.index.notes]
    why = over_bounds(len(sources) + len(written) + removed, sum(sizes))
    if why is not None:
        raise LimitExceeded(
            f"{what} would rewrite links in {len(sources)} notes: {why}; nothing was read or written. "
            "Rewrite some of those links first (each 'vaultctl patch' is its own operation), then retry"
        )
