"""The methods a console page may call, and how a daemon error becomes an HTTP answer.

The page calls daemon methods by name through ``POST /api/call``; only the methods listed here
pass, and the daemon checks their params as it checks any client's. The list is what the views
need: reads, and the three decisions a person makes in the console (apply or reject a proposal,
undo an operation, each previewed first by a read or a ``dry_run``). Nothing here writes a
file: a change is the daemon's operation, on the ``editor`` channel, under the vault's policies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import ErrorCode
from protocol.methods import graph, lint, proposals, reads, service, vaults, writes

if TYPE_CHECKING:
    from protocol.methods.spec import AnySpec

#: Reads the views make.
READS: tuple[AnySpec, ...] = (
    reads.SEARCH,
    reads.LINKS,
    reads.STATS,
    vaults.VAULT_LIST,
    service.DAEMON_STATUS,
    proposals.PROPOSAL_LIST,
    proposals.PROPOSAL_SHOW,
    writes.OP_LIST,
    lint.LINT,
    graph.NEIGHBORS,
    graph.HUBS,
)
#: A person's decisions. op.undo is previewed with dry_run before it is confirmed.
DECISIONS: tuple[AnySpec, ...] = (
    proposals.PROPOSAL_APPLY,
    proposals.PROPOSAL_REJECT,
    writes.UNDO,
)
ALLOWED: dict[str, AnySpec] = {spec.name: spec for spec in (*READS, *DECISIONS)}
MAX_CALL_BODY = 64 * 1024  #: bytes of one /api/call body; every allowed method's params fit

HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.POLICY: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.AMBIGUOUS: 409,
    ErrorCode.CONFLICT: 409,
    ErrorCode.STALE_PREVIEW: 409,
    ErrorCode.LOCKED: 409,
    ErrorCode.LIMIT: 413,
    ErrorCode.VALIDATION: 422,
    ErrorCode.UNAVAILABLE: 503,
}


def http_status(code: ErrorCode) -> int:
    """The HTTP status a page gets for a daemon error (the error itself is in the body)."""
    return HTTP_STATUS.get(code, 500)
