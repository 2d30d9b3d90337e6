"""Each write operation's happy path and its refusals, through the socket and the real CLI."""

from __future__ import annotations

import hashlib
import threading
from typing import TYPE_CHECKING

import msgspec
import pytest

from protocol.errors import ErrorCode, ErrorData, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.reads import LINKS, READ, SEARCH, STATS, LinksParams, ReadParams, SearchParams, StatsParams
from protocol.methods.receipts import Applied, ChangeAction, DryRun
from protocol.methods.vaults import VAULT_ADD, VaultAddParams, WritePolicy
from protocol.methods.writes import (
    APPEND,
    CREATE,
    LOG_APPEND,
    LOG_GREP,
    LOG_TAIL,
    OP_LIST,
    PATCH,
    SET_FRONTMATTER,
    UNDO,
    AppendParams,
    CreateParams,
    Edit,
    LogAppendParams,
    LogEvent,
    LogGrepParams,
    LogTailParams,
    LogType,
    OpListParams,
    PatchParams,
    SetFrontmatterParams,
    UndoParams,
)
from tests.support.harness import Daemon, snapshot
from tests.support.typed import TypedClient, TypedClients, refused
from vaultctl.client import CallError

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def vault(typed: TypedClient, sample_vault: Path) -> Path:
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    return sample_vault


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_create_then_read_search_and_log(vault: Path, typed: TypedClient) -> None:
    r = typed.call(
        CREATE,
        CreateParams(
            path="inbox/New Idea", title="New Idea", frontmatter={"type": "insight"}, body="# New Idea\n\nA quokka-shaped thought.\n"
        ),
    )
    assert isinstance(r, Applied)
    assert r.op_id
    assert r.changes[0].action is ChangeAction.CREATE
    text = (vault / "inbox" / "New Idea.md").read_text()
    assert text.startswith("---\n")
    assert "type: insight" in text
    assert "created:" in text
    assert "quokka" in text
    assert r.changes[0].after_sha == _sha(vault / "inbox" / "New Idea.md")
    hits = typed.call(SEARCH, SearchParams(query="quokka")).hits  # searchable as soon as the receipt arrives
    assert hits
    assert hits[0].path == "inbox/New Idea.md"
    assert r.log.appended
    assert r.log.line is not None
    assert "EXTRACT" in r.log.line
    assert (vault / "log.md").read_text().endswith(r.log.line + "\n")
    with pytest.raises(CallError) as again:
        typed.call(CREATE, CreateParams(path="inbox/new idea.md"))
    assert again.value.data.code in (ErrorCode.CONFLICT, ErrorCode.VALIDATION)


def test_dry_run_writes_nothing(vault: Path, typed: TypedClient) -> None:
    before = snapshot(vault)
    r = typed.call(CREATE, CreateParams(path="x/dry", dry_run=True))
    assert isinstance(r, DryRun)
    assert r.changes[0].path == "x/dry.md"
    assert snapshot(vault) == before
    assert not (vault / "x").exists()


def test_patch_single_and_edits_all_or_nothing(vault: Path, typed: TypedClient) -> None:
    path = vault / "people" / "Ada Lovelace.md"
    text = path.read_text()
    assert "Pairs with" in text
    r = typed.call(PATCH, PatchParams(target="Ada Lovelace", old="Pairs with", new="Works with"))
    assert isinstance(r, Applied)
    assert "Works with" in path.read_text()
    before = path.read_bytes()
    with refused(ErrorCode.VALIDATION):
        typed.call(
            PATCH, PatchParams(target="Ada Lovelace", edits=[Edit(old="Works with", new="x"), Edit(old="no such text anywhere", new="y")])
        )
    assert path.read_bytes() == before
    with refused(ErrorCode.VALIDATION):
        typed.call(PATCH, PatchParams(target="Ada Lovelace", old="a", new="b"))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(PATCH, PatchParams(target="Ada Lovelace", old="x", new="y", edits=[Edit(old="a", new="b")]))
    with refused(ErrorCode.VALIDATION):
        typed.call(PATCH, PatchParams(target="Ada Lovelace", old="writes the indexer", new="x"))


