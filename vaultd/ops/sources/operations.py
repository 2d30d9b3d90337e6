"""The ledgers' write operations, registered in the operation catalogue so that a proposal of one
is applied by the same planner that would have applied it when it was made."""

from __future__ import annotations

from protocol.methods import sources
from vaultd.ops.catalog import OPERATIONS, Operation, register
from vaultd.ops.sources.capture import capture_detail, plan_capture
from vaultd.ops.sources.claims import claim_detail, plan_claim_add, plan_claim_update

CAPTURE = Operation(sources.CaptureParams, plan_capture, capture_detail)
CLAIM_ADD = Operation(sources.ClaimAddParams, plan_claim_add, claim_detail)
CLAIM_UPDATE = Operation(sources.ClaimUpdateParams, plan_claim_update, claim_detail)

for _name, _operation in (
    (sources.CAPTURE.name, CAPTURE),
    (sources.CLAIM_ADD.name, CLAIM_ADD),
    (sources.CLAIM_UPDATE.name, CLAIM_UPDATE),
):
    if _name not in OPERATIONS:
        register(_name, _operation)
