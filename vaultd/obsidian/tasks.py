"""Tasks as the Tasks plugin and Dataview see them: which are open, which match a query, and how a
line changes when its status does.

The index holds every checklist item (:class:`~vaultd.vault.model.Task`, parsed by
:mod:`vaultd.vault.task_line` when a note is indexed); these are the pure rules over them:

- a status character's class: ``x``/``X`` done, ``-`` cancelled, anything else open (a space, and
  the custom statuses ``/``, ``>``, ``?``, ``!`` ... that themes and the Tasks plugin add);
- a date a caller writes as ``YYYY-MM-DD`` or as a word relative to today (``today``,
  ``tomorrow``, ``yesterday``, ``+3d``, ``-1w``);
- a filter (status, folder, tag, note, due and scheduled ranges) as one predicate;
- a status change on one line: the character between the brackets replaced, and, on a line that
  uses the Tasks plugin's signifiers, ``✅ YYYY-MM-DD`` stamped when it becomes done and removed
  when it stops being done. A recurring task is not repeated: vaultd does not create the next
  occurrence, as the Tasks plugin would.
"""

from __future__ import annotations

import bisect
import datetime as dt
import enum
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from vaultd.vault.task_line import CANCELLED, DONE, TASK_RE, parse_task

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.vault.index import VaultIndex
    from vaultd.vault.model import Task


class StatusClass(enum.StrEnum):
    OPEN = "open"
    DONE = "done"
    CANCELLED = "cancelled"


def status_class(status: str) -> StatusClass:
    if status in DONE:
        return StatusClass.DONE
    if status == CANCELLED:
        return StatusClass.CANCELLED
    return StatusClass.OPEN


_RELATIVE_RE: Final = re.compile(r"([+-])(\d{1,4})([dw])")
_ISO_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


def resolve_day(text: str, today: dt.date) -> dt.date:
    """A day as a caller writes it: ``YYYY-MM-DD``, ``today``, ``tomorrow``, ``yesterday``, or
    ``+Nd``/``-Nd``/``+Nw``/``-Nw`` from today.

    Raises:
        ValueError: none of those.
    """
    word = text.strip().lower()
    if word == "today":
        return today
    if word == "tomorrow":
        return today + dt.timedelta(days=1)
    if word == "yesterday":
        return today - dt.timedelta(days=1)
    m = _RELATIVE_RE.fullmatch(word)
    if m is not None:
        days = int(m.group(2)) * (7 if m.group(3) == "w" else 1)
        return today + dt.timedelta(days=days if m.group(1) == "+" else -days)
    if _ISO_RE.fullmatch(word):
        return dt.date.fromisoformat(word)
    raise ValueError(f"{text!r} is not a day: give YYYY-MM-DD, today, tomorrow, yesterday, or +Nd, -Nd, +Nw, -Nw")


@dataclass(frozen=True, slots=True)
class DateRange:
    """Days as ``YYYY-MM-DD`` strings (which compare as dates); each bound optional. ``before``
    and ``after`` are exclusive and ``on`` exact, as in the Tasks plugin's queries."""

    before: str | None = None
    after: str | None = None
    on: str | None = None

    @property
    def given(self) -> bool:
        return self.before is not None or self.after is not None or self.on is not None

    def holds(self, day: str | None) -> bool:
        if not self.given:
            return True
        if day is None:
            return False
        if self.on is not None and day != self.on:
            return False
        if self.before is not None and not day < self.before:
            return False
        return not (self.after is not None and not day > self.after)


