"""One checklist line read as the Tasks plugin and Dataview read it: its status character, its text,
and the dates, priority, recurrence and tags written in it.

A task is a list item whose text starts with a one-character checkbox: ``- [ ] call Bob``,
``* [x] done``, ``1. [/] half done``, ``> - [?] in a quote``. Any character but ``]`` and a line
break may stand between the brackets: ``x`` and ``X`` are done, ``-`` is cancelled, a space and
every other (custom) character is open.

Two ways of writing a task's fields are read, the two users write most:

- the Tasks plugin's emoji signifiers (Dataview reads the same ones, and 🗓 for due): 📅 due,
  ⏳ scheduled, 🛫 start, ➕ created, ✅ done, ❌ cancelled, each followed by ``YYYY-MM-DD``; priority 🔺 highest, ⏫ high, 🔼 medium,
  🔽 low, ⏬ lowest; 🔁 a recurrence rule, kept as the text up to the next signifier;
- Dataview's inline fields ``[due:: 2026-12-01]`` and ``(due:: 2026-12-01)`` (keys ``due``,
  ``scheduled``, ``start``, ``created``, ``completion`` for done, ``cancelled``, ``priority``,
  ``repeat``), matched case-insensitively.

When both give a field, the first written wins. The parser is pure and linear in the line's length;
it is called by the Markdown scanner on candidate lines only.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

#: A list item with a checkbox: its prefix (indent, quote marks, bullet), the status character,
#: and the rest of the line.
TASK_RE: Final = re.compile(r"([ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[([^\]\r\n])\](?:[ \t]+([^\r\n]*?))?[ \t\r]*$")

DONE: Final = frozenset("xX")
CANCELLED: Final = "-"

DATE_FIELDS: Final = ("due", "scheduled", "start", "created", "done", "cancelled")
_VS: Final = "\ufe0f?"  # an emoji may carry the variation selector
_DATE_EMOJI: Final = {"📅": "due", "🗓": "due", "⏳": "scheduled", "🛫": "start", "➕": "created", "✅": "done", "❌": "cancelled"}
PRIORITY_EMOJI: Final = {"🔺": "highest", "⏫": "high", "🔼": "medium", "🔽": "low", "⏬": "lowest"}
_SIGNIFIERS: Final = "".join([*_DATE_EMOJI, *PRIORITY_EMOJI, "🔁", "🆔", "⛔", "🏁"])
_EMOJI_DATE_RE: Final = re.compile(rf"([{''.join(_DATE_EMOJI)}]){_VS}[ \t]*(\d{{4}}-\d{{2}}-\d{{2}})")
_PRIORITY_RE: Final = re.compile(rf"([{''.join(PRIORITY_EMOJI)}]){_VS}")
_RECUR_RE: Final = re.compile(rf"🔁{_VS}[ \t]*([^{_SIGNIFIERS}\[(]*[^{_SIGNIFIERS}\[(\s])")
_SIGNIFIER_RE: Final = re.compile(rf"[{_SIGNIFIERS}]")
_INLINE_FIELD_RE: Final = re.compile(r"([\[(])[ \t]*([A-Za-z][\w -]{0,63}?)[ \t]*::[ \t]*([^\]\)\n]*?)[ \t]*[\])]")
_DATAVIEW_KEYS: Final = {
    "due": "due",
    "scheduled": "scheduled",
    "start": "start",
    "created": "created",
    "completion": "done",
    "completed": "done",
    "done": "done",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "priority": "priority",
    "repeat": "recurrence",
}
_DATE_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_TAG_RE: Final = re.compile(r"(?<![\w/#&\\])#([\w/-]*[^\W\d][\w/-]*)")
_PRIORITIES: Final = frozenset(PRIORITY_EMOJI.values())


class TaskLine(NamedTuple):
    """What one task line says; dates are ``YYYY-MM-DD`` as written, None when absent."""

    prefix: str  #: the indent, quote marks and bullet before ``[``
    status: str  #: the character between the brackets
    text: str  #: everything after the checkbox, as written
    due: str | None
    scheduled: str | None
    start: str | None
    created: str | None
    done: str | None
    cancelled: str | None
    priority: str | None  #: highest, high, medium, low or lowest
    recurrence: str | None  #: the rule as written (``every week``)
    tags: tuple[str, ...]  #: without ``#``, as written
    emoji: bool  #: the line uses the Tasks plugin's signifiers (so done dates are stamped)


def parse_task(line: str) -> TaskLine | None:
    """The task a line holds, or None when it holds none."""
    m = TASK_RE.fullmatch(line)
    if m is None:
        return None
    text = m.group(3) or ""
    fields: dict[str, str] = {}
    emoji = False
    if not text.isascii():
        for found in _EMOJI_DATE_RE.finditer(text):
            fields.setdefault(_DATE_EMOJI[found.group(1)], found.group(2))
        p = _PRIORITY_RE.search(text)
        if p is not None:
            fields.setdefault("priority", PRIORITY_EMOJI[p.group(1)])
        r = _RECUR_RE.search(text)
        if r is not None:
            fields.setdefault("recurrence", r.group(1).strip())
        emoji = _SIGNIFIER_RE.search(text) is not None
    if "::" in text:
        for f in _INLINE_FIELD_RE.finditer(text):
            key = _DATAVIEW_KEYS.get(f.group(2).strip().lower())
            value = f.group(3).strip()
            if key is None or not value:
                continue
            if key == "priority":
                value = value.lower()
                if value not in _PRIORITIES:
                    continue
            elif key != "recurrence":
                d = _DATE_RE.match(value)
                if d is None:
                    continue
                value = d.group(0)
            fields.setdefault(key, value)
    tags = tuple(t.group(1) for t in _TAG_RE.finditer(text)) if "#" in text else ()
    return TaskLine(
        prefix=m.group(1),
        status=m.group(2),
        text=text,
        due=fields.get("due"),
        scheduled=fields.get("scheduled"),
        start=fields.get("start"),
        created=fields.get("created"),
        done=fields.get("done"),
        cancelled=fields.get("cancelled"),
        priority=fields.get("priority"),
        recurrence=fields.get("recurrence"),
        tags=tags,
        emoji=emoji,
    )
