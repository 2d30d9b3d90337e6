"""Daily notes on a vault carrying Obsidian's own settings: the day's note lands where Obsidian
puts it (folder, moment format with weekday and locale week tokens), from the same template
rendered for that day, created once however many callers race (an editor among them), the others
adding to it; a heading target; undo; settings changed without a restart; bad days and formats
refused with nothing written. Through the real vaultctl, vaultctl's socket client and the official
MCP SDK client."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_APPEND_BYTES
from protocol.methods.common import Channel
from protocol.methods.daily import DAILY_APPEND, DAILY_PATH, DAILY_PREPEND, DAILY_READ, DailyParams, DailyReadParams, DailyWriteParams
from protocol.methods.receipts import Applied, Proposed
from protocol.methods.writes import UNDO, UndoParams
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, paused_daemon, snapshot, wait_at_gate
from tests.support.typed import refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient, TypedClients

DAILY_TEMPLATE = "---\ntags: [daily]\n---\n# {{date:dddd, MMMM Do YYYY}}\n\nWeek {{date:gggg-[W]ww}} · {{title}}\n\n## Log\n"
SETTINGS = {
    ".obsidian/daily-notes.json": {"folder": "Journal", "format": "YYYY-MM-DD dddd", "template": "Templates/Daily"},
    ".obsidian/templates.json": {"folder": "Templates", "dateFormat": "YYYY-MM-DD", "timeFormat": "HH:mm"},
    ".obsidian/app.json": {"useMarkdownLinks": False, "newLinkFormat": "shortest"},
}
SUNDAY = "2024-12-29"  #: a Sunday whose locale week (Sunday-first, 1 January in week 1) is 2025's first
SUNDAY_NOTE = "Journal/2024-12-29 Sunday.md"
SUNDAY_TEXT = "---\ntags: [daily]\n---\n# Sunday, December 29th 2024\n\nWeek 2025-W01 · 2024-12-29 Sunday\n\n## Log\n"


def _vault(home: Home, cli: Any, settings: dict[str, Any] = SETTINGS) -> Path:
    root = home.root / "vault"
    (root / "Templates").mkdir(parents=True)
    (root / "Templates/Daily.md").write_text(DAILY_TEMPLATE)
    (root / "Home.md").write_text("# Home\n")
    for rel, value in settings.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(value))
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    return root


def test_the_days_note_is_made_from_its_template_where_obsidian_puts_it(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home, cli)
    where = cli("daily", "path", "--date", SUNDAY, "--json")
    assert where.code == 0, where.err
    assert where.json() == {"path": SUNDAY_NOTE, "date": SUNDAY, "exists": False, "template": "Templates/Daily", "source": "daily-notes"}
    first = cli("daily", "append", "--date", SUNDAY, "--under", "## Log", "--json", "--", "- 09:00 coffee")
    assert first.code == 0, first.err
    assert first.json()["changes"][0]["action"] == "create"
    second = cli("daily", "append", "--date", SUNDAY, "--under", "## Log", "--", "- 10:00 walk")
    assert second.code == 0, second.err
    assert (root / SUNDAY_NOTE).read_text() == SUNDAY_TEXT + "\n- 09:00 coffee\n- 10:00 walk\n"
    shown = cli("daily", "read", "--date", SUNDAY)
    assert shown.code == 0 and "- 10:00 walk" in shown.out
    assert cli("daily", "read", "--date", "2024-12-30").code == 1


def test_today_and_relative_days_follow_the_local_date(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    today = dt.date.today()
    for spec, day in (("today", today), ("yesterday", today - dt.timedelta(days=1)), ("+2", today + dt.timedelta(days=2))):
        found = typed.call(DAILY_PATH, DailyParams(vault="v", date=spec))
        assert found.date == day.isoformat()
        assert found.path == f"Journal/{day.isoformat()} {day.strftime('%A')}.md"
    receipt = typed.call(DAILY_PREPEND, DailyWriteParams(vault="v", markdown="Top line"))
    assert isinstance(receipt, Applied)
    text = (root / f"Journal/{today.isoformat()} {today.strftime('%A')}.md").read_text()
    assert text.startswith("---\ntags: [daily]\n---\nTop line\n# ")
    read = typed.call(DAILY_READ, DailyReadParams(vault="v"))
    assert read.note is not None and "Top line" in read.note.body
    before = typed.call(DAILY_READ, DailyReadParams(vault="v", date="yesterday"))
    assert before.note is None and before.date == (today - dt.timedelta(days=1)).isoformat()


def test_a_changed_format_and_the_periodic_notes_plugin_take_effect_without_restart(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home, cli)
    (root / ".obsidian/daily-notes.json").write_text(json.dumps({"folder": "Days", "format": "gggg-[W]ww/YYYY-MM-DD"}))
    assert cli("daily", "path", "--date", SUNDAY, "--json").json()["path"] == "Days/2025-W01/2024-12-29.md"
    (root / ".obsidian/plugins/periodic-notes").mkdir(parents=True)
    (root / ".obsidian/plugins/periodic-notes/data.json").write_text(
        json.dumps({"daily": {"enabled": True, "folder": "Periodic", "format": "GGGG-[W]WW-E", "template": ""}})
    )
    (root / ".obsidian/community-plugins.json").write_text(json.dumps(["periodic-notes"]))
    found = cli("daily", "path", "--date", SUNDAY, "--json").json()
    assert (found["path"], found["source"], found["template"]) == ("Periodic/2024-W52-7.md", "periodic-notes", None)
    (root / ".obsidian/daily-notes.json").write_text("{ not json")
    (root / ".obsidian/community-plugins.json").write_text("[]")
    assert cli("daily", "path", "--date", SUNDAY, "--json").json()["path"] == "2024-12-29.md"  # Obsidian's defaults


def test_created_once_under_two_concurrent_callers(home: Home, daemon: Daemon, cli: Any, typed_clients: TypedClients) -> None:
    root = _vault(home, cli)
    clients = [typed_clients.open(home) for _ in range(2)]
    receipts: list[Any] = []

    def append(client: TypedClient, line: str) -> None:
        receipts.append(client.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown=line, under="## Log")))

    threads = [threading.Thread(target=append, args=(c, f"- caller {i}")) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(receipts) == 2 and all(isinstance(r, Applied) for r in receipts)
    actions = sorted(r.changes[0].action for r in receipts)
    assert actions == ["create", "modify"]
    text = (root / SUNDAY_NOTE).read_text()
    assert text.startswith(SUNDAY_TEXT) and text.count("# Sunday") == 1
    assert text.count("- caller 0") == 1 and text.count("- caller 1") == 1


def test_an_editor_that_creates_the_note_meanwhile_keeps_it_and_the_append_joins_it(
    home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    daemon, gate = paused_daemon(home, "after-plan", 1)
    try:
        root = _vault(home, cli)
        client = typed_clients.open(home)
        receipts: list[Any] = []
        worker = threading.Thread(
            target=lambda: receipts.append(
                client.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown="- from vaultd", under="## Log"))
            )
        )
        worker.start()
        wait_at_gate(gate, daemon, "the append to be planned as a create")
        # The editor makes the note first, as Obsidian would on opening today's note.
        (root / "Journal").mkdir(exist_ok=True)
        fd = os.open(root / SUNDAY_NOTE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"# Written in the editor\n\n## Log\n\n- from the editor\n")
        os.close(fd)
        gate.unlink()
        worker.join(120)
        assert len(receipts) == 1 and isinstance(receipts[0], Applied)
        assert receipts[0].changes[0].action == "modify"
        assert (root / SUNDAY_NOTE).read_text() == "# Written in the editor\n\n## Log\n\n- from the editor\n- from vaultd\n"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_undo_removes_the_note_it_created(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    before = {k: v for k, v in snapshot(root).items() if k != "log.md"}
    receipt = typed.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown="x"))
    assert isinstance(receipt, Applied) and receipt.op_id is not None
    assert isinstance(typed.call(UNDO, UndoParams(vault="v", op_id=receipt.op_id)), Applied)
    assert {k: v for k, v in snapshot(root).items() if k != "log.md"} == before


@pytest.mark.parametrize("day", ["someday", "2024-13-01", "+99999", "-1d"])
def test_a_day_that_names_no_date_is_refused(home: Home, daemon: Daemon, cli: Any, typed: TypedClient, day: str) -> None:
    root = _vault(home, cli)
    before = snapshot(root)
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(DAILY_APPEND, DailyWriteParams(vault="v", date=day, markdown="x"))
    assert snapshot(root) == before


def test_an_unsupported_format_token_is_a_clear_error_and_writes_nothing(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    (root / ".obsidian/daily-notes.json").write_text(json.dumps({"format": "YYYY-MM-DD zz"}))
    before = snapshot(root)
    with refused(ErrorCode.VALIDATION, IssueCode.O02) as refusal:
        typed.call(DAILY_APPEND, DailyWriteParams(vault="v", markdown="x"))
    assert "'zz'" in refusal.data.message
    shown = cli("daily", "path")
    assert shown.code != 0 and "zz" in shown.err
    assert snapshot(root) == before


def test_a_template_with_templater_commands_is_inserted_as_written_with_a_warning(
    home: Home, daemon: Daemon, cli: Any, typed: TypedClient
) -> None:
    root = _vault(home, cli)
    (root / "Templates/Daily.md").write_text("# <% tp.date.now() %> {{date}}\n")
    receipt = typed.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown="x"))
    assert isinstance(receipt, Applied)
    assert [w.code for w in receipt.warnings] == [IssueCode.O01]
    assert (root / SUNDAY_NOTE).read_text() == "# <% tp.date.now() %> 2024-12-29 Sunday\nx\n"


async def test_an_agent_appends_to_todays_note_through_the_mcp_sdk(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home, cli)
    today = dt.date.today()
    async with agent(home) as client:
        done = ok(await client.call_tool("daily_append", {"vault": "v", "markdown": "- agent was here", "under": "## Log"}))
        where = ok(await client.call_tool("daily_read", {"vault": "v"}))
    assert done["outcome"] == "applied", done
    assert where["path"] == f"Journal/{today.isoformat()} {today.strftime('%A')}.md" and where["note"] is not None
    assert (root / where["path"]).read_text().endswith("## Log\n\n- agent was here\n")


def test_an_agents_append_that_makes_the_note_is_judged_as_a_create(
    home: Home, daemon: Daemon, cli: Any, typed_clients: TypedClients
) -> None:
    root = _vault(home, cli)
    preview = cli("vault", "policy", "v", "create=propose", "--json")
    assert preview.code == 0, preview.err
    tightened = cli("vault", "policy", "v", "create=propose", "--confirm", "--fingerprint", preview.json()["fingerprint"])
    assert tightened.code == 0, tightened.err
    agent_client = typed_clients.open(home, Channel.MCP, session="s1")
    first = agent_client.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown="- one"))
    assert isinstance(first, Proposed)
    assert not (root / SUNDAY_NOTE).exists()
    assert cli("daily", "append", "--date", SUNDAY, "--", "- by a person").code == 0
    second = agent_client.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown="- two"))
    assert isinstance(second, Applied)
    assert (root / SUNDAY_NOTE).read_text().endswith("- by a person\n- two\n")


def test_the_text_bound_holds_at_its_edge(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli, {})
    at_bound = "a" * MAX_APPEND_BYTES
    receipt = typed.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown=at_bound))
    assert isinstance(receipt, Applied)
    before = snapshot(root)
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown=at_bound + "a"))
    with refused(ErrorCode.LIMIT):  # within the bound in characters, past it in UTF-8 bytes
        typed.call(DAILY_APPEND, DailyWriteParams(vault="v", date=SUNDAY, markdown="é" * (MAX_APPEND_BYTES // 2 + 1)))
    assert snapshot(root) == before
