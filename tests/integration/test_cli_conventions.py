"""vaultctl as a person meets it, through the real CLI against a real daemon: help, colour, width,
show and its pages, hints that keep every option, errors named by flag and printed once, exit
statuses per refusal, short shas, ``--set key=value``, undo of an undone operation, completion
answers, and doctor with and without a daemon."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Channel
from protocol.methods.names import NOTE_NAMES, NamesParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from tests.support.harness import REPO, VAULTCTL, Daemon, Home, Result, copy_sample_vault, vaultctl
from tests.support.typed import TypedClient, TypedClients, refused
from vaultctl import layout
from vaultctl.client import CallError

if TYPE_CHECKING:
    from pathlib import Path

ALPHA = "projects/alpha/Alpha Plan.md"


@pytest.fixture
def vault(daemon: Daemon, typed: TypedClient, sample_vault: Path) -> Path:
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    return sample_vault


def _run(home: Home, *args: str, **env: str) -> Result:
    return vaultctl(home, *args, env={"VAULTD_NO_AUTOSTART": "1", **env})


def _one_error_line(r: Result) -> str:
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    return lines[0]


# -- help -----------------------------------------------------------------------------------------


def test_help_command_prints_what_dash_dash_help_prints(home: Home) -> None:
    assert _run(home, "help", "log", "tail").out == _run(home, "log", "tail", "--help").out
    assert _run(home, "help").out == _run(home, "--help").out
    unknown = _run(home, "help", "log", "nope")
    assert unknown.code == 2 and "no command 'vaultctl log nope'" in _one_error_line(unknown)
    search = _run(home, "search", "--help").out
    assert "Usage: vaultctl search [OPTIONS] [QUERY]" in search and "{query}" not in search  # a filter alone is a search
    assert "^[a-z][a-z0-9-]{0,31}$" in _run(home, "vault", "add", "--help").out
    assert "╭" not in search  # plain text: no Rich panels


def test_help_and_completion_import_nothing_heavy() -> None:
    """vaultctl starts per command (and per Tab): help must not pull in Rich, pydantic or the daemon."""
    code = (
        "import sys, runpy, io, contextlib\n"
        "for argv in (['vaultctl', '--help'], ['vaultctl', '__complete', 'bash', 'vaultctl se']):\n"
        "    sys.argv = argv\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n            runpy.run_module('vaultctl.main', run_name='__main__')\n"
        "        except SystemExit:\n            pass\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'pydantic', 'vaultd', 'anyio', 'apsw', 'mcp'})\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert "HEAVY []" in out.stdout, (out.stdout, out.stderr)


def test_help_wraps_to_columns(home: Home) -> None:
    narrow = _run(home, "search", "--help", COLUMNS="50").out
    assert max(layout.columns(line) for line in narrow.splitlines()) <= 50
    wide = _run(home, "search", "--help", COLUMNS="200").out
    assert max(layout.columns(line) for line in wide.splitlines()) > 80


# -- output a person reads -------------------------------------------------------------------------


def test_search_shows_matches_in_colour_never_as_stars(vault: Path, cli: Any) -> None:
    plain = cli("search", "alpha")
    assert plain.code == 0 and "**" not in plain.out and "\x1b[" not in plain.out
    hits = cli("search", "alpha", "--json").json()["hits"]
    assert plain.out.splitlines()[0].startswith(hits[0]["path"])
    # each highlight is a match: the word, or a whole link holding it
    assert all(h["highlights"] and all("alpha" in h["excerpt"][a:b].lower() for a, b in h["highlights"]) for h in hits)
    coloured = cli("--color", "always", "search", "alpha", env={"NO_COLOR": "1"})
    assert "\x1b[1;31mAlpha\x1b[0m" in coloured.out and "**" not in coloured.out
    assert "\x1b[" not in cli("--color", "never", "search", "alpha").out
    assert "\x1b[" not in cli("search", "alpha", env={"NO_COLOR": "1", "COLUMNS": "80"}).out


@pytest.mark.parametrize("args", [["search", "alpha"], ["list"], ["stats"], ["doctor"], ["links", "Alpha Plan"], ["vault", "list"]])
def test_text_fits_columns(vault: Path, cli: Any, args: list[str]) -> None:
    r = cli(*args, env={"COLUMNS": "60"})
    assert r.code in (0, 1), r.err
    too_wide = [line for line in r.out.splitlines() if layout.columns(line) > 60]
    assert not too_wide, "\n".join(too_wide)


def test_show_prints_a_header_and_the_frontmatter_then_pages_on_stderr(vault: Path, cli: Any) -> None:
    whole = cli("show", "Alpha Plan", "--json").json()
    page = cli("show", "Alpha Plan", "--max-bytes", "100")
    assert page.code == 0
    head = page.out.splitlines()
    assert head[0].split() == [ALPHA.split("/")[0] + "/alpha/Alpha", "Plan.md", "sha", whole["sha256"][:12], f"{whole['size']}", "bytes"]
    assert head[1] == "---" and "title: Alpha Plan" in head and "tags: [project/alpha, status/active]" in head
    assert "next page" not in page.out and "[truncated" not in page.out
    trailer = page.err.strip()
    assert trailer.startswith("[bytes 0..") and "--all" in trailer
    command = trailer.split("next page: ")[1].split(";")[0]
    second = cli(*shlex.split(command)[1:])
    assert second.code == 0 and "from byte" in second.out.splitlines()[0] and "---" not in second.out.splitlines()[1:2]
    everything = cli("show", "Alpha Plan", "--all")
    assert everything.err == "" and everything.out.rstrip("\n").endswith(whole["body"].rstrip("\n"))


def test_show_pages_a_long_note_on_a_terminal(vault: Path, home: Home, tmp_path: Path) -> None:
    """On a terminal, show reads the whole note and hands it to the pager when it is longer than the screen."""
    import fcntl
    import pty
    import struct
    import termios

    (vault / "long.md").write_text("# Long\n\n" + "".join(f"line {i}\n" for i in range(300)))
    caught = tmp_path / "paged.txt"
    pager = tmp_path / "pager"
    pager.write_text(f"#!/bin/sh\ncat > {shlex.quote(str(caught))}\n")
    pager.chmod(0o755)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**home.env, "VAULTD_NO_AUTOSTART": "1", "VAULTD_PAGER": str(pager), "VAULTD_VAULT": "sample", "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    proc = subprocess.run(
        [*VAULTCTL, "show", "long", "--max-bytes", "64"], env=env, stdout=slave, stderr=subprocess.PIPE, timeout=60, cwd=REPO
    )
    assert proc.returncode == 0 and not caught.exists()  # a page was asked for: no pager, the trailer instead
    proc = subprocess.run([*VAULTCTL, "show", "long", "--fresh"], env=env, stdout=slave, stderr=subprocess.PIPE, timeout=60, cwd=REPO)
    os.close(slave)
    os.close(master)
    assert proc.returncode == 0, proc.stderr
    paged = caught.read_text()
    assert paged.splitlines()[0].startswith("long.md  sha ") and "line 299" in paged and proc.stderr == b""


def test_next_page_hints_keep_every_option(vault: Path, cli: Any) -> None:
    first = cli("list", "projects", "--vault", "sample", "--limit", "2")
    assert first.code == 0 and "next page" not in first.out
    hint = first.err.strip().split("next page: ")[1].rstrip("]")
    words = shlex.split(hint)
    assert words[:3] == ["vaultctl", "list", "projects"] and "--vault" in words and "--limit" in words
    second = cli(*words[1:], cwd=vault.parent)  # run from elsewhere: the hint still names the vault
    assert second.code == 0
    seen = {line.split()[0] for line in first.out.splitlines()[1:]}
    assert seen and not seen & {line.split()[0] for line in second.out.splitlines()[1:]}
    assert all(line.split()[0].startswith("projects/") for line in second.out.splitlines()[1:])


# -- errors and exit statuses ------------------------------------------------------------------------


def test_a_bad_value_names_its_flag_once(vault: Path, cli: Any) -> None:
    for args, flag in ((["search", "alpha", "--limit", "0"], "--limit"), (["show", "Alpha Plan", "--max-bytes", "0"], "--max-bytes")):
        r = cli(*args)
        assert r.code == 2, r.err
        line = _one_error_line(r)
        assert line.startswith(f"vaultctl: {flag}: ") and "$.params" not in line


@pytest.mark.parametrize(
    ("args", "status", "says"),
    [
        (["link", "Ideas", "Ideas"], 2, "both 'Ideas'"),
        (["link", "Ideas", "inbox/Ideas.md"], 1, "cannot be linked to itself"),
        (["supersede", "Ideas", "inbox/Ideas"], 1, "cannot supersede itself"),
        (["merge", "Ideas", "inbox/Ideas"], 1, "cannot be merged into itself"),
        (["move", "Ada Lovelace", "people/Ada Lovelace"], 1, "already at that path"),
        (["move", "X", "X"], 2, "both 'X'"),
        (["patch", "Ideas", "--old", "x"], 2, "old and new go together"),
        (["append", "Ideas", "--section", "Topics", "--markdown", "x"], 2, "Topics"),
        (["show", "Alpha Plan", "--offset", "99999"], 2, "past the end"),
        (["search", "x" * 1025], 2, "vaultctl: QUERY: Expected `str` of length <= 1024"),
        (["set", "Ideas", "--set", "novalue"], 2, "--set takes key=value"),
        (["vault", "add", "again", "{vault}"], 1, "already registered"),
        (["vault", "add", "gone", "{vault}/../no-such-folder"], 1, "no folder"),
        (["vault", "add", "file", "{vault}/README.md"], 1, "not a folder"),
        (["vault", "add", "Bad_Id", "{vault}/.."], 2, "vaultctl: ID: Expected `str` matching regex"),
    ],
)
def test_a_refusal_is_exit_2_only_when_the_command_line_is_wrong(vault: Path, cli: Any, args: list[str], status: int, says: str) -> None:
    r = cli(*[a.replace("{vault}", str(vault)) for a in args])
    assert r.code == status, (r.code, r.err)
    assert says in r.err, r.err
    assert "Traceback" not in r.err


def test_a_broken_config_is_a_refusal_not_a_usage_error(daemon: Daemon, cli: Any, tmp_path: Path) -> None:
    (daemon.home.home / "config.json").write_text('{"vaults": [')
    (tmp_path / "v").mkdir()
    r = cli("vault", "add", "v", str(tmp_path / "v"))
    assert r.code == 1 and "config.json is invalid" in r.err


def test_undoing_an_undone_operation_says_so_and_redo_works(vault: Path, cli: Any) -> None:
    made = cli("new", "inbox/Undo Me", "--title", "Undo Me", "--json").json()
    op = made["op_id"]
    undo = cli("undo", op, "--json")
    assert undo.code == 0, undo.err
    undo_id = undo.json()["op_id"]
    again = cli("undo", op)
    assert again.code == 1 and f"was undone already, by {undo_id}" in again.err and f"vaultctl undo {undo_id}" in again.err
    assert not (vault / "inbox" / "Undo Me.md").exists()
    redo = cli("undo", undo_id)
    assert redo.code == 0 and (vault / "inbox" / "Undo Me.md").exists(), redo.err
    assert cli("undo", op).code == 0  # applied again by the redo, so undoable again
    assert not (vault / "inbox" / "Undo Me.md").exists()


def test_a_twelve_digit_sha_from_a_receipt_is_accepted(vault: Path, cli: Any) -> None:
    sha = cli("show", "Ideas", "--json").json()["sha256"]
    short = cli("patch", "Ideas", "--old", "# Ideas", "--new", "# Ideas!", "--expected-sha", sha[:12])
    assert short.code == 0, short.err
    receipt_sha = short.out.split("\n")[2].split()[-1]  # the AFTER column of the receipt, 12 digits
    assert len(receipt_sha) == 12
    chained = cli("patch", "Ideas", "--old", "# Ideas!", "--new", "# Ideas", "--expected-sha", receipt_sha)
    assert chained.code == 0, chained.err
    stale = cli("patch", "Ideas", "--old", "# Ideas", "--new", "# x", "--expected-sha", receipt_sha)
    assert stale.code == 75 and "changed since you read it" in stale.err
    too_short = cli("patch", "Ideas", "--old", "# Ideas", "--new", "# x", "--expected-sha", sha[:11])
    assert too_short.code == 2 and _one_error_line(too_short).startswith("vaultctl: --expected-sha: ")


def test_set_takes_key_value_and_typed_json(vault: Path, cli: Any) -> None:
    r = cli(
        "set",
        "Ideas",
        "--set",
        "status=done",
        "--set",
        "year=2024",
        "--set",
        "count:=3",
        "--set",
        'tags:=["a","b"]',
        "--set",
        '{"draft": false}',
    )
    assert r.code == 0, r.err
    front = cli("show", "Ideas", "--json").json()["frontmatter"]
    assert front["status"] == "done" and front["year"] == "2024" and front["count"] == 3 and front["tags"] == ["a", "b"]
    assert front["draft"] is False
    made = cli("new", "inbox/Typed", "--set", "type=idea", "--set", "priority:=2", "--json")
    assert made.code == 0, made.err
    assert cli("show", "inbox/Typed", "--json").json()["frontmatter"]["priority"] == 2


# -- completion answers ------------------------------------------------------------------------------


def test_completion_asks_the_daemon_for_vaults_notes_and_ops(vault: Path, cli: Any) -> None:
    def values(line: str) -> list[str]:
        r = cli("__complete", "bash", line)
        assert r.code == 0 and r.err == ""
        lines: list[str] = r.out.splitlines()
        assert lines[0] == "plain"
        return lines[1:]

    assert values("vaultctl show alp") == ["Alpha Plan"]
    assert values("vaultctl show meet") == ["projects/alpha/Meeting Notes.md", "projects/beta/Meeting Notes.md"]
    assert values("vaultctl links projects/al") == ["projects/alpha/"]
    assert values("vaultctl search x --vault ") == ["sample"]
    op = cli("new", "inbox/Op", "--json").json()["op_id"]
    assert op in values("vaultctl undo ")
    assert values("vaultctl show alp --vault nope") == []  # a refusal answers nothing


def test_completion_without_a_daemon_answers_what_it_can_and_starts_nothing(home: Home) -> None:
    r = vaultctl(home, "__complete", "bash", "vaultctl show alp", env={"VAULTD_NO_AUTOSTART": ""})
    assert r.code == 0 and r.out.splitlines() == ["plain"]
    assert not home.socket.exists()
    assert vaultctl(home, "__complete", "bash", "vaultctl sta").out.splitlines() == ["plain", "status", "stats"]


def test_note_names_is_bounded_and_not_for_agents(vault: Path, typed: TypedClient, typed_clients: TypedClients, home: Home) -> None:
    assert typed.call(NOTE_NAMES, NamesParams(prefix="", limit=1000)).truncated is False
    assert typed.call(NOTE_NAMES, NamesParams(prefix="", limit=1)).truncated is True
    assert typed.call(NOTE_NAMES, NamesParams(prefix="x" * 1024)).names == []
    for bad in (NamesParams(limit=0), NamesParams(limit=1001), NamesParams(prefix="x" * 1025), NamesParams(vault="Nope!")):
        with refused(ErrorCode.INVALID_PARAMS):
            typed.call(NOTE_NAMES, bad)
    with refused(ErrorCode.NOT_FOUND):
        typed.call(NOTE_NAMES, NamesParams(vault="nope"))
    agent = typed_clients.open(home, Channel.MCP)
    with pytest.raises(CallError):
        agent.call(NOTE_NAMES, NamesParams())


# -- doctor ----------------------------------------------------------------------------------------


def test_doctor_reports_each_vaults_links_index_and_proposals(vault: Path, cli: Any) -> None:
    r = cli("doctor", "--json")
    found = {f["check"]: f for f in r.json()["findings"]}
    stats = cli("stats", "--json").json()
    links = found["links:sample"]
    assert (
        links["level"] == "warn"
        and f"{stats['dead_links']} dead and {stats['ambiguous_links']} ambiguous of {stats['links']}" in links["finding"]
    )
    assert found["index:sample"]["level"] == ("warn" if stats["issues"] else "ok")
    assert "vaultctl issues --vault sample" in found["index:sample"]["finding"]


@pytest.mark.fresh_daemon
def test_doctor_names_the_process_holding_a_locked_vault(vault: Path, daemon: Daemon, cli: Any) -> None:
    other = Home.create()
    second = Daemon(other)
    try:
        reply = vaultctl(other, "vault", "add", "twin", str(vault), "--json", env={"VAULTD_NO_AUTOSTART": "1"})
        doctor = vaultctl(other, "doctor", "--json", env={"VAULTD_NO_AUTOSTART": "1"}).json()
    finally:
        second.stop()
        other.cleanup()
    assert reply.code == 0, reply.err
    state = next(f for f in doctor["findings"] if f["check"] == "vault:twin")
    assert state["level"] == "fail" and f"pid {daemon.pid}" in state["finding"] and "vaultd.main" in state["finding"]


HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0); os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
    print("held", flush=True)
    sys.stdin.read()
""")