def test_expected_sha_and_concurrent_writers(vault: Path, typed: TypedClient, typed_clients: TypedClients, daemon: Daemon) -> None:
    read = typed.call(READ, ReadParams(target="Grace Hopper"))
    with refused(ErrorCode.CONFLICT):
        typed.call(PATCH, PatchParams(target="Grace Hopper", old="Grace", new="G.", expected_sha="0" * 64))
    outcomes: list[object] = []

    def writer(client: TypedClient, word: str) -> None:
        params = AppendParams(target="Grace Hopper", section="Log", markdown=word, expected_sha=read.sha256)
        try:
            outcomes.append(client.call(APPEND, params))
        except CallError as exc:
            outcomes.append(exc.data)

    writers = [(typed_clients.open(daemon.home), word) for word in ("first-writer", "second-writer")]
    threads = [threading.Thread(target=writer, args=args) for args in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = [o for o in outcomes if isinstance(o, Applied)]
    refusals = [o for o in outcomes if isinstance(o, ErrorData)]
    assert len(ok) == 1, outcomes
    assert len(refusals) == 1, outcomes
    assert refusals[0].code is ErrorCode.CONFLICT
    text = (vault / "people" / "Grace Hopper.md").read_text()
    assert ("first-writer" in text) != ("second-writer" in text)


def test_append_creates_section_before_topics_and_set_frontmatter_is_lossless(vault: Path, typed: TypedClient) -> None:
    typed.call(CREATE, CreateParams(path="t/topics", body="# T\n\nintro\n\n## Topics\n\n- [[Alpha Plan]]\n"))
    typed.call(APPEND, AppendParams(target="t/topics", section="Evidence", markdown="- one"))
    text = (vault / "t" / "topics.md").read_text()
    assert text.index("## Evidence") < text.index("## Topics")
    assert "- one" in text
    typed.call(APPEND, AppendParams(target="t/topics", section="Evidence", markdown="- two"))
    text = (vault / "t" / "topics.md").read_text()
    assert text.index("- one") < text.index("- two") < text.index("## Topics")
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(APPEND, AppendParams(target="t/topics", section="Topics", markdown="x"))
    path = vault / "concepts" / "Link Syntax.md"
    before_lines = path.read_text().splitlines()
    typed.call(SET_FRONTMATTER, SetFrontmatterParams(target="Link Syntax", set={"status": "draft"}))
    after_lines = path.read_text().splitlines()
    changed = [ln for ln in after_lines if ln not in before_lines]
    assert changed
    assert all(ln.startswith(("status:", "updated:")) for ln in changed), changed
    assert [ln for ln in before_lines if ln not in after_lines] == [ln for ln in before_lines if ln.startswith("updated:")]


def test_new_dead_links_warn_in_the_open_profile_and_old_ones_only_warn(vault: Path, typed: TypedClient) -> None:
    # A link to a note not written yet (a forward link) is everyday Obsidian: written, and reported.
    forward = typed.call(CREATE, CreateParams(path="d/dead", body="see [[Nowhere At All]]\n"))
    assert isinstance(forward, Applied)
    assert (vault / "d" / "dead.md").read_text().endswith("---\nsee [[Nowhere At All]]\n")
    [warning] = [w for w in forward.warnings if w.code == IssueCode.V03]
    assert warning.severity is Severity.WARNING
    assert "Nowhere At All" in warning.message
    assert warning.line == 5
    assert [d.target for d in typed.call(LINKS, LinksParams(target="d/dead")).dead] == ["Nowhere At All"]
    # An ambiguous link is still refused: no later note can make it name one note.
    with refused(ErrorCode.VALIDATION, IssueCode.V03):
        typed.call(CREATE, CreateParams(path="d/amb", body="see [[Meeting Notes]]\n"))
    assert not (vault / "d" / "amb.md").exists()
    ok = typed.call(CREATE, CreateParams(path="d/ok", body="see [[Alpha Plan]]\n"))
    assert isinstance(ok, Applied)
    assert not ok.warnings
    dead_holder = typed.call(LINKS, LinksParams(target="people/Grace Hopper.md"))
    assert dead_holder.dead, "the sample vault has a dead link here"
    r = typed.call(APPEND, AppendParams(target="people/Grace Hopper.md", section="More", markdown="fine"))
    assert isinstance(r, Applied)
    assert any(w.code == IssueCode.V03 for w in r.warnings)


def test_secrets_are_refused_without_echo(vault: Path, typed: TypedClient, daemon: Daemon) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with refused(ErrorCode.VALIDATION) as refusal:
        typed.call(CREATE, CreateParams(path="s/leak", body=f"my token {token}\n"))
    assert any(i.code == IssueCode.V06 for i in refusal.data.issues)
    # the error's data is the whole error: its message and code are derived from it
    assert token not in msgspec.json.encode(refusal.data).decode()
    assert not (vault / "s").exists()
    logs = (daemon.home.home / "logs" / "vaultd.log").read_text()
    assert token not in logs
    assert not (vault / "log.md").exists() or token not in (vault / "log.md").read_text()


def test_write_policy_by_channel(daemon: Daemon, typed_clients: TypedClients, tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    cli_only = typed_clients.open(daemon.home, Channel.CLI)
    cli_only.call(VAULT_ADD, VaultAddParams(id="clionly", path=str(tmp_path / "v"), write=WritePolicy.CLI))
    mcp = typed_clients.open(daemon.home, Channel.MCP)
    with refused(ErrorCode.POLICY):
        mcp.call(CREATE, CreateParams(vault="clionly", path="x"))
    assert isinstance(cli_only.call(CREATE, CreateParams(vault="clionly", path="x")), Applied)


def test_undo_round_trip_and_conflict(vault: Path, typed: TypedClient) -> None:
    before = snapshot(vault)
    r = typed.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find"))
    assert isinstance(r, Applied)
    ops = typed.call(OP_LIST, OpListParams()).ops
    assert ops[0].op_id == r.op_id
    u = typed.call(UNDO, UndoParams(op_id=r.op_id))
    assert isinstance(u, Applied)
    after = snapshot(vault)
    after.pop("log.md", None)
    before.pop("log.md", None)
    assert after == before
    r2 = typed.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find"))
    assert isinstance(r2, Applied)
    path = vault / "projects" / "alpha" / "Alpha Plan.md"
    path.write_text(path.read_text() + "\nedited by hand\n")
    typed.call(STATS, StatsParams(fresh=True))
    with refused(ErrorCode.CONFLICT) as conflict:
        typed.call(UNDO, UndoParams(op_id=r2.op_id))
    assert "projects/alpha/Alpha Plan.md" in conflict.data.message


def test_log_append_tail_grep(vault: Path, typed: TypedClient) -> None:
    r = typed.call(LOG_APPEND, LogAppendParams(event=LogEvent(type=LogType.TASK, source="test:suite", note="a plain note")))
    assert r.appended
    assert r.line is not None
    assert "  TASK  -  test:suite  —  a plain note" in r.line
    assert typed.call(LOG_TAIL, LogTailParams(limit=1)).lines == [r.line]
    assert typed.call(LOG_GREP, LogGrepParams(pattern="plain n.te")).lines == [r.line]
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(LOG_GREP, LogGrepParams(pattern="(a)\\1"))
    with refused(ErrorCode.VALIDATION):
        typed.call(LOG_APPEND, LogAppendParams(event=LogEvent(type=LogType.TASK, source="a  b", note="x")))
    before = (vault / "log.md").read_bytes() + b"torn"
    (vault / "log.md").write_bytes(before)
    torn = typed.call(LOG_APPEND, LogAppendParams(event=LogEvent(type=LogType.TASK, source="s", note="n")))
    assert torn.appended  # the unfinished last line is ended, never joined to the new event
    assert torn.line is not None
    assert (vault / "log.md").read_bytes() == before + b"\n" + torn.line.encode() + b"\n"


def test_cli_writes_text_and_json(vault: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("new", "cli/made", "--title", "Made", "--set", '{"type": "insight"}', "--json")
    assert out.code == 0, out.err
    receipt = out.json()
    assert receipt["outcome"] == "applied"
    assert receipt["changes"][0]["path"] == "cli/made.md"
    text = cli("patch", "Made", "--old", "# Made", "--new", "# Made by CLI")
    assert text.code == 0
    assert text.out.startswith("applied note.patch (op ")
    stale = cli("patch", "Made", "--old", "CLI", "--new", "x", "--expected-sha", "0" * 64)
    assert stale.code == 75
    assert cli("append", "Made", "--section", "Notes", "--markdown", "hello").code == 0
    assert cli("set", "Made", "--set", '{"status": "draft"}', "--unset", "type").code == 0
    assert "status: draft" in (vault / "cli" / "made.md").read_text()
    assert cli("ops").out.splitlines()[0].split()[:2] == ["OP", "ID"]
    assert cli("new", "cli/made").code == 1
    assert cli("log", "tail", "--limit", "2").code == 0
    assert cli("new", "x", "--set", "{not json").code == 2
