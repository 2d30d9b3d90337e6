"""Hostile file names, the fast slice: a vault whose names are any bytes Linux allows.

The long run is ``python -m reliability.stress.hostile --names-rounds N``; both share
``reliability/stress/names.py``. Every name is served or skipped with its code, no reply is
INTERNAL, no session drops, no raw terminal control reaches vaultctl's text output, the MCP shim
lists every name exactly, and reading and watching change no byte of the vault.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import pytest

from reliability.stress.name_catalogue import draw_names, expect, fixed_names
from reliability.stress.name_vault import NameTally, build_name_vault, disk_state
from reliability.stress.names import ACTIVE, RoundSize, Session, check_listing, names_round, run_vaultctl, watch_round
from tests.support.harness import Daemon, Home, RawClient, assert_alive

if TYPE_CHECKING:
    from pathlib import Path


def test_the_name_classes_are_what_they_claim() -> None:
    """The generator itself: 255-byte names are 255 bytes, no name holds '/' or NUL, S07 is predicted."""
    names = dict(fixed_names())
    for label in ("len255.ascii", "len255.2byte", "len255.3byte", "len255.4byte", "len255.mixed"):
        assert len(names[label]) == 255, label
    assert all(b"/" not in n and b"\0" not in n and 0 < len(n) <= 255 for n in names.values())
    assert {chr(i) for i in range(1, 0x20)} <= {chr(n[6]) for label, n in names.items() if label.startswith("c0.")}
    assert expect(b"bad\xff.md").kind == "S07" and expect(b"ok/bad\xfe/x.md").skip_path == b"ok/bad\xfe"
    assert expect(b".git/x.md").kind == "ignored" and expect(b"x.MD").kind == "note"
    assert expect(b"x.png").kind == "attachment"
    drawn = draw_names(30, seed=1)
    assert len(drawn) == 30 and all(0 < len(n) <= 255 and b"/" not in n and b"\0" not in n for n in drawn)


def test_a_round_of_hostile_names(shared: tuple[Home, Daemon]) -> None:
    """(a)-(c), (e), (f) at a small size: add, reads, watcher, MCP, writes; (d) vaultctl is below."""
    home, daemon = shared
    tally = NameTally()
    names_round(
        home, daemon, "names", tally, RoundSize(drawn=10, read_limit=30, mcp_limit=8, watch_names=8, write_names=30), seed=3, cli=False
    )
    assert tally.failures == [], tally.failures
    c = tally.counts
    assert c["rounds"] == 1 and c["replies.internal"] == 0 and c["sessions.dropped"] == 0
    assert c["skips.S07"] >= 10 and c["checks.listed_names"] >= 200, dict(c)
    assert c["writes.applied"] > 0 and c["refusals.VALIDATION"] > 0, dict(c)
    assert c["mcp.names_listed"] >= 200, dict(c)
    assert c["checks.bytes_unchanged"] > 0 and c["watch.renamed"] > 0 and c["watch.deleted"] > 0
    assert_alive(home, daemon)


def _log_lines(home: Home, event: str) -> int:
    log = home.home / "logs" / "vaultd.log"
    return sum(1 for line in log.read_text(errors="replace").splitlines() if f'"event": "{event}' in line)


@pytest.fixture
def watchfiles_home(home: Home) -> Home:
    """A daemon that watches with watchfiles (its choice off Linux), so its failure path stays tested."""
    home.env["VAULTD_WATCHER"] = "watchfiles"
    return home


def _bad_folder_vault(home: Home, raw: RawClient) -> Path:
    vault = home.root / "v"
    vault.mkdir()
    (vault / "Good.md").write_text("# Good\n\ngoodword\n")
    os.makedirs(os.fsencode(str(vault)) + b"/bad\xfedir/sub")
    fd = os.open(os.fsencode(str(vault)) + b"/bad\xfedir/sub/hidden.md", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"# Hidden\n\nhiddenword\n")
    os.close(fd)
    raw.call("vault.add", {"id": "v", "path": str(vault)})
    issues = raw.call("vault.issues", {})["issues"]
    assert [(i["path"], i["code"]) for i in issues] == [("bad\\xfedir", "S07")], issues
    for k in range(6):  # each change is seen by a fresh read, without waiting for a cookie
        (vault / f"new{k}.md").write_text(f"# New {k}\n\nfreshword{k}\n")
        hits = raw.call("note.search", {"query": f"freshword{k}", "fresh": True})["hits"]
        assert [h["path"] for h in hits] == [f"new{k}.md"], hits
    return vault


def test_a_non_utf8_folder_name_does_not_stop_the_watcher(home: Home, daemon: Daemon, raw: RawClient) -> None:
    """inotify hands names over as bytes: a folder named with any bytes is skipped by the index
    (S07) and watched like any other, so the watcher never fails and changes elsewhere, and in
    the folder once renamed, are seen at once."""
    vault = _bad_folder_vault(home, raw)
    assert [f for f in raw.call("doctor", {"vault": "v"})["findings"] if f["check"] == "watcher:v"] == []
    assert _log_lines(home, "watcher failed") == 0
    assert _log_lines(home, "freshness cookie not delivered") == 0
    assert raw.call("note.search", {"query": "hiddenword", "fresh": True})["hits"] == []
    os.rename(os.fsencode(str(vault)) + b"/bad\xfedir", vault / "renamed")
    hits = raw.call("note.search", {"query": "hiddenword", "fresh": True})["hits"]
    assert [h["path"] for h in hits] == ["renamed/sub/hidden.md"]
    assert raw.call("vault.issues", {})["issues"] == []


def test_a_non_utf8_folder_name_does_not_stop_watchfiles_for_good(watchfiles_home: Home, daemon: Daemon, raw: RawClient) -> None:
    """Regression: watchfiles fails on any event naming a non-UTF-8 path, and opening such a folder
    while setting up a watcher is one, so every new watcher failed at once: the daemon re-walked the
    vault in a tight loop and every fresh read waited 5 s for a cookie before walking it again."""
    home = watchfiles_home
    _bad_folder_vault(home, raw)
    findings = raw.call("doctor", {"vault": "v"})["findings"]
    watcher = [f for f in findings if f["check"] == "watcher:v"]
    assert len(watcher) == 1 and watcher[0]["level"] == "warn" and "not valid UTF-8" in watcher[0]["finding"], findings
    assert "bad" not in watcher[0]["finding"]  # names no file: the name is any bytes
    assert _log_lines(home, "freshness cookie not delivered") == 0
    assert _log_lines(home, "watcher failed") == 1, "the failure is logged once, not once per retry"
    assert raw.call("note.search", {"query": "hiddenword", "fresh": True})["hits"] == []


def test_watchfiles_comes_back_once_the_folder_is_renamed(watchfiles_home: Home, daemon: Daemon, raw: RawClient) -> None:
    home = watchfiles_home
    vault = home.root / "v"
    (vault / "ok").mkdir(parents=True)
    bad = os.fsencode(str(vault)) + b"/ok/bad\xfe"
    os.makedirs(bad + b"/sub")
    raw.call("vault.add", {"id": "v", "path": str(vault)})
    os.rename(bad, os.fsencode(str(vault)) + b"/ok/renamed")
    (vault / "ok" / "renamed" / "sub" / "back.md").write_text("# Back\n\nbackword\n")
    hits = raw.call("note.search", {"query": "backword", "fresh": True})["hits"]
    assert [h["path"] for h in hits] == ["ok/renamed/sub/back.md"]
    for _ in range(200):  # the next retry (at most 10 s away) starts a watcher that runs
        if not [f for f in raw.call("doctor", {"vault": "v"})["findings"] if f["check"] == "watcher:v"]:
            break
        raw.call("note.search", {"query": "backword", "fresh": True})
        time.sleep(0.1)
    else:
        pytest.fail("the watcher never came back after the bad folder was renamed")
    (vault / "later.md").write_text("# Later\n\nlaterword\n")
    hits = raw.call("note.search", {"query": "laterword", "fresh": True})["hits"]
    assert [h["path"] for h in hits] == ["later.md"]
    assert _log_lines(home, "freshness cookie not delivered") == 0


def test_names_created_renamed_and_deleted_while_watched(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    tally = NameTally()
    nv = build_name_vault(home.root / "watched-names", "watched", [b"plain.md"], tally)
    s = Session(home, tally)
    try:
        assert s.ask("add", "vault.add", {"id": "watched", "path": str(nv.root)}) is not None
        before = disk_state(nv.root)
        names = [n for label, n in fixed_names() if label.split(".")[0] in ("c0", "esc", "bidi", "utf8", "dash", "len255")]
        watch_round(s, nv, names, "watch")
        check_listing(s, nv, "watch end")
    finally:
        s.close()
    assert tally.failures == [], tally.failures
    assert tally.counts["watch.renamed"] >= 40 and tally.counts["watch.deleted"] >= 20
    after = disk_state(nv.root)
    assert all(after[rel] == before[rel] for rel in before if rel in after)
    assert_alive(home, daemon)


@pytest.mark.parametrize("args", [("list",), ("issues",), ("search", "body")])
def test_vaultctl_text_shows_every_hostile_name_escaped(shared: tuple[Home, Daemon], args: tuple[str, ...]) -> None:
    home, _ = shared
    vault = home.root / "cli-names"
    if not vault.exists():
        tally = NameTally()
        nv = build_name_vault(vault, "cli", [n for _, n in fixed_names()], tally)
        c = RawClient(home.socket)
        c.hello()
        c.call("vault.add", {"id": nv.vid, "path": str(nv.root)})
    code, out, err = run_vaultctl(home, args[0], "--vault", "cli", *args[1:])
    assert code == 0, err
    assert ACTIVE.findall(out) == [] and ACTIVE.findall(err) == []
    code, out, _ = run_vaultctl(home, args[0], "--vault", "cli", "--json", *args[1:])
    assert code == 0 and ACTIVE.findall(out) == []
    json.loads(out)


# Every character str.strip() removes: whitespace and the separators among the C0 and C1 controls.
STRIPPED = [chr(c) for c in range(0x110000) if chr(c).isspace()]


def test_a_note_is_read_and_written_by_its_exact_path_whatever_whitespace_it_holds(home: Home, daemon: Daemon, raw: RawClient) -> None:
    """Regression: the lookup stripped the target before matching, so ``'\\n.md'`` read ``.md`` and a
    patch of ``' x.md'`` changed ``x.md``: another note than the one named."""
    vault = home.root / "ws"
    vault.mkdir()
    names = [".md", "x.md"] + [f"{ws}.md" for ws in STRIPPED] + [f"{ws}x.md" for ws in STRIPPED] + [f"x{ws}.md" for ws in STRIPPED]
    for i, name in enumerate(names):
        (vault / name).write_text(f"# N{i}\n\nnoteword{i}\n", encoding="utf-8")
    raw.call("vault.add", {"id": "ws", "path": str(vault)})
    wrong = []
    for i, name in enumerate(names):
        got = raw.call("note.read", {"target": name})
        if got["path"] != name or f"noteword{i}\n" not in got["body"]:
            wrong.append((name, got["path"]))
    assert wrong == []
    before = (vault / "x.md").read_bytes()
    for i, name in enumerate(names[2:12], start=2):
        log = {"type": "LINT", "source": "test", "note": f"patch {i}"}  # the default one quotes the name
        receipt = raw.call("note.patch", {"target": name, "old": f"noteword{i}", "new": f"patched{i}", "log": log})
        assert [c["path"] for c in receipt["changes"] if c["action"] == "modify"] == [name], receipt
    assert (vault / "x.md").read_bytes() == before
    assert raw.call("note.read", {"target": " x "})["path"] in ("x.md", " x .md")  # a name, still found


def test_a_write_lands_at_the_path_asked_or_is_refused(home: Home, daemon: Daemon, raw: RawClient) -> None:
    """Regression: the new path was stripped of whitespace, so ``made/\\t`` created ``made.md`` at
    the root and ``x\\x1c`` created ``x.md``, where ``x\\x01`` is refused: another file than asked."""
    vault = home.root / "wr"
    vault.mkdir()
    (vault / "src.md").write_text("# Src\n\nsrc\n")
    raw.call("vault.add", {"id": "wr", "path": str(vault)})
    misplaced = []
    for i, ws in enumerate(STRIPPED):
        for asked in (f"made/{ws}", f"{ws}lead{i}", f"trail{i}{ws}", f"trail{i}.md{ws}", f"in{ws}side{i}"):
            want = asked if asked.endswith(".md") else asked + ".md"
            reply = raw.request("note.create", {"path": asked, "body": "x\n"})
            if "error" in reply:
                assert reply["error"]["data"]["code"] == "VALIDATION", reply
                continue
            made = [c["path"] for c in reply["result"]["changes"] if c["action"] == "create" and c["path"] != "log.md"]
            if made != [want]:
                misplaced.append((asked, made))
    moves = []
    for ws in ("\t", "\n", " ", "\u3000"):
        asked = f"moved/{ws}"
        preview = raw.request("note.move", {"target": "src.md", "to": asked})
        if "error" in preview:
            assert preview["error"]["data"]["code"] == "VALIDATION", preview
            continue
        made = [c["path"] for c in preview["result"]["changes"] if c["action"] == "create"]
        if made != [asked + ".md"]:
            moves.append((asked, made))
    assert misplaced == [] and moves == []
    assert not (vault / "made.md").exists() and not (vault / "moved.md").exists()


def test_a_table_cell_holding_a_tab_or_newline_is_escaped_as_one_line(home: Home, daemon: Daemon, raw: RawClient) -> None:
    """Regression: table cells kept a name's tab raw and turned its newline into a space, so
    ``line\\nbreak.md`` and ``line break.md`` printed alike and a tab reached the terminal."""
    vault = home.root / "tab"
    vault.mkdir()
    for name in ("tab\tname.md", "line\nbreak.md", "line break.md", "cr\r\nlf.md"):
        (vault / name).write_text("# T\n\ntabword\n")
    raw.call("vault.add", {"id": "tab", "path": str(vault)})
    for args in (("list",), ("search", "tabword"), ("links", "line break.md")):
        code, out, err = run_vaultctl(home, *args)
        assert code == 0, err
        assert ACTIVE.findall(out) == [], (args, out)
        assert out.count("\n") == len(out.splitlines()), out
    code, out, _ = run_vaultctl(home, "list")
    for shown in ("tab\\x09name.md", "line\\x0abreak.md", "line break.md", "cr\\x0d\\x0alf.md"):
        assert sum(1 for line in out.splitlines() if line.startswith(shown + " ")) == 1, (shown, out)
