"""Write operations, one planner module per method, each declared in the catalogue.

The modules named with a leading underscore are the planners' helpers (the runner, the context a
planner sees, validation, the agent gate, receipts, stamps); other packages reach them only
through the names below, so the helpers can change without their callers knowing.
"""

from vaultd.ops._agent_gate import StaleProposal, held_notice, judge, refuse_volume_writes, stamp_date, stored_params, who
from vaultd.ops._announce import created_event, decided_event
from vaultd.ops._context import OpContext
from vaultd.ops._receipts import change_receipts, receipt_of
from vaultd.ops._runner import (
    JOURNAL_KEEP,
    JOURNAL_MAX_BYTES,
    Approval,
    WriteCall,
    carry_out_together,
    new_op_id,
    no_detail,
    planning,
    screen_log_line,
)
from vaultd.ops._stamps import updated_key
from vaultd.ops._validate import check_policy, validate
from vaultd.ops.catalog import Operation, applies_itself, operation, operations

__all__ = [
    "JOURNAL_KEEP",
    "JOURNAL_MAX_BYTES",
    "Approval",
    "OpContext",
    "Operation",
    "StaleProposal",
    "WriteCall",
    "applies_itself",
    "carry_out_together",
    "change_receipts",
    "check_policy",
    "created_event",
    "decided_event",
    "held_notice",
    "judge",
    "new_op_id",
    "no_detail",
    "operation",
    "operations",
    "planning",
    "receipt_of",
    "refuse_volume_writes",
    "screen_log_line",
    "stamp_date",
    "stored_params",
    "updated_key",
    "validate",
    "who",
]
