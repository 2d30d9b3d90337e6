"""tasks, task done|undo|toggle|set: checklist items across the vault, and ticking one off.

A task is named ``NOTE:LINE`` (the note by path, name or alias; the line as ``vaultctl tasks``
prints it). A status change is an ordinary write: journaled, undoable with ``vaultctl undo``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.errors import ExitStatus
from protocol.methods import tasks
from protocol.methods.tasks import TaskListParams, TaskListResult, TaskSetParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command

task_app = typer.Typer(help="Tick off, reopen or set the status of one task (NOTE:LINE).", no_args_is_help=True)

TaskRef = Annotated[str, typer.Argument(metavar="NOTE:LINE", help="The task: its note (a path, name or alias), a colon, its line.")]
TextOpt = Annotated[str | None, typer.Option("--expected-text", help=doc(TaskSetParams, "expected_text"))]
WasOpt = Annotated[str | None, typer.Option("--expected-status", metavar="CHAR", help=doc(TaskSetParams, "expected_status"))]


def _split(ref: str) -> tuple[str, int]:
    note, _, line = ref.rpartition(":")
    if not note or not line.isdigit() or int(line) < 1:
        fail(f"{ref!r} is not NOTE:LINE (a note, a colon, a line number from 'vaultctl tasks')", ExitStatus.USAGE)
    return note, int(line)


def _tasks_text(r: TaskListResult) -> str:
    if not r.tasks:
        return "no tasks match"
    rows = [(f"{t.path}:{t.line}", f"[{t.status}]", t.due or "", t.priority or "", t.text) for t in r.tasks]
    tail = f"{len(r.tasks)} of {r.total} tasks" + (f"; next page: --cursor {r.next_cursor}" if r.next_cursor else "")
    return render.compose([render.table(["task", "status", "due", "priority", "text"], rows), tail])


def tasks_list(
    status: Annotated[str, typer.Option(help=doc(TaskListParams, "status"))] = "open",
    folder: Annotated[str | None, typer.Option(help=doc(TaskListParams, "folder"))] = None,
    tag: Annotated[str | None, typer.Option(help=doc(TaskListParams, "tag"))] = None,
    note: Annotated[str | None, typer.Option(help=doc(TaskListParams, "note"))] = None,
    due_before: Annotated[str | None, typer.Option(help=doc(TaskListParams, "due_before"))] = None,
    due_after: Annotated[str | None, typer.Option(help=doc(TaskListParams, "due_after"))] = None,
    due_on: Annotated[str | None, typer.Option(help=doc(TaskListParams, "due_on"))] = None,
    scheduled_before: Annotated[str | None, typer.Option(help=doc(TaskListParams, "scheduled_before"))] = None,
    scheduled_after: Annotated[str | None, typer.Option(help=doc(TaskListParams, "scheduled_after"))] = None,
    scheduled_on: Annotated[str | None, typer.Option(help=doc(TaskListParams, "scheduled_on"))] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help=doc(TaskListParams, "limit"))] = 100,
    cursor: Annotated[str | None, typer.Option(help=doc(TaskListParams, "cursor"))] = None,
    vault: VaultOpt = None,
    fresh: Annotated[bool, typer.Option("--fresh", help=doc(TaskListParams, "fresh"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Checklist items across the vault (open ones unless --status says otherwise), by note and line."""
    with session() as c:
        params = TaskListParams(
            vault=pick_vault(c, vault),
            status=status,
            folder=folder,
            tag=tag,
            note=note,
            due_before=due_before,
            due_after=due_after,
            due_on=due_on,
            scheduled_before=scheduled_before,
            scheduled_after=scheduled_after,
            scheduled_on=scheduled_on,
            limit=limit,
            cursor=cursor,
            fresh=fresh,
        )
        result = call(tasks.TASK_LIST, params, client=c)
    emit(result, as_json, _tasks_text)


def _set(ref: str, status: str | None, expected_text: str | None, was: str | None, flags: WriteFlags[TaskSetParams]) -> None:
    note, line = _split(ref)
    flags.run(
        lambda steering: TaskSetParams(target=note, line=line, status=status, expected_text=expected_text, expected_status=was, **steering)
    )


@task_app.command("done")
@write_command(tasks.TASK_SET)
def task_done(task: TaskRef, expected_text: TextOpt = None, expected_status: WasOpt = None, *, flags: WriteFlags[TaskSetParams]) -> None:
    """Mark the task done ([x]; a line in the Tasks plugin's format gets today's done date)."""
    _set(task, "x", expected_text, expected_status, flags)


@task_app.command("undo")
@write_command(tasks.TASK_SET)
def task_undo(task: TaskRef, expected_text: TextOpt = None, expected_status: WasOpt = None, *, flags: WriteFlags[TaskSetParams]) -> None:
    """Reopen the task ([ ]; its done date is removed). To reverse a whole write, use 'vaultctl undo OP_ID'."""
    _set(task, " ", expected_text, expected_status, flags)


@task_app.command("toggle")
@write_command(tasks.TASK_SET)
def task_toggle(task: TaskRef, expected_text: TextOpt = None, expected_status: WasOpt = None, *, flags: WriteFlags[TaskSetParams]) -> None:
    """Open becomes done, anything else becomes open."""
    _set(task, None, expected_text, expected_status, flags)


@task_app.command("set")
@write_command(tasks.TASK_SET)
def task_set(
    task: TaskRef,
    status: Annotated[str, typer.Argument(metavar="CHAR", help=doc(TaskSetParams, "status"))],
    expected_text: TextOpt = None,
    expected_status: WasOpt = None,
    *,
    flags: WriteFlags[TaskSetParams],
) -> None:
    """Set the task's status character (x, a space, -, /, or any custom one)."""
    if len(status) != 1 or status in "]\r\n":
        fail(f"{status!r} is not one status character", ExitStatus.USAGE)
    _set(task, status, expected_text, expected_status, flags)