@dataclass(frozen=True, slots=True)
class TaskFilter:
    """What ``task.list`` asks for, as one predicate on a note and then on each of its tasks."""

    status: str = "open"  #: open, done, cancelled, any, or one status character
    folder: str | None = None  #: a folder prefix without slashes at the ends
    tag: str | None = None  #: casefolded, without ``#``; nested tags match their parent
    note: str | None = None  #: one note's path
    due: DateRange = DateRange()
    scheduled: DateRange = DateRange()

    def wants_note(self, path: str) -> bool:
        if self.note is not None and path != self.note:
            return False
        return self.folder is None or path.startswith(self.folder + "/")

    def counts_open(self) -> bool:
        """Whether a task matches exactly when it is open (no other check): the table counts those."""
        return self.status == StatusClass.OPEN.value and self.tag is None and not self.due.given and not self.scheduled.given

    def counts_all(self) -> bool:
        return self.status == "any" and self.tag is None and not self.due.given and not self.scheduled.given

    def predicate(self) -> Callable[[Task], bool]:
        """:meth:`wants` as one function doing only the checks asked for: ``task.list`` calls it
        once per task of the vault, so "open tasks" costs one membership test each, and a date
        range two string comparisons more."""
        checks: list[Callable[[Task], bool]] = []
        status = self.status
        if status == StatusClass.OPEN.value:
            checks.append(lambda t: t.status not in _CLOSED)
        elif status in (StatusClass.DONE.value, StatusClass.CANCELLED.value):
            wanted_class = frozenset(DONE) if status == StatusClass.DONE.value else frozenset(CANCELLED)
            checks.append(lambda t: t.status in wanted_class)
        elif len(status) == 1:
            checks.append(lambda t: t.status == status)
        if self.tag is not None:
            tag = self.tag
            checks.append(lambda t: any(_tag_matches(x, tag) for x in t.tags))
        for name, days in (("due", self.due), ("scheduled", self.scheduled)):
            if days.given:
                checks.append(_day_check(name, days))
        if not checks:
            return lambda t: True
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda t: first(t) and second(t)
        return lambda t: all(check(t) for check in checks)

    def wants(self, task: Task) -> bool:
        status = self.status
        if status != "any":
            if len(status) == 1:
                if task.status != status:
                    return False
            elif status_class(task.status).value != status:
                return False
        if self.tag is not None and not any(_tag_matches(t, self.tag) for t in task.tags):
            return False
        return self.due.holds(task.due) and self.scheduled.holds(task.scheduled)


_CLOSED: Final = frozenset({*DONE, CANCELLED})


def _day_check(name: str, days: DateRange) -> Callable[[Task], bool]:
    """One date field held to a range, with the bounds fixed in advance (days are ``YYYY-MM-DD``
    strings, never empty, so ``""`` and ``"\uffff"`` stand for an open end)."""
    if days.on is not None:
        on = days.on
        if not DateRange(before=days.before, after=days.after).holds(on):
            return lambda t: False
        return (lambda t: t.due == on) if name == "due" else (lambda t: t.scheduled == on)
    low = days.after if days.after is not None else ""
    high = days.before if days.before is not None else "\uffff"
    if name == "due":
        return lambda t: t.due is not None and low < t.due < high
    return lambda t: t.scheduled is not None and low < t.scheduled < high


@dataclass(slots=True, eq=False)
class TaskTable:
    """The notes holding tasks, in path order, kept for one index and brought up to date by the
    paths each change touched (:meth:`VaultIndex.changed_since`), so a list does not sort the
    vault's paths on every call. Used on the event loop, where the index changes."""

    generation: int = -1
    tasks: dict[str, list[Task]] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)  #: sorted
    open: dict[str, int] = field(default_factory=dict)  #: open tasks per note
    all: dict[str, int] = field(default_factory=dict)  #: tasks per note

    def _put(self, path: str, tasks: list[Task] | None) -> None:
        had = path in self.tasks
        if tasks:
            self.tasks[path] = tasks
            self.open[path] = sum(1 for t in tasks if t.status not in _CLOSED)
            self.all[path] = len(tasks)
            if not had:
                bisect.insort(self.paths, path)
        elif had:
            del self.tasks[path], self.open[path], self.all[path]
            del self.paths[bisect.bisect_left(self.paths, path)]

    def follow(self, index: VaultIndex) -> TaskTable:
        if self.generation == index.generation:
            return self
        changed = index.changed_since(self.generation) if self.generation >= 0 else None
        if changed is None:
            self.tasks = {path: record.tasks for path, record in index.notes.items() if record.tasks}
            self.open = {path: sum(1 for t in tasks if t.status not in _CLOSED) for path, tasks in self.tasks.items()}
            self.all = {path: len(tasks) for path, tasks in self.tasks.items()}
            self.paths = sorted(self.tasks)
        else:
            for path in changed:
                record = index.notes.get(path)
                self._put(path, record.tasks if record is not None else None)
        self.generation = index.generation
        return self


