"""task.list: every checklist item the index holds, filtered and paged; task.set is an operation
(``vaultd.ops.task_set``). A private note's tasks are left out for the callers it is private to.

The list is answered on the event loop from the index's task fields, with no file read: at 10,000
notes it costs a walk of the notes that hold tasks (see docs/performance.md).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from protocol.methods import tasks
from protocol.methods.tasks import TaskItem, TaskListParams, TaskListResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import decode_cursor, encode_cursor, live_view, log_path_of
from vaultd.errors import InvalidParams
from vaultd.obsidian.tasks import DateRange, TaskFilter, resolve_day, select, task_table
from vaultd.vault.lookup import find_note

if TYPE_CHECKING:
    from vaultd.vault.model import Task


def _day(name: str, text: str | None, today: dt.date) -> str | None:
    """A day param as ``YYYY-MM-DD``.

    Raises:
        InvalidParams: INVALID_PARAMS, not a day this daemon reads.
    """
    if text is None:
        return None
    try:
        return resolve_day(text, today).isoformat()
    except ValueError as exc:
        raise InvalidParams(f"{name}: {exc}") from exc


def _item(path: str, task: Task) -> TaskItem:
    return TaskItem(
        path=path,
        line=task.line,
        status=task.status,
        text=task.text,
        heading=task.heading,
        due=task.due,
        scheduled=task.scheduled,
        start=task.start,
        created=task.created,
        done=task.done,
        cancelled=task.cancelled,
        priority=task.priority,
        recurrence=task.recurrence,
        tags=list(task.tags),
    )


def _after(cursor: str) -> tuple[str, int]:
    """The (path, line) a cursor names: the last task of the previous page.

    Raises:
        InvalidParams: INVALID_PARAMS, the cursor is not one this daemon returned.
    """
    path, _, line = decode_cursor(cursor).rpartition("\n")
    if not path or not line.isdigit():
        raise InvalidParams("the cursor is not one this daemon returned")
    return path, int(line)


@handles(tasks.TASK_LIST)
async def task_list(ctx: CallContext, params: TaskListParams) -> TaskListResult:
    """Tasks matching every filter given, by note path then line.

    Raises:
        InvalidParams: INVALID_PARAMS, a day or the cursor is not one this daemon reads.
    """
    live, view = await live_view(ctx, params.vault, params.fresh)
    index = live.index
    today = dt.date.today()
    note = find_note(index, params.note, view.hidden) if params.note is not None else None
    wanted = TaskFilter(
        status=params.status,
        folder=params.folder.strip("/") if params.folder else None,
        tag=params.tag.lstrip("#").casefold() if params.tag else None,
        note=note,
        due=DateRange(
            before=_day("due_before", params.due_before, today),
            after=_day("due_after", params.due_after, today),
            on=_day("due_on", params.due_on, today),
        ),
        scheduled=DateRange(
            before=_day("scheduled_before", params.scheduled_before, today),
            after=_day("scheduled_after", params.scheduled_after, today),
            on=_day("scheduled_on", params.scheduled_on, today),
        ),
    )
    after = _after(params.cursor) if params.cursor else None
    log_path = log_path_of(ctx, params.vault)
    hides = view.hides_anything

    def shown(path: str) -> bool:
        return path != log_path and not (hides and view.hidden(path))

    page, total, more = select(task_table(index), wanted, shown, after, params.limit)
    cursor = encode_cursor(f"{page[-1][0]}\n{page[-1][1].line}") if more and page else None
    return TaskListResult(tasks=[_item(p, t) for p, t in page], total=total, next_cursor=cursor)
