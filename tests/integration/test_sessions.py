"""Agent sessions as records, work documents and the host's prompt and stop hooks, through the
official MCP SDK client against ``vaultctl mcp`` and a real daemon, with the person on ``vaultctl``."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Channel, Empty
from protocol.methods.gate import MAX_HOT_BYTES, AgentPolicyChange
from protocol.methods.guard import GUARD_CONTEXT
from protocol.methods.reads import READ, ReadParams
from protocol.methods.receipts import Applied
from protocol.methods.sessions import (
    MAX_PROMPT_CHARS,
    MAX_RECORD_BYTES,
    MAX_SESSIONS,
    SESSION_HOOK,
    SESSION_LIST,
    SESSION_SHOW,
    HookEvent,
    SessionHookParams,
    SessionListParams,
    SessionShowParams,
)
from protocol.methods.vaults import VAULT_SET, VaultSetApplied, VaultSetParams, VaultSetPreview
from protocol.methods.work import (
    MAX_WORK,
    MAX_WORK_BYTES,
    MAX_WORK_LINE,
    MAX_WORK_NOTES,
    WORK_FINISH,
    WORK_LIST,
    WORK_START,
    WorkListParams,
    WorkRef,
    WorkStartParams,
    WorkState,
    WorkSummary,
)
from protocol.methods.writes import CREATE, CreateParams
from tests.support.agent import agent, ok
from tests.support.events import Subscriber
from tests.support.harness import RawClient, registered_vault
from tests.support.mcp_results import tool_error
from tests.support.typed import refused
from tests.support.wait import wait_until
from vaultctl.client import CallError
from vaultd.fsio import TEMP_PREFIX, TEMP_SUFFIX
from vaultd.sessions.files import STALE_TEMP_S

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient, TypedClients

NOTES = {
    "Alpha.md": "# Alpha\n\nFirst note.\n",
    "Beta.md": "# Beta\n\nSecond note, see [[Alpha]].\n",
    "Gamma.md": "# Gamma\n\nA note nothing links to.\n",
    "Secret/Plan.md": "# Plan\n\nNot for agents.\n",
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES, private_paths=["Secret/**"])


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return result.json()


def _hook(cli: Any, payload: dict[str, Any]) -> Any:
    return cli("guard", input=json.dumps(payload))


async def _delete_proposed(client: Any, target: str) -> str:
    preview = ok(await client.call_tool("note_delete", {"target": target}))
    done = ok(await client.call_tool("note_delete", {"target": target, "confirm": True, "fingerprint": preview["fingerprint"]}))
    assert done["outcome"] == "proposed", done
    return str(done["proposal"])


def _wait_ended(cli: Any, session: str) -> dict[str, Any]:
    """The record once its last connection closed (the daemon hears of it as the shim exits)."""
    wait_until(lambda: _json(cli, "sessions", session)["ended"] is not None, 30, f"session {session} to end")
    return dict(_json(cli, "sessions", session))


async def test_a_session_records_what_it_read_wrote_and_proposed_and_resumes_by_id(vault: Path, home: Home, cli: Any) -> None:
    env = {"VAULTD_SESSION": "s-one"}
    async with agent(home, env) as client:
        ok(await client.call_tool("note_read", {"target": "Alpha"}))
        appended = ok(await client.call_tool("note_append", {"target": "Beta", "section": "Log", "markdown": "a line"}))
        proposal = await _delete_proposed(client, "Gamma")
        mine = ok(await client.call_tool("session_show", {}))
    assert mine["id"] == "s-one" and mine["ended"] is None
    assert {"vault": "v", "path": "Alpha.md"} in mine["read"]
    assert [o["id"] for o in mine["op_list"]] == [appended["op_id"]]
    assert [o["id"] for o in mine["proposal_list"]] == [proposal]
    assert {n["path"] for n in mine["touched"]} >= {"Beta.md", "Gamma.md"}
    assert mine["ops"] == 1 and mine["proposals"] == 1

    ended = _wait_ended(cli, "s-one")
    assert ended["ended"] is not None, "the record closes with its last connection"
    listed = _json(cli, "sessions")["sessions"]
    assert [s["id"] for s in listed] == ["s-one"]
    assert "s-one" in cli("sessions", "s-one").out

    # Resume: a client naming the same id continues the record, open again, its history kept.
    async with agent(home, env) as client:
        ok(await client.call_tool("note_read", {"target": "Beta"}))
        again = ok(await client.call_tool("session_show", {"id": "s-one"}))
    assert again["ended"] is None and again["started"] == mine["started"]
    assert [o["id"] for o in again["op_list"]] == [appended["op_id"]]
    assert {n["path"] for n in again["read"]} == {"Alpha.md", "Beta.md"}


async def test_private_paths_are_screened_from_records_an_agent_reads(vault: Path, home: Home, cli: Any) -> None:
    said = _hook(cli, {"hook_event_name": "UserPromptSubmit", "session_id": "host-1", "prompt": "tidy Secret/Plan.md and Alpha.md\nmore"})
    assert said.code == 0 and said.out == ""
    person_view = _json(cli, "sessions", "host-1")
    assert [p["text"] for p in person_view["prompts"]] == ["tidy Secret/Plan.md and Alpha.md"], "the person sees the whole line"
    async with agent(home) as client:
        shown = ok(await client.call_tool("session_show", {"id": "host-1"}))
    text = shown["prompts"][0]["text"]
    assert "Secret/Plan.md" not in text and "Plan" not in text, text


def test_prompt_summaries_and_the_record_count_are_bounded(vault: Path, typed: TypedClient, cli: Any) -> None:
    at = "x" * MAX_PROMPT_CHARS
    past = "y" * (MAX_PROMPT_CHARS + 1)
    for prompt in (at, past, "token ghp_" + "a" * 36):
        typed.call(SESSION_HOOK, SessionHookParams(event=HookEvent.PROMPT, id="bounded", host="claude-code", prompt=prompt))
    texts = [p["text"] for p in _json(cli, "sessions", "bounded")["prompts"]]
    assert texts[0] == at, "a line at the bound is kept whole"
    assert len(texts[1]) == MAX_PROMPT_CHARS and texts[1].endswith("…"), "one past it is cut"
    assert "ghp_" not in texts[2] and "secret" in texts[2], "a line that holds a secret is not kept"

    for n in range(MAX_SESSIONS + 1):
        typed.call(SESSION_HOOK, SessionHookParams(event=HookEvent.START, id=f"many-{n:03d}", host="claude-code"))
    kept = typed.call(SESSION_LIST, SessionListParams(limit=MAX_SESSIONS)).sessions
    ids = {s.id for s in kept}
    assert len(kept) == MAX_SESSIONS and f"many-{MAX_SESSIONS:03d}" in ids and "bounded" not in ids, "the longest unseen goes first"


async def test_the_stop_hook_reminds_the_agent_once_of_what_it_leaves_unfinished(vault: Path, home: Home, cli: Any) -> None:
    quiet = _hook(cli, {"hook_event_name": "Stop", "session_id": "s-two", "stop_hook_active": False})
    assert quiet.code == 0 and quiet.out == "", "nothing unfinished: nothing said"
    async with agent(home, {"VAULTD_SESSION": "s-two"}) as client:
        work = ok(await client.call_tool("work_start", {"what": "tidy the notes", "notes": ["Beta.md"]}))
        proposal = await _delete_proposed(client, "Gamma")
        stop = _hook(cli, {"hook_event_name": "Stop", "session_id": "s-two", "stop_hook_active": False})
        assert stop.code == 0, stop.err
        answer = json.loads(stop.out)
        assert answer["decision"] == "block"
        assert proposal in answer["reason"] and work["id"] in answer["reason"]
        again = _hook(cli, {"hook_event_name": "Stop", "session_id": "s-two", "stop_hook_active": True})
        assert again.code == 0 and again.out == "", "a stop already continued for the hook is let through"
        ok(await client.call_tool("work_finish", {"id": work["id"]}))
        ok(await client.call_tool("proposal_withdraw", {"id": proposal}))
        done = _hook(cli, {"hook_event_name": "Stop", "session_id": "s-two", "stop_hook_active": False})
        assert done.code == 0 and done.out == ""


async def test_cancelling_work_undoes_its_operations_and_keeps_a_persons_later_edit(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home, {"VAULTD_SESSION": "s-three"}) as client:
        work = ok(await client.call_tool("work_start", {"what": "restructure", "kind": "refactor", "notes": ["Alpha.md", "Beta.md"]}))
        assert work["state"] == "running"
        a1 = ok(await client.call_tool("note_append", {"target": "Alpha", "section": "Log", "markdown": "one"}))
        a2 = ok(await client.call_tool("note_append", {"target": "Alpha", "section": "Log", "markdown": "two"}))
        b1 = ok(await client.call_tool("note_append", {"target": "Beta", "section": "Log", "markdown": "three"}))
        made = ok(await client.call_tool("note_create", {"path": "Delta", "body": "new\n"}))
        ok(await client.call_tool("work_progress", {"id": work["id"], "line": "3 of 4 notes done"}))

        status = cli("status")
        assert "restructure" in status.out and "3 of 4 notes done" in status.out, status.out
        listed = _json(cli, "work")["work"]
        assert [w["ops"] for w in listed] == [[a1["op_id"], a2["op_id"], b1["op_id"], made["op_id"]]]

        # The person edits Beta after the agent did; another session may not cancel the work.
        (vault / "Beta.md").write_text((vault / "Beta.md").read_text() + "my own line\n")
        async with agent(home, {"VAULTD_SESSION": "s-other"}) as other:
            refused = tool_error(await other.call_tool("work_cancel", {"id": work["id"]}))
            assert refused["code"] == "POLICY", refused
        beta_now = (vault / "Beta.md").read_bytes()

        cancelled = ok(await client.call_tool("work_cancel", {"id": work["id"]}))
    assert cancelled["outcome"] == "applied", cancelled
    assert cancelled["detail"]["kept"] == ["Beta.md"]
    assert cancelled["detail"]["undone"] == [made["op_id"], b1["op_id"], a2["op_id"], a1["op_id"]]
    assert (vault / "Alpha.md").read_text() == NOTES["Alpha.md"]
    assert not (vault / "Delta.md").exists()
    assert (vault / "Beta.md").read_bytes() == beta_now, "the person's edit is never overwritten"
    closed = _json(cli, "work", "--all")["work"][0]
    assert closed["state"] == "cancelled" and closed["kept"] == ["Beta.md"] and closed["undo_op"] == cancelled["op_id"]
    # The cancel is one operation: undoing it brings the work's changes back.
    undone = cli("undo", cancelled["op_id"], "--vault", "v", "--json")
    assert undone.code == 0, undone.err
    assert (vault / "Delta.md").exists()


def test_a_person_cancels_work_from_vaultctl(vault: Path, typed: TypedClient, cli: Any) -> None:
    started = _json(cli, "work", "--all")
    assert started["work"] == []
    from protocol.methods.work import WORK_START, WorkStartParams

    work = typed.call(WORK_START, WorkStartParams(what="a person's work"))
    assert work.session is None
    cancelled = _json(cli, "work", "cancel", work.id, "--vault", "v")
    assert cancelled["outcome"] == "unchanged" and cancelled["detail"]["work"] == work.id
    assert _json(cli, "work", "--all")["work"][0]["state"] == "cancelled"
    again = cli("work", "cancel", work.id, "--vault", "v", "--json")
    assert again.code != 0 and "cancelled already" in again.err


def _policy(typed: TypedClient, **cells: Any) -> None:
    change = AgentPolicyChange(**cells)
    preview = typed.call(VAULT_SET, VaultSetParams(id="v", agents=change))
    assert isinstance(preview, VaultSetPreview)
    done = typed.call(VAULT_SET, VaultSetParams(id="v", agents=change, confirm=True, fingerprint=preview.fingerprint))
    assert isinstance(done, VaultSetApplied)


def _hot(typed: TypedClient) -> str:
    [told] = typed.call(GUARD_CONTEXT, Empty()).vaults
    return told.hot


def test_the_hot_session_context_is_what_the_person_chose_bounded_and_never_private(vault: Path, typed: TypedClient, cli: Any) -> None:
    today = dt.date.today().isoformat()
    (vault / f"{today}.md").write_text("# Today\n\n## Plan\n\n- a\n\n## Log\n")
    assert cli("append", "Alpha", "--section", "Log", "--markdown", "visible change").code == 0
    assert cli("append", "Secret/Plan", "--section", "Log", "--markdown", "private change").code == 0
    preview = cli(
        "vault", "policy", "v", "--session-context", "--hot", "ops,proposals,daily,pinned", "--hot-pinned", "Secret/Plan.md", "--json"
    )
    assert preview.code == 0, preview.err
    confirmed = cli(
        "vault", "policy", "v", "--session-context", "--hot", "ops,proposals,daily,pinned", "--hot-pinned", "Secret/Plan.md",
        "--confirm", "--fingerprint", preview.json()["fingerprint"], "--json",
    )  # fmt: skip
    assert confirmed.code == 0, confirmed.err
    hot = _hot(typed)
    assert "recent operation" in hot and "Alpha.md" in hot, hot
    assert f"today's note {today}.md: # Today | ## Plan | ## Log" in hot
    assert "Secret" not in hot and "private change" not in hot and "pinned note" not in hot, "never a private path"

    _policy(typed, hot_pinned="Beta.md", hot_bytes=MAX_HOT_BYTES)
    whole = _hot(typed)
    assert "pinned note Beta.md:" in whole and "Second note, see [[Alpha]]." in whole
    size = len(whole.encode())
    _policy(typed, hot_bytes=size)
    assert _hot(typed) == whole, "at the bound: all of it"
    _policy(typed, hot_bytes=size - 1)
    cut = _hot(typed)
    assert len(cut.encode()) <= size - 1 and whole.startswith(cut) and len(cut) >= len(whole) - 2, "one past: cut, never more"

    started = cli("guard", input=json.dumps({"hook_event_name": "SessionStart", "session_id": "host-2", "source": "startup"}))
    assert started.code == 0, started.err
    context = json.loads(started.out)["hookSpecificOutput"]["additionalContext"]
    assert "[v] " + cut in context
    _policy(typed, hot=[])
    assert _hot(typed) == ""


async def test_a_persons_subscription_sees_work_live(vault: Path, home: Home, cli: Any) -> None:
    subscriber = Subscriber(home.socket)
    try:
        subscriber.subscribe(vaults=["v"], kinds=["work.changed"])
        async with agent(home, {"VAULTD_SESSION": "s-live"}) as client:
            work = ok(await client.call_tool("work_start", {"what": "sort the inbox"}))
            ok(await client.call_tool("work_progress", {"id": work["id"], "line": "half way"}))
            ok(await client.call_tool("work_finish", {"id": work["id"]}))
        seen = subscriber.read_until(lambda events: len(events) >= 3, 30, "three work events")
    finally:
        subscriber.close()
    assert [(e["state"], e["progress"]) for e in seen] == [("running", ""), ("running", "half way"), ("finished", "half way")]
    assert {e["id"] for e in seen} == {work["id"]} and seen[0]["what"] == "sort the inbox" and seen[0]["session"] == "s-live"


def test_a_write_under_a_work_at_its_byte_bound_is_refused_before_it_applies(
    vault: Path, home: Home, typed: TypedClient, typed_clients: TypedClients
) -> None:
    """The work a write is tagged with is checked before the write, never after: a write the
    work cannot take is refused whole (LIMIT, nothing written), and every write applied is in it."""
    client = typed_clients.open(home, Channel.MCP, session="s-full")
    folder = vault / ".vaultd" / "work"

    def notes(fill: int) -> list[str]:
        names = [f"{chr(97 + i % 26)}{i:03}" + "n" * 1016 for i in range(58)]
        while fill > 0:
            names.append(f"z{len(names):03}" + "f" * min(1016, max(fill - 7, 0)))
            fill -= len(names[-1]) + 3
        return names

    probe = client.call(WORK_START, WorkStartParams(vault="v", what="probe", notes=notes(0)))
    room = MAX_WORK_BYTES - (folder / f"{probe.id}.json").stat().st_size
    client.call(WORK_FINISH, WorkRef(vault="v", id=probe.id))
    work = client.call(WORK_START, WorkStartParams(vault="v", what="fills its record", notes=notes(room - 150)))
    applied_ids = []
    for n in range(40):
        try:
            made = client.call(CREATE, CreateParams(vault="v", path=f"Filled {n}.md", body="x\n"))
        except CallError as exc:
            assert exc.data.code is ErrorCode.LIMIT, exc.data
            assert not (vault / f"Filled {n}.md").exists(), "a refused write writes nothing"
            break
        assert isinstance(made, Applied), made
        applied_ids.append(made.op_id)
    else:
        raise AssertionError("the work never reached its bound")
    assert applied_ids, "the work took writes up to its bound"
    kept = typed.call(WORK_LIST, WorkListParams(vault="v")).work[0]
    assert kept.id == work.id and kept.ops == applied_ids, "every applied write is the work's"
    size = (folder / f"{work.id}.json").stat().st_size
    assert size <= MAX_WORK_BYTES < size + len(applied_ids[-1]) + 3, "refused at the bound, not before"


def test_work_documents_are_bounded_at_their_edges(vault: Path, typed: TypedClient) -> None:
    """MAX_WORK records per vault (past it the oldest closed one goes; none closed: LIMIT),
    MAX_WORK_LINE characters per line, MAX_WORK_NOTES notes: each at the bound and one past."""
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(WORK_START, {"vault": "v", "what": "w" * (MAX_WORK_LINE + 1)})
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(WORK_START, {"vault": "v", "what": "x", "notes": [f"n{i}.md" for i in range(MAX_WORK_NOTES + 1)]})
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(WORK_START, {"vault": "v", "what": "line\nbreak"})
    first = typed.call(WORK_START, WorkStartParams(vault="v", what="w" * MAX_WORK_LINE, notes=[f"n{i}.md" for i in range(MAX_WORK_NOTES)]))
    started = [first.id] + [typed.call(WORK_START, WorkStartParams(vault="v", what=f"work {n}")).id for n in range(1, MAX_WORK)]
    assert len(typed.call(WORK_LIST, WorkListParams(vault="v", limit=MAX_WORK)).work) == MAX_WORK
    with refused(ErrorCode.LIMIT):  # every kept record is running: none may go
        typed.call(WORK_START, WorkStartParams(vault="v", what="one too many"))
    typed.call(WORK_FINISH, WorkRef(vault="v", id=started[5]))
    made = typed.call(WORK_START, WorkStartParams(vault="v", what="room made"))
    kept = {w.id for w in typed.call(WORK_LIST, WorkListParams(vault="v", all=True, limit=MAX_WORK)).work}
    assert len(kept) == MAX_WORK and made.id in kept and started[5] not in kept, "the closed one made room"


def test_a_work_folder_that_is_not_vaultds_own_is_never_read_nor_written(
    vault: Path, home: Home, cli: Any, typed: TypedClient, typed_clients: TypedClients
) -> None:
    """``.vaultd/work`` swapped for a link to a folder of forged records: vaultd reads none of them
    (a forged running work would take a session's writes) and writes nothing through it."""
    forged = home.root / "forged"
    forged.mkdir()
    record = WorkSummary(
        id="w20260101000000-0000abcd",
        vault="v",
        session="s-victim",
        what="forged",
        kind="edit",
        state=WorkState.RUNNING,
        started=1,
        updated=1,
    )
    (forged / f"{record.id}.json").write_bytes(msgspec.json.encode(record))
    (vault / ".vaultd" / "work").symlink_to(forged)
    with refused(ErrorCode.UNAVAILABLE) as refusal:
        typed.call(WORK_LIST, WorkListParams(vault="v", all=True))
    assert "forged" not in refusal.data.message
    with refused(ErrorCode.UNAVAILABLE):
        typed.call(WORK_START, WorkStartParams(vault="v", what="a person's work"))
    assert sorted(p.name for p in forged.iterdir()) == [f"{record.id}.json"], "nothing written through the link"
    # The rest of the daemon goes on: status, the session list, and an agent's write there is refused clearly.
    assert cli("status").code == 0
    typed.call(SESSION_LIST, SessionListParams())
    agent_client = typed_clients.open(home, Channel.MCP, session="s-victim")
    with refused(ErrorCode.UNAVAILABLE):
        agent_client.call(CREATE, CreateParams(vault="v", path="Taken.md", body="x\n"))
    assert not (vault / "Taken.md").exists()


def test_torn_and_hostile_state_files_are_passed_over_and_the_daemon_answers(
    vault: Path, home: Home, cli: Any, typed: TypedClient, typed_clients: TypedClients
) -> None:
    """Session records and work documents as a crash or a hand could leave them (half a record, a
    record under another's name, a FIFO, one over its bound, a folder): each is passed over, the
    rest read, and the next write of that record replaces it whole."""
    good = WorkSummary(id="w20260101000000-0000beef", vault="v", what="kept", kind="edit", state=WorkState.RUNNING, started=1, updated=1)
    for folder, name, data in (
        (home.home / "sessions", "s-torn.json", b'{"id": "s-torn", "client": "x", "start'),
        (home.home / "sessions", "s-other.json", msgspec.json.encode({"id": "s-else", "client": "x", "started": 1, "seen": 1})),
        (home.home / "sessions", "s-big.json", b" " * (MAX_RECORD_BYTES + 1)),
        (vault / ".vaultd" / "work", "w20260101000000-0000dead.json", b"\x00\xff not json"),
        (vault / ".vaultd" / "work", f"{good.id}.json", msgspec.json.encode(good)),
    ):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    os.mkfifo(home.home / "sessions" / "s-fifo.json")
    (vault / ".vaultd" / "work" / "w20260101000000-0000f01d.json").mkdir()
    assert typed.call(SESSION_LIST, SessionListParams(limit=MAX_SESSIONS)).sessions == []
    assert [w.id for w in typed.call(WORK_LIST, WorkListParams(vault="v")).work] == [good.id]
    # The torn record's session opens: its record is written whole over what was there.
    client = typed_clients.open(home, Channel.MCP, session="s-torn")
    client.call(READ, ReadParams(vault="v", target="Alpha"))
    shown = typed.call(SESSION_SHOW, SessionShowParams(id="s-torn"))
    assert [n.path for n in shown.read] == ["Alpha.md"]
    assert msgspec.json.decode((home.home / "sessions" / "s-torn.json").read_bytes())["id"] == "s-torn"
    assert cli("status").code == 0


def test_session_ids_that_differ_only_in_letter_case_are_refused_not_kept_as_one_file(
    vault: Path, home: Home, typed: TypedClient, typed_clients: TypedClients
) -> None:
    """A record's file is ``<id>.json``: on a disk that folds case (macOS's by default) two ids
    in other letter case would be one file, each overwriting the other. They are compared by path
    key on every disk, so the second is refused (CONFLICT, naming the first) and the first kept."""
    first = typed_clients.open(home, Channel.MCP, session="Case-One")
    first.call(READ, ReadParams(vault="v", target="Alpha"))
    for other in ("case-one", "CASE-ONE"):
        reply = RawClient(home.socket).request("hello", {"client": "t", "version": "1", "channel": "mcp", "session": other})
        assert reply["error"]["data"]["code"] == "CONFLICT" and "Case-One" in reply["error"]["message"], reply
        with refused(ErrorCode.CONFLICT):
            typed.call(SESSION_HOOK, SessionHookParams(event=HookEvent.PROMPT, id=other, host="claude-code", prompt="tidy"))
    assert [s.id for s in typed.call(SESSION_LIST, SessionListParams()).sessions] == ["Case-One"]
    assert os.listdir(home.home / "sessions") == ["Case-One.json"]
    # The recorded id itself resumes as ever, and its history is whole.
    again = typed_clients.open(home, Channel.MCP, session="Case-One")
    again.call(READ, ReadParams(vault="v", target="Beta"))
    kept = typed.call(SESSION_SHOW, SessionShowParams(id="Case-One"))
    assert {n.path for n in kept.read} == {"Alpha.md", "Beta.md"}
    # Ids apart in more than case stay apart.
    typed_clients.open(home, Channel.MCP, session="Case-Two").call(READ, ReadParams(vault="v", target="Alpha"))
    assert sorted(os.listdir(home.home / "sessions")) == ["Case-One.json", "Case-Two.json"]


def test_a_temp_file_a_crashed_record_write_left_is_removed_and_a_young_one_kept(
    vault: Path, home: Home, typed: TypedClient, typed_clients: TypedClients
) -> None:
    """A record is written to a temp file, then renamed; a daemon killed between the two leaves
    the temp file behind. The folder's next read removes one older than any write takes, in the
    session records and in a vault's work documents alike, and leaves a young one (a write under
    way) alone."""
    old = time.time() - STALE_TEMP_S - 60
    left: list[Path] = []
    for folder in (home.home / "sessions", vault / ".vaultd" / "work"):
        folder.mkdir(parents=True, exist_ok=True)
        stale, young = folder / f"{TEMP_PREFIX}0123456789abcdef{TEMP_SUFFIX}", folder / f"{TEMP_PREFIX}fedcba9876543210{TEMP_SUFFIX}"
        stale.write_bytes(b'{"id": "s-half')
        young.write_bytes(b'{"id": "s-half')
        os.utime(stale, (old, old))
        left.append(young)
    typed.call(SESSION_LIST, SessionListParams())
    typed.call(WORK_LIST, WorkListParams(vault="v"))
    typed_clients.open(home, Channel.MCP, session="s-after").call(READ, ReadParams(vault="v", target="Alpha"))
    assert sorted(os.listdir(home.home / "sessions")) == sorted(["s-after.json", left[0].name])
    assert os.listdir(vault / ".vaultd" / "work") == [left[1].name]