def test_doctor_checks_locally_when_the_daemon_is_down(home: Home, tmp_path: Path) -> None:
    vault = copy_sample_vault(tmp_path / "notes")
    (tmp_path / "free").mkdir()
    daemon = Daemon(home)
    try:
        for vid, path in (("notes", vault), ("free", tmp_path / "free")):
            assert vaultctl(home, "vault", "add", vid, str(path)).code == 0
    finally:
        daemon.stop()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(vault / ".vaultd" / "lock")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        r = _run(home, "doctor", "--json")
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.wait()
        holder.stdout.close()
    assert r.code == 1, r.err
    found = {f["check"]: f for f in r.json()["findings"]}
    assert found["daemon"]["level"] == "fail" and "no daemon answers" in found["daemon"]["finding"]
    assert found["config"]["level"] == "ok" and "2 vault(s)" in found["config"]["finding"]
    assert found["vault:notes"]["level"] == "fail" and f"locked by pid {holder.pid}" in found["vault:notes"]["finding"]
    assert found["vault:free"]["level"] == "ok" and "not locked" in found["vault:free"]["finding"]
    assert found["home"]["level"] == "ok" and found["socket-folder"]["level"] == "ok"
    assert not home.socket.exists()  # doctor started no daemon
    text = _run(home, "doctor")
    assert text.code == 1 and text.out.rstrip().endswith("verdict: fail") and "LEVEL" in text.out
    (home.home / "config.json").write_text("{broken")
    broken = {f["check"]: f for f in _run(home, "doctor", "--json").json()["findings"]}
    assert broken["config"]["level"] == "fail" and "invalid" in broken["config"]["finding"]


def test_doctor_reports_the_daemons_last_logged_error(home: Home) -> None:
    logs = home.home / "logs"
    logs.mkdir(parents=True)
    records = [
        {"event": "index ready", "level": "info", "timestamp": "2026-01-01T10:00:00Z"},
        {"event": "indexing failed", "level": "error", "timestamp": "2026-01-01T10:00:01Z"},
        {"event": "all well", "level": "info", "timestamp": "2026-01-01T10:00:02Z"},
    ]
    (logs / "vaultd.log").write_text("\n".join(json.dumps(r) for r in records) + "\nnot json\n")
    found = {f["check"]: f for f in _run(home, "doctor", "--json").json()["findings"]}
    assert found["daemon-log"]["finding"].startswith("last error logged at 2026-01-01 10:00:01: indexing failed")
