"""Tasks through a real daemon: every checklist item indexed (Tasks plugin emoji and Dataview fields),
listed with filters and pages, ticked off as one journaled write that undo reverses byte for byte,
refused when the line is no longer what the caller saw, and hidden where it is private."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

from protocol.errors import ErrorCode
from protocol.methods.receipts import Applied
from protocol.methods.tasks import TASK_LIST, TASK_SET, TaskListParams, TaskSetParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import UNDO, UndoParams
from tests.support.typed import refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClient, TypedClients

TODAY = dt.date.today()
SOON = (TODAY + dt.timedelta(days=3)).isoformat()
LATER = (TODAY + dt.timedelta(days=30)).isoformat()
PLAN = f"""---
title: Plan
---
# Plan

## This week

- [ ] call the bank 📅 {SOON} ⏫ #money
- [x] paid rent ✅ 2026-01-02
* [/] draft the report [due:: {LATER}] (priority:: low)
- [-] cancelled idea ❌ 2026-01-03

```
- [ ] not a task, inside code
```

## Later

1. [ ] renew passport 🔁 every year ⏳ {LATER} #admin/papers
- [?] a custom status
"""
PRIVATE = f"- [ ] secret errand 📅 {SOON}\n"


def _vault(home: Home, typed: TypedClient, **add: object) -> Path:
    root = home.root / "vault"
    (root / "work").mkdir(parents=True)
    (root / "private").mkdir()
    (root / "work" / "Plan.md").write_text(PLAN)
    (root / "Other.md").write_text("# Other\n\n- [ ] water plants\n")
    (root / "private" / "Errands.md").write_text(PRIVATE)
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), **add))  # type: ignore[arg-type]
    return root


def test_every_checklist_item_is_indexed_with_its_fields(home: Home, typed: TypedClient) -> None:
    _vault(home, typed)
    every = typed.call(TASK_LIST, TaskListParams(status="any", note="work/Plan.md", fresh=True))
    assert [(t.line, t.status) for t in every.tasks] == [(8, " "), (9, "x"), (10, "/"), (11, "-"), (19, " "), (20, "?")]
    bank, rent, report, idea, passport, custom = every.tasks
    assert (bank.due, bank.priority, bank.tags, bank.heading) == (SOON, "high", ["money"], "This week")
    assert rent.done == "2026-01-02"
    assert (report.due, report.priority) == (LATER, "low")
    assert idea.cancelled == "2026-01-03"
    assert (passport.recurrence, passport.scheduled, passport.tags, passport.heading) == ("every year", LATER, ["admin/papers"], "Later")
    assert custom.text == "a custom status"
    # open is a space and every custom status; done and cancelled are their own
    opened = typed.call(TASK_LIST, TaskListParams(note="work/Plan.md"))
    assert [t.line for t in opened.tasks] == [8, 10, 19, 20]
    assert [t.line for t in typed.call(TASK_LIST, TaskListParams(status="done")).tasks] == [9]
    assert [t.line for t in typed.call(TASK_LIST, TaskListParams(status="?")).tasks] == [20]


def test_filters_by_dates_tags_and_folders_and_pages(home: Home, typed: TypedClient) -> None:
    _vault(home, typed)
    week = typed.call(TASK_LIST, TaskListParams(due_after="yesterday", due_before="+7d", fresh=True))
    assert [(t.path, t.line) for t in week.tasks] == [("private/Errands.md", 1), ("work/Plan.md", 8)]
    assert [t.line for t in typed.call(TASK_LIST, TaskListParams(tag="#admin")).tasks] == [19]
    assert [t.line for t in typed.call(TASK_LIST, TaskListParams(scheduled_on=LATER)).tasks] == [19]
    assert [t.path for t in typed.call(TASK_LIST, TaskListParams(folder="work/")).tasks] == ["work/Plan.md"] * 4
    seen: list[tuple[str, int]] = []
    cursor = None
    while True:
        page = typed.call(TASK_LIST, TaskListParams(limit=2, cursor=cursor))
        assert page.total == 6
        seen += [(t.path, t.line) for t in page.tasks]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [
        ("Other.md", 3),
        ("private/Errands.md", 1),
        ("work/Plan.md", 8),
        ("work/Plan.md", 10),
        ("work/Plan.md", 19),
        ("work/Plan.md", 20),
    ]
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(TASK_LIST, TaskListParams(due_before="next tuesday"))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(TASK_LIST, TaskListParams(cursor="bm90LWEtY3Vyc29y"))


def test_done_stamps_the_date_and_undo_restores_the_bytes(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed)
    before = (root / "work" / "Plan.md").read_bytes()
    bank = typed.call(TASK_LIST, TaskListParams(note="Plan", due_on=SOON, fresh=True)).tasks[0]
    receipt = typed.call(TASK_SET, TaskSetParams(target="Plan", line=bank.line, status="x", expected_text=bank.text))
    assert isinstance(receipt, Applied)
    after = (root / "work" / "Plan.md").read_text()
    assert f"- [x] call the bank 📅 {SOON} ⏫ #money ✅ {TODAY.isoformat()}\n" in after
    assert after.replace(f"[x] call the bank 📅 {SOON} ⏫ #money ✅ {TODAY.isoformat()}", f"[ ] call the bank 📅 {SOON} ⏫ #money") == (
        before.decode()
    )
    # a plain line (no signifiers) changes its status character alone
    plain = typed.call(TASK_SET, TaskSetParams(target="Other", line=3))
    assert isinstance(plain, Applied)
    assert (root / "Other.md").read_text() == "# Other\n\n- [x] water plants\n"
    typed.call(UNDO, UndoParams(op_id=receipt.op_id))
    assert (root / "work" / "Plan.md").read_bytes() == before
    # reopening a done task removes its done date
    typed.call(TASK_SET, TaskSetParams(target="Plan", line=9, status=" ", expected_status="x"))
    assert "- [ ] paid rent\n" in (root / "work" / "Plan.md").read_text()


def test_a_line_that_changed_is_refused_and_nothing_is_written(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed)
    bank = typed.call(TASK_LIST, TaskListParams(note="Plan", due_on=SOON, fresh=True)).tasks[0]
    path = root / "work" / "Plan.md"
    path.write_text(path.read_text().replace("call the bank", "call the bank twice"))
    changed = path.read_bytes()
    with refused(ErrorCode.CONFLICT):
        typed.call(TASK_SET, TaskSetParams(target="Plan", line=bank.line, status="x", expected_text=bank.text))
    with refused(ErrorCode.CONFLICT):
        typed.call(TASK_SET, TaskSetParams(target="Plan", line=9, status=" ", expected_status=" "))
    with refused(ErrorCode.INVALID_PARAMS):  # inside a code fence: a line, not a task
        typed.call(TASK_SET, TaskSetParams(target="Plan", line=14, status="x"))
    with refused(ErrorCode.INVALID_PARAMS):  # past the end
        typed.call(TASK_SET, TaskSetParams(target="Plan", line=999, status="x"))
    assert path.read_bytes() == changed


def test_private_tasks_are_hidden_from_agents(home: Home, typed: TypedClient, typed_clients: TypedClients) -> None:
    from protocol.methods.common import Channel

    _vault(home, typed, private_paths=["private/**"])
    agent = typed_clients.open(home, Channel.MCP)
    paths = {t.path for t in agent.call(TASK_LIST, TaskListParams(status="any", fresh=True)).tasks}
    assert paths == {"work/Plan.md", "Other.md"}
    assert "private/Errands.md" in {t.path for t in typed.call(TASK_LIST, TaskListParams(status="any")).tasks}
    with refused(ErrorCode.NOT_FOUND):
        agent.call(TASK_SET, TaskSetParams(target="private/Errands.md", line=1))


def test_cli_lists_ticks_and_undoes(home: Home, typed: TypedClient, cli) -> None:  # type: ignore[no-untyped-def]
    root = _vault(home, typed)
    before = (root / "Other.md").read_bytes()
    listed = cli("tasks", "--vault", "v", "--note", "Other", "--fresh", "--json")
    assert listed.code == 0, listed.err
    assert [t["text"] for t in json.loads(listed.out)["tasks"]] == ["water plants"]
    text = cli("tasks", "--vault", "v", "--due-before", "+7d")
    assert "work/Plan.md:8" in text.out and "call the bank" in text.out
    done = cli("task", "done", "Other:3", "--vault", "v", "--json")
    assert done.code == 0, done.err
    assert (root / "Other.md").read_text() == "# Other\n\n- [x] water plants\n"
    assert cli("task", "undo", "Other:3", "--vault", "v").code == 0
    assert (root / "Other.md").read_bytes() == before
    assert cli("task", "set", "Other:3", "/", "--vault", "v").code == 0
    assert (root / "Other.md").read_text() == "# Other\n\n- [/] water plants\n"
    bad = cli("task", "done", "Other", "--vault", "v")
    assert bad.code == 2 and "NOTE:LINE" in bad.err
    undone = cli("undo", json.loads(done.out)["op_id"], "--vault", "v")
    assert undone.code != 0  # a later write changed the note: undo refuses rather than lose it


def test_the_list_follows_edits_made_beside_the_daemon(home: Home, typed: TypedClient) -> None:
    """The task table is kept by the paths each change touched: a note added, edited or removed on
    disk is in the next fresh list, and the totals of vault.properties agree."""
    from protocol.methods.properties import VAULT_PROPERTIES, PropertiesParams

    root = _vault(home, typed)
    assert typed.call(TASK_LIST, TaskListParams(fresh=True)).total == 6
    (root / "New.md").write_text("- [ ] fresh one\n- [x] fresh done\n")
    assert [(t.path, t.text) for t in typed.call(TASK_LIST, TaskListParams(note="New.md", fresh=True)).tasks] == [("New.md", "fresh one")]
    assert typed.call(TASK_LIST, TaskListParams()).total == 7
    (root / "Other.md").write_text("# Other\n\nno tasks left\n")
    (root / "New.md").write_text("- [x] fresh one\n- [x] fresh done\n")
    assert typed.call(TASK_LIST, TaskListParams(fresh=True)).total == 5
    (root / "New.md").unlink()
    listed = typed.call(TASK_LIST, TaskListParams(status="any", fresh=True))
    assert {t.path for t in listed.tasks} == {"work/Plan.md", "private/Errands.md"}
    totals = typed.call(VAULT_PROPERTIES, PropertiesParams())
    assert (totals.tasks, totals.open_tasks) == (listed.total, 5)


def test_bounds_at_their_edge(home: Home, typed: TypedClient) -> None:
    from protocol.methods.tasks import MAX_TASK_LINE_CHARS

    _vault(home, typed)
    assert typed.call(TASK_LIST, TaskListParams(limit=500, fresh=True)).total == 6
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(TASK_LIST, TaskListParams(limit=501))
    with refused(ErrorCode.CONFLICT):  # at the bound: read, compared, not the task's text
        typed.call(TASK_SET, TaskSetParams(target="Other", line=3, expected_text="x" * MAX_TASK_LINE_CHARS))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(TASK_SET, TaskSetParams(target="Other", line=3, expected_text="x" * (MAX_TASK_LINE_CHARS + 1)))
