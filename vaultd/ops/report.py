"""report.write: a report note under ``reports/``, created, or replaced when the caller says so.

A report records what a tool found (lint, the graph) for a person to read in the vault; it is
schema-exempt (:mod:`vaultd.ops._validate` skips the typed profile under ``reports/``) but every
other rule holds: secrets, PII, deny and private paths, the agent gate, the journal and undo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import reports
from protocol.methods.reports import report_path
from vaultd.errors import Conflict, LimitExceeded
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.ops.create import refuse_existing, screen_new_path
from vaultd.txn.engine import read_current
from vaultd.txn.plan import Change, Plan, file_bound, over_file_bound

if TYPE_CHECKING:
    from protocol.methods.reports import ReportParams
    from vaultd.ops._context import OpContext


@operation(reports.REPORT_WRITE, detail=no_detail)
def plan_report(ctx: OpContext, params: ReportParams) -> Plan:
    """The report, whole.

    Raises:
        ValidationFailed: VALIDATION, the path is unsafe or its name taken but for case (V08).
        Conflict: CONFLICT, the report exists and ``replace`` is not set.
        LimitExceeded: LIMIT, the body is over a report's bound in UTF-8 bytes, or the report it
            replaces is.
    """
    after = params.body.encode("utf-8")
    path = report_path(params.name)
    too_big = over_file_bound(path, len(after))  # the params bound counts characters; the file's is in bytes
    if too_big is not None:
        raise LimitExceeded(too_big)
    if path in ctx.index.notes or (ctx.root / path).exists():
        if not params.replace:
            raise Conflict(f"{path} exists; pass replace to write over it (the old report stays in the journal for undo)")
        # A report may have outgrown a note (the lint of a large vault): read it within its own bound.
        before = read_current(ctx.root, path, file_bound(path))
        if before is None:
            raise Conflict(f"{path} was removed since it was indexed; write it again")
        return Plan(op=reports.REPORT_WRITE.name, changes=[Change(path=path, before=before, after=after)], summary=f"rewrote report {path}")
    path = screen_new_path(ctx, path)
    refuse_existing(ctx, path, "report", "pass replace to write over it")
    return Plan(op=reports.REPORT_WRITE.name, changes=[Change(path=path, before=None, after=after)], summary=f"wrote report {path}")
