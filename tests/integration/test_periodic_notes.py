"""Periodic Notes' weekly, monthly, quarterly and yearly notes through the daily methods' ``period``:
each lands in the plugin's folder under its format, made once from its template, the days of one
week sharing the week's note; ``-N`` counts periods; a period the vault does not keep is refused
clearly with nothing written. Through the real vaultctl, vaultctl's socket client and the official
MCP SDK client."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from protocol.errors import ErrorCode
from protocol.methods.daily import DAILY_PATH, DAILY_PREPEND, DailyParams, DailyWriteParams, NotePeriod
from tests.support.agent import agent, ok
from tests.support.harness import snapshot
from tests.support.typed import applied, refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient

WEEKLY_TEMPLATE = "# Week {{date:gggg-[W]ww}}\n\n{{title}}\n\n## Plan\n"
PERIODIC = {
    "daily": {"enabled": False},
    "weekly": {"enabled": True, "folder": "Weekly", "format": "gggg-[W]ww", "template": "Templates/Weekly"},
    "monthly": {"enabled": True, "folder": "Monthly/", "format": "YYYY-MM", "template": ""},
    "quarterly": {"enabled": False, "folder": "Quarterly", "format": "YYYY-[Q]Q"},
    "yearly": {"enabled": True, "folder": "", "format": "[Year] YYYY"},
}
SETTINGS = {
    ".obsidian/daily-notes.json": {"folder": "Journal", "format": "YYYY-MM-DD"},
    ".obsidian/community-plugins.json": ["periodic-notes"],
    ".obsidian/plugins/periodic-notes/data.json": PERIODIC,
}


def _vault(home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    (root / "Templates").mkdir(parents=True)
    (root / "Templates/Weekly.md").write_text(WEEKLY_TEMPLATE)
    for rel, value in SETTINGS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(value))
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    return root


def test_the_week_note_is_made_once_from_its_template_and_shared_by_its_days(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home, cli)
    where = cli("daily", "path", "--period", "week", "--date", "2024-12-29", "--json")
    assert where.code == 0, where.err
    assert where.json() == {
        "path": "Weekly/2025-W01.md",
        "date": "2024-12-29",
        "exists": False,
        "template": "Templates/Weekly",
        "source": "periodic-notes",
    }
    # Sunday 29 December 2024 and Saturday 4 January 2025 are one locale week: one note.
    first = cli("daily", "append", "--period", "week", "--date", "2024-12-29", "--under", "## Plan", "--json", "--", "- ship")
    assert first.code == 0, first.err
    assert first.json()["changes"][0]["action"] == "create"
    second = cli("daily", "append", "--period", "week", "--date", "2025-01-04", "--under", "## Plan", "--", "- rest")
    assert second.code == 0, second.err
    assert (root / "Weekly/2025-W01.md").read_text() == "# Week 2025-W01\n\n2025-W01\n\n## Plan\n\n- ship\n- rest\n"
    shown = cli("daily", "read", "--period", "week", "--date", "2024-12-31")
    assert shown.code == 0 and "- rest" in shown.out, shown.out
    # The day's own note is the core daily notes' still.
    assert cli("daily", "path", "--date", "2024-12-29", "--json").json()["path"] == "Journal/2024-12-29.md"


def test_months_and_years_count_by_their_period(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    _vault(home, cli)
    today = dt.date.today()
    year, month = divmod(today.year * 12 + today.month - 1 - 1, 12)
    last_month = typed.call(DAILY_PATH, DailyParams(vault="v", date="-1", period=NotePeriod.MONTH))
    assert last_month.path == f"Monthly/{year:04d}-{month + 1:02d}.md" and last_month.template is None
    assert typed.call(DAILY_PATH, DailyParams(vault="v", date="2024-03-31", period=NotePeriod.MONTH)).path == "Monthly/2024-03.md"
    next_year = typed.call(DAILY_PATH, DailyParams(vault="v", date="+1", period=NotePeriod.YEAR))
    assert next_year.path == f"Year {today.year + 1}.md"
    made = applied(typed.call(DAILY_PREPEND, DailyWriteParams(vault="v", date="2024-03-31", period=NotePeriod.MONTH, markdown="Goals.")))
    assert [c.path for c in made.changes] == ["Monthly/2024-03.md"]


def test_a_period_the_vault_does_not_keep_is_refused_with_nothing_written(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    before = snapshot(root)
    with refused(ErrorCode.INVALID_PARAMS) as refusal:
        typed.call(DAILY_PREPEND, DailyWriteParams(vault="v", period=NotePeriod.QUARTER, markdown="x"))
    assert "no quarterly notes" in refusal.data.message and "periodic-notes" in refusal.data.message
    said = cli("daily", "append", "--period", "quarter", "--", "x")
    assert said.code != 0 and "no quarterly notes" in said.err, said.err
    assert snapshot(root) == before
    # Without the plugin enabled, no period but the day is kept.
    (root / ".obsidian/community-plugins.json").write_text("[]")
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(DAILY_PATH, DailyParams(vault="v", period=NotePeriod.WEEK))


async def test_an_agent_writes_the_week_note_through_the_mcp_sdk(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home, cli)
    async with agent(home) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["daily_write"].input_schema["properties"]["period"]["enum"] == sorted(p.value for p in NotePeriod)
        done = ok(await client.call_tool("daily_append", {"vault": "v", "period": "week", "date": "2024-12-29", "markdown": "- agent"}))
        read = ok(await client.call_tool("daily_read", {"vault": "v", "period": "week", "date": "2025-01-01"}))
    assert done["outcome"] == "applied", done
    assert read["path"] == "Weekly/2025-W01.md" and read["note"] is not None
    assert (root / "Weekly/2025-W01.md").read_text().endswith("- agent\n")