_TABLES: weakref.WeakKeyDictionary[VaultIndex, TaskTable] = weakref.WeakKeyDictionary()


def task_table(index: VaultIndex) -> TaskTable:
    """The index's task table, up to date (call it on the event loop)."""
    table = _TABLES.get(index)
    if table is None:
        table = _TABLES[index] = TaskTable()
    return table.follow(index)


def select(
    table: TaskTable, wanted: TaskFilter, shown: Callable[[str], bool], after: tuple[str, int] | None, limit: int
) -> tuple[list[tuple[str, Task]], int, bool]:
    """One page of the tasks ``wanted`` in the notes ``shown``, by path then line, from past
    ``after`` (the last task of the previous page): the page, the total of every page, and
    whether more follow. Every note holding tasks is visited for the total; only the page's
    tasks are copied out."""
    wants = wanted.predicate()
    paths = table.paths if wanted.note is None else ([wanted.note] if wanted.note in table.tasks else [])
    start = bisect.bisect_left(paths, after[0]) if after is not None else 0
    total = 0
    page: list[tuple[str, Task]] = []
    more = False
    # "Open tasks" and "every task" are counted from the table (no task visited) once the page is full.
    counted = table.open if wanted.counts_open() else table.all if wanted.counts_all() else None
    for k, path in enumerate(paths):
        if not wanted.wants_note(path) or not shown(path):
            continue
        if counted is not None and (k < start or more):
            total += counted[path]
            continue
        matched = [t for t in table.tasks[path] if wants(t)]
        total += len(matched)
        if k < start or more:
            continue
        for t in matched:
            if after is not None and (path, t.line) <= after:
                continue
            if len(page) == limit:
                more = True
                break
            page.append((path, t))
    return page, total, more


def _tag_matches(tag: str, wanted: str) -> bool:
    folded = tag.casefold()
    return folded == wanted or folded.startswith(wanted + "/")


_DONE_STAMP_RE: Final = re.compile(r"[ \t]*✅\ufe0f?[ \t]*\d{4}-\d{2}-\d{2}")
_BLOCK_ID_RE: Final = re.compile(r"[ \t]+\^[A-Za-z0-9-]+$")


def with_status(line: str, status: str, today: dt.date) -> str:
    """``line`` (one task line, no line break) with its status set to ``status``.

    On a line that uses the Tasks plugin's signifiers, becoming done adds ``✅ today`` (before a
    trailing block id, where the plugin puts it) unless a done date is there; leaving done
    removes it. Every other byte of the line is kept.

    Raises:
        ValueError: the line is not a task.
    """
    m = TASK_RE.fullmatch(line)
    parsed = parse_task(line)
    if m is None or parsed is None:
        raise ValueError("the line is not a task")
    at = m.start(2)
    out = line[:at] + status + line[at + 1 :]
    if not parsed.emoji:
        return out
    was_done, now_done = parsed.status in DONE, status in DONE
    if now_done and parsed.done is None:
        stamp = f" ✅ {today.isoformat()}"
        trailing = len(out) - len(out.rstrip(" \t\r"))
        body, tail = out[: len(out) - trailing], out[len(out) - trailing :]
        block = _BLOCK_ID_RE.search(body)
        if block is not None:
            body = body[: block.start()] + stamp + body[block.start() :]
        else:
            body += stamp
        return body + tail
    if was_done and not now_done:
        head, text = out[: m.start(3)] if m.group(3) is not None else out, out[m.start(3) :] if m.group(3) is not None else ""
        return head + _DONE_STAMP_RE.sub("", text, count=1)
    return out


def toggled(status: str) -> str:
    """The status a toggle gives: done for an open task, open (a space) otherwise."""
    return "x" if status_class(status) is StatusClass.OPEN else " "
