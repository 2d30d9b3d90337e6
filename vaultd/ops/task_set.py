"""task.set: one task's status changed, and nothing else of the note but its done date.

The line is checked against what the caller saw (its text and status from ``task.list``), on the
file as it is now: a line that moved, changed or is no longer a task is refused, never guessed
at. On a line written with the Tasks plugin's signifiers, done stamps ``✅ YYYY-MM-DD`` and undone
removes it (:func:`vaultd.obsidian.tasks.with_status`).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from protocol.methods import tasks
from vaultd.errors import Conflict, InvalidParams
from vaultd.obsidian.tasks import toggled, with_status
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault.task_line import parse_task

if TYPE_CHECKING:
    from protocol.methods.tasks import TaskSetParams
    from vaultd.ops._context import OpContext


def line_span(text: str, line: int) -> tuple[int, int] | None:
    """[start, end) of 1-based ``line`` in ``text`` without its line break (``\\r\\n`` or ``\\n``);
    None past the end."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    if start > len(text) or (start == len(text) and line > 1 and not text.endswith("\n")):
        return None
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end


@operation(tasks.TASK_SET, detail=no_detail)
def plan_task_set(ctx: OpContext, params: TaskSetParams) -> Plan:
    """Plan one task's status change.

    Raises:
        InvalidParams: INVALID_PARAMS, the line is not a task of the note (past its end, plain text,
            or inside code).
        Conflict: CONFLICT, the task's text or status is no longer what the caller saw, or the note
            changed (``expected_sha``).
    """
    path = ctx.find(params.target)
    raw, text = ctx.read_target(path)
    span = line_span(text, params.line)
    record = ctx.index.notes.get(path)
    indexed = record is not None and any(t.line == params.line for t in record.tasks)
    parsed = parse_task(text[span[0] : span[1]]) if span is not None else None
    if parsed is None or not indexed:
        raise InvalidParams(f"line {params.line} of {path} is not a task; list them with task.list")
    assert span is not None
    if params.expected_text is not None and parsed.text != params.expected_text:
        raise Conflict(f"line {params.line} of {path} no longer holds that task (it reads {parsed.text[:80]!r}); list the tasks again")
    if params.expected_status is not None and parsed.status != params.expected_status:
        raise Conflict(f"the task on line {params.line} of {path} has status {parsed.status!r} now, not {params.expected_status!r}")
    status = params.status if params.status is not None else toggled(parsed.status)
    line = with_status(text[span[0] : span[1]], status, dt.date.fromisoformat(ctx.today))
    after = text[: span[0]] + line + text[span[1] :]
    return Plan(
        op=tasks.TASK_SET.name,
        changes=[Change(path=path, before=raw, after=after.encode("utf-8"))],
        summary=f"set task on line {params.line} of {path} to [{status}]",
    )
