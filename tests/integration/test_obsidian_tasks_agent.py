"""An agent's week: through the official MCP SDK client and ``vaultctl mcp``, it lists the open
tasks due this week, ticks one off (a write the agent gate judges as a patch), and its undo gives
back the note's bytes."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from tests.support.agent import agent, ok
from tests.support.harness import snapshot

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home

TODAY = dt.date.today()
MONDAY = TODAY - dt.timedelta(days=TODAY.weekday())
SUNDAY = MONDAY + dt.timedelta(days=6)
NEXT_MONTH = (TODAY + dt.timedelta(days=40)).isoformat()
WEEKLY = f"""# Weekly

- [ ] send the invoice 📅 {SUNDAY.isoformat()} #work
- [ ] book the venue [due:: {MONDAY.isoformat()}]
- [ ] plan the offsite 📅 {NEXT_MONTH}
- [x] done already 📅 {MONDAY.isoformat()} ✅ {MONDAY.isoformat()}
"""


async def test_an_agent_ticks_off_a_task_due_this_week_and_undoes_it(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "vault"
    root.mkdir()
    (root / "Weekly.md").write_text(WEEKLY)
    assert cli("vault", "add", "v", str(root)).code == 0
    before = snapshot(root)
    async with agent(home) as client:
        week = ok(
            await client.call_tool(
                "task_list",
                {
                    "status": "open",
                    "due_after": (MONDAY - dt.timedelta(days=1)).isoformat(),
                    "due_before": (SUNDAY + dt.timedelta(days=1)).isoformat(),
                    "fresh": True,
                },
            )
        )
        assert [(t["line"], t["text"]) for t in week["tasks"]] == [
            (3, f"send the invoice 📅 {SUNDAY.isoformat()} #work"),
            (4, f"book the venue [due:: {MONDAY.isoformat()}]"),
        ]
        invoice = week["tasks"][0]
        receipt = ok(
            await client.call_tool(
                "task_set",
                {"target": invoice["path"], "line": invoice["line"], "status": "x", "expected_text": invoice["text"]},
            )
        )
        assert receipt["outcome"] == "applied", receipt
        ticked = (root / "Weekly.md").read_text()
        assert f"- [x] send the invoice 📅 {SUNDAY.isoformat()} #work ✅ {TODAY.isoformat()}\n" in ticked
        left = ok(await client.call_tool("task_list", {"due_before": (SUNDAY + dt.timedelta(days=1)).isoformat(), "fresh": True}))
        assert [t["line"] for t in left["tasks"]] == [4]
        ok(await client.call_tool("op_undo", {"op_id": receipt["op_id"]}))
    after = snapshot(root)
    assert after["Weekly.md"] == before["Weekly.md"]
