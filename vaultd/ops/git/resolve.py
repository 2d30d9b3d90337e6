"""A sync conflict, kept as a proposal only a person applies: ``git.resolve``.

When a note changed here and on origin does not merge, sync writes origin's version into the vault
(published history wins; this machine's commit stays in the shared history too) and stores a
proposal of this operation. Applying it writes both versions into the note: the frontmatter
merged key by key where the keys do not collide, the body with both versions of each conflicting
passage between markers, and a callout naming what collided. The person finishes the note by hand.
Rejecting it keeps origin's version. A file that is not text is restored to this machine's bytes
when the proposal is applied.

It is an operation like any other (journaled, undoable, committed as a checkpoint, pushed by the
next sync), re-planned at apply time from the three blobs the proposal names. The proposal itself
is made by the integration (:mod:`vaultd.git.integration`), as one of its recoverable steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import git
from vaultd.errors import NotFound
from vaultd.git.integration import RESOLVE_OP, resolution
from vaultd.git.record import GIT_STATE_DIR
from vaultd.git.repo import find
from vaultd.ops import no_detail
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan

if TYPE_CHECKING:
    from protocol.methods.git import ResolveParams
    from vaultd.ops import OpContext

OP = RESOLVE_OP


@operation(git.RESOLVE, detail=no_detail, proposal_only=True)
def plan_resolve(ctx: OpContext, params: ResolveParams) -> Plan:
    """Re-plan a sync conflict's resolution (both versions in the note) from the three blobs its
    proposal names.

    Raises:
        NotFound: NOT_FOUND, the vault is no longer in a git repository.
    """
    repo = find(ctx.root)
    if repo is None:
        raise NotFound("the vault is no longer in a git repository; the versions this proposal names are gone")
    work = ctx.root / GIT_STATE_DIR
    work.mkdir(mode=0o700, parents=True, exist_ok=True)
    current = ctx.read(params.path)
    return Plan(
        op=OP,
        changes=[Change(path=params.path, before=current, after=resolution(repo, work, params))],
        summary=f"kept both versions of {params.path} (a sync conflict)",
        log_type="SYNC",
    )
