"""The ledgers' write operations, declared in the operation catalogue: the planners live beside
the ledgers' rules (:mod:`vaultd.ops.sources.capture`, :mod:`vaultd.ops.sources.claims`)."""

from __future__ import annotations

from protocol.methods import sources
from vaultd.ops.catalog import operation
from vaultd.ops.sources.capture import capture_detail, plan_capture
from vaultd.ops.sources.claims import claim_detail, plan_claim_add, plan_claim_update

operation(sources.CAPTURE, detail=capture_detail)(plan_capture)
operation(sources.CLAIM_ADD, detail=claim_detail)(plan_claim_add)
operation(sources.CLAIM_UPDATE, detail=claim_detail)(plan_claim_update)
