"""Journal volumes: a person gathers a volume's dated entries into an edition note (``vaultctl``),
refused when nothing changed since the last; a schedule the person sets publishes on its own; an
agent (the official MCP SDK client, and the mcp channel) reads entries but never writes under a
volume nor publishes, whatever the vault's agent policy says."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.checkouts import CHECKOUT_MAKE, CheckoutMakeParams
from protocol.methods.common import Channel
from protocol.methods.editions import EDITION_CONFIGURE, EDITION_PUBLISH, EditionConfigureParams, EditionPublishParams
from protocol.methods.writes import APPEND, CREATE, AppendParams, CreateParams
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, register, snapshot
from tests.support.typed import refused
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClients


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def _entries(root: Path) -> None:
    (root / "Journals/cs566-notes").mkdir(parents=True)
    (root / "Journals/cs566-notes/2024-01-02.md").write_text("---\nmood: fine\n---\nSecond day.\n")
    (root / "Journals/cs566-notes/2024-01-01.md").write_text("First day.\n")
    (root / "Journals/cs566-notes/.hidden.md").write_text("never gathered\n")
    (root / "Journals/garden").mkdir()
    (root / "Journals/garden/2024-03-01.md").write_text("Planted beans.\n")


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    _entries(root)
    register(home, root)
    configured = _json(cli, "edition", "configure", "--folder", "Journals", "--editions", "Editions")
    assert configured["volumes"] == {"folder": "Journals", "editions": "Editions"}
    return root


def test_a_person_publishes_an_edition_once_per_change(vault: Path, cli: Any) -> None:
    listed = _json(cli, "edition", "list")
    assert [(v["volume"], v["name"], v["entries"], v["changed"]) for v in listed["volumes"]] == [
        ("cs566-notes", "CS566 Notes", 2, True),
        ("garden", "Garden", 1, True),
    ]
    today = dt.date.today().isoformat()
    published = _json(cli, "edition", "publish", "cs566-notes")
    path = published["detail"]["edition"]
    assert path == f"Editions/CS566 Notes {today}.md" and published["detail"]["entries"] == 2
    text = (vault / path).read_text()
    assert text.split("---\n", 2)[2] == f"# CS566 Notes — {today} edition\n\n## 2024-01-01\n\nFirst day.\n\n## 2024-01-02\n\nSecond day.\n"
    assert "never gathered" not in text and "mood" not in text.split("---\n", 2)[2]
    # Nothing changed: refused, nothing written; a change of an entry's properties is no change.
    (vault / "Journals/cs566-notes/2024-01-02.md").write_text("---\nmood: great\n---\nSecond day.\n")
    before = snapshot(vault)
    again = cli("edition", "publish", "cs566-notes")
    assert again.code != 0 and "no change since" in again.err, (again.out, again.err)
    assert snapshot(vault) == before
    assert [v["changed"] for v in _json(cli, "edition", "list")["volumes"]] == [False, True]
    # A changed body makes a second edition of the day.
    (vault / "Journals/cs566-notes/2024-01-03.md").write_text("Third day.\n")
    second = _json(cli, "edition", "publish", "cs566-notes")
    assert second["detail"]["edition"] == f"Editions/CS566 Notes {today} (2).md"
    assert "Third day." in (vault / second["detail"]["edition"]).read_text()
    assert cli("edition", "publish", "cs566-notes").code != 0, "the latest edition is the second one"


def test_a_volume_that_does_not_exist_or_a_bad_name_is_refused(vault: Path, cli: Any) -> None:
    assert "no journal volume" in cli("edition", "publish", "nothing-here").err
    assert cli("edition", "publish", "..").code != 0
    assert cli("edition", "publish", "cs566-notes/../garden").code != 0
    assert not (vault / "Editions").exists()


async def test_an_agent_reads_entries_but_never_writes_under_a_volume_nor_publishes(
    vault: Path, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    # Even a policy that lets agents apply every write leaves volumes to the person.
    preview = _json(cli, "vault", "policy", "v", "create=apply", "append=apply", "wide=apply")
    assert (
        cli("vault", "policy", "v", "create=apply", "append=apply", "wide=apply", "--confirm", "--fingerprint", preview["fingerprint"]).code
        == 0
    )
    async with agent(home) as client:
        read = ok(await client.call_tool("note_read", {"target": "Journals/cs566-notes/2024-01-01.md"}))
        assert "First day." in read["body"]
        tools = {t.name for t in (await client.list_tools()).tools}
        assert not {"edition_publish", "edition_configure", "edition_list"} & tools
        created = await client.call_tool("note_create", {"path": "Journals/garden/2024-03-02", "body": "agent text\n"})
        assert created.is_error and "G05" in str(created.content)
        appended = await client.call_tool(
            "note_append", {"target": "Journals/garden/2024-03-01.md", "section": "Log", "markdown": "agent text"}
        )
        assert appended.is_error
        elsewhere = ok(await client.call_tool("note_create", {"path": "Agent note", "body": "fine here\n"}))
        assert elsewhere["outcome"] == "applied"
    mcp = typed_clients.open(home, Channel.MCP, session="s1")
    with refused(ErrorCode.POLICY):  # not a method of the agents' channel at all
        mcp.call(EDITION_PUBLISH, EditionPublishParams(vault="v", volume="garden"))
    with refused(ErrorCode.POLICY, IssueCode.G05):
        mcp.call(APPEND, AppendParams(vault="v", target="Journals/garden/2024-03-01.md", section="Log", markdown="x"))
    with refused(ErrorCode.POLICY, IssueCode.G05):
        mcp.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Journals/garden/2024-03-01.md"]))
    with refused(ErrorCode.POLICY):
        mcp.call(EDITION_CONFIGURE, EditionConfigureParams(vault="v", off=True))
    assert not (vault / "Editions").exists()
    assert (vault / "Journals/garden/2024-03-01.md").read_text() == "Planted beans.\n"


def test_a_schedule_publishes_changed_volumes_on_its_own(home: Home, cli: Any) -> None:
    daemon = Daemon(home)
    try:
        root = home.root / "vault"
        root.mkdir()
        _entries(root)
        assert cli("vault", "add", "v", str(root)).code == 0
        assert _json(cli, "edition", "configure", "--schedule", "daily")["volumes"]["schedule"] == "daily"
    finally:
        daemon.stop()
    daemon = Daemon(home)  # the schedule is looked at soon after a vault is taken
    try:

        def editions() -> list[str]:
            return sorted(p.name for p in (root / "Editions").glob("*.md")) if (root / "Editions").exists() else []

        wait_until(lambda: len(editions()) >= 2, 120, "the scheduled editions")
        made = editions()
        today = dt.date.today().isoformat()
        assert made == [f"CS566 Notes {today}.md", f"Garden {today}.md"], made
        listed = _json(cli, "edition", "list")
        assert [v["changed"] for v in listed["volumes"]] == [False, False]
    finally:
        daemon.stop()


def test_the_volume_rule_holds_whatever_the_letter_case_or_unicode_form(vault: Path, home: Home, typed_clients: TypedClients) -> None:
    """An agent's path spelled with other letter case (or another Unicode form) than the vault's
    volumes or editions folder is that folder on a case-insensitive disk or in a sync tool: refused
    like the exact spelling, as deny and private globs are, even before the folder exists."""
    before = snapshot(vault)
    mcp = typed_clients.open(home, Channel.MCP, session="s1")
    for path in ("editions/Forged.md", "EDITIONS/Forged.md", "journals/garden/2024-03-09.md", "JOURNALS/new/entry.md"):
        with refused(ErrorCode.POLICY, IssueCode.G05):
            mcp.call(CREATE, CreateParams(vault="v", path=path, body="agent text\n"))
    assert snapshot(vault) == before
