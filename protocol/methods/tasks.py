"""Tasks: every checklist item in the vault, listed with filters and ticked off as a write.

A task is a list item with a checkbox (``- [ ] call Bob 📅 2026-12-01``). Its status is the
character between the brackets: ``x`` or ``X`` done, ``-`` cancelled, any other (a space, or a
custom status such as ``/``) open. Dates and priority are read from the Tasks plugin's emoji
signifiers and from Dataview's ``[due:: 2026-12-01]`` fields.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.reads import Cursor, Fresh, Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import EditParams

MAX_TASK_LINE_CHARS = 4096  #: a task line a caller quotes back (``expected_line``) is at most this long

Day = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=32,
        description="A day: YYYY-MM-DD, today, tomorrow, yesterday, or +Nd, -Nd, +Nw, -Nw from today (the daemon's local date).",
    ),
]
StatusChar = Annotated[str, msgspec.Meta(pattern=r"^[^\]\r\n]$", description="One status character, as written between the brackets.")]


class TaskListParams(Params):
    vault: OptionalVault = None
    status: Annotated[
        str,
        msgspec.Meta(
            pattern=r"^(open|done|cancelled|any|[^\]\r\n])$",
            description="open, done, cancelled, any, or one status character.",
        ),
    ] = "open"
    folder: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, description="Only notes below this folder.")] | None = None
    tag: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="Only those with this tag; a/b counts as a.")] | (
        None
    ) = None
    note: Annotated[Target | None, msgspec.Meta(description="Only the tasks of this note (a path, name or alias).")] = None
    due_before: Annotated[Day | None, described("Due before this day (exclusive).")] = None
    due_after: Annotated[Day | None, described("Due after this day (exclusive).")] = None
    due_on: Annotated[Day | None, described("Due on this day.")] = None
    scheduled_before: Annotated[Day | None, described("Scheduled before this day (exclusive).")] = None
    scheduled_after: Annotated[Day | None, described("Scheduled after this day (exclusive).")] = None
    scheduled_on: Annotated[Day | None, described("Scheduled on this day.")] = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many, by note path then line.")] = 100
    cursor: Cursor | None = None
    fresh: Fresh = False


class TaskItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    path: Annotated[str, described("The note holding the task.")]
    line: Annotated[int, described("Its 1-based line in the note's file; pass it to task.set.")]
    status: Annotated[str, described("The character between the brackets.")]
    text: Annotated[str, described("The task's text as written after the checkbox; pass it to task.set as expected_text.")]
    heading: Annotated[str | None, described("The heading it sits under.")] = None
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    created: str | None = None
    done: str | None = None
    cancelled: str | None = None
    priority: Annotated[str | None, described("highest, high, medium, low or lowest.")] = None
    recurrence: Annotated[str | None, described("The recurrence rule as written (the Tasks plugin's 🔁).")] = None
    tags: list[str] = []


class TaskListResult(Result):
    tasks: list[TaskItem]
    total: Annotated[int, described("Tasks matching the filters, all pages together.")]
    next_cursor: str | None


class TaskSetParams(EditParams, kw_only=True):
    target: Annotated[Target, msgspec.Meta(description="The note holding the task (a path, name or alias).")]
    line: Annotated[int, msgspec.Meta(ge=1, description="The task's line, as task.list gave it.")]
    status: Annotated[StatusChar | None, described("x done, a space open, - cancelled, ...; omitted: toggle.")] = None
    expected_text: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=MAX_TASK_LINE_CHARS,
                description="The text task.list gave: CONFLICT unless the line still holds it.",
            ),
        ]
        | None
    ) = None
    expected_status: Annotated[StatusChar | None, described("CONFLICT unless the task still has this status.")] = None


TASK_LIST = spec(
    "task.list",
    TaskListParams,
    TaskListResult,
    "Checklist items across the vault, filtered and paged.",
    Effect.READ,
    Trait.MCP,
)
TASK_SET: MethodSpec[TaskSetParams, WriteReceipt[NoDetail]] = MethodSpec(
    "task.set",
    TaskSetParams,
    receipt_type(NoDetail),
    "Tick off, reopen or set the status of one task (stamps the done date on Tasks-plugin lines); undoable.",
    Effect.WRITE,
    Trait.MCP,
)
SPECS = (TASK_LIST, TASK_SET)
