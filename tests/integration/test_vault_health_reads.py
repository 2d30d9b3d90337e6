"""Keeping a vault healthy, read side: stats windows and ratios, the operation log left out of
every read about notes, confirm commands that paste back, raw copies kept out of git unless the
user opts in. Real daemon, real vaultctl, real git."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from protocol.methods.writes import LogType
from tests.support import gitrepo
from tests.support.harness import register

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

NOTES = {
    "Alpha.md": "---\ntype: insight\nstatus: active\nsource: '[[Paper]]'\n---\n# Alpha\n\nShort.\n",
    "Beta.md": "---\ntype: decision\nstatus: draft\nsource:\n  - data.txt\n  - https://example.org/x\n---\n# Beta\n\n"
    + "word " * 80
    + "\n",
    "Gamma.md": "---\ntype: insight\n---\n# Gamma\n\n[[Alpha]]\n",
    "Paper.md": "# Paper\n\n" + "text " * 200 + "\n",
}


def ok(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    (root / "data.txt").write_bytes(b"x" * 1000)
    old = (dt.datetime.now() - dt.timedelta(days=60)).timestamp()
    os.utime(root / "Paper.md", (old, old))
    os.utime(root / "Gamma.md", (old, old))
    register(home, root)
    return root


def _bash_words(line: str) -> list[str]:
    done = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, check=True, text=True)
    return done.stdout.split("\0")[:-1]


def test_stats_count_status_activity_log_size_and_ratio(vault: Path, cli: Any) -> None:
    ok(cli, "log", "append", "LINT", "lint", "checked")
    ok(cli, "log", "append", "LINT", "lint", "checked again")
    ok(cli, "set", "Gamma", "--set", "status=active")  # a write: one more event, and Gamma changed today
    log_lines = [ln for ln in (vault / "log.md").read_text().splitlines() if ln[:4].isdigit()]
    s = ok(cli, "stats", "--days", "7")
    assert s["notes"] == 4  # the operation log is no note
    assert s["by_status"] == {"active": 2, "draft": 1, "(none)": 1}
    assert s["recent"] == {"last_7_days": 3, "last_30_days": 3}  # Paper was last changed 60 days ago
    log = s["log"]
    assert log["days"] == 7 and log["since"] == (dt.date.today() - dt.timedelta(days=6)).isoformat()
    assert log["total"] == len(log_lines) == 3
    assert set(log["by_type"]) == {t.value for t in LogType}  # every known type, zero included
    assert log["by_type"]["LINT"] == 2 and sum(log["by_type"].values()) == 3
    size = s["size"]
    assert size["total"]["notes"] == 4 and size["total"]["bytes"] == s["bytes"]
    assert size["by_type"]["insight"]["notes"] == 2 and size["by_type"]["(none)"]["notes"] == 1
    ratio = s["ratio"]
    alpha = len(NOTES["Alpha.md"].encode()) / len(NOTES["Paper.md"].encode())
    beta = len(NOTES["Beta.md"].encode()) / 1000
    assert ratio["notes"] == 2 and ratio["sources"] == 2 and ratio["skipped"] == 1  # the URL is no vault file
    assert ratio["median"] == pytest.approx((alpha + beta) / 2, abs=1e-3)
    assert ratio["p90"] == pytest.approx(max(alpha, beta), abs=1e-3)
    assert [n["path"] for n in ratio["largest"]] == sorted(["Alpha.md", "Beta.md"], key=lambda p: -(alpha if p == "Alpha.md" else beta))
    text = cli("stats", "--days", "7").out
    assert "log events since" in text and "note-to-source ratio" in text


@pytest.mark.parametrize(("days", "code"), [(0, 2), (1, 0), (3650, 0), (3651, 2)])
def test_the_stats_window_is_bounded(vault: Path, cli: Any, days: int, code: int) -> None:
    result = cli("stats", "--days", str(days), "--json")
    assert result.code == code, result.err
    if code == 0:
        assert result.json()["log"]["days"] == days


def test_an_unreadable_log_makes_stats_exit_1_with_null_counts(vault: Path, cli: Any) -> None:
    ok(cli, "log", "append", "LINT", "lint", "x")
    log = vault / "log.md"
    kept = log.read_bytes()
    log.unlink()
    log.symlink_to(vault / "data.txt")  # never followed
    try:
        result = cli("stats", "--json")
        assert result.code == 1
        counts = result.json()["log"]
        assert counts["total"] is None and counts["by_type"] is None and counts["issues"]
    finally:
        log.unlink()
        log.write_bytes(kept)


def test_list_and_links_leave_the_operation_log_out_as_search_and_tags_do(vault: Path, cli: Any) -> None:
    ok(cli, "set", "Alpha", "--set", "status=draft")  # the log now names [[Alpha]]-like paths
    ok(cli, "log", "append", "CONNECT", "Alpha.md", "linked [[Alpha]] by hand")
    assert "log.md" not in [n["path"] for n in ok(cli, "list")["notes"]]
    assert ok(cli, "list")["total"] == 4
    links = ok(cli, "links", "Alpha")
    assert "log.md" not in [i["path"] for i in links["incoming"]]
    assert [i["path"] for i in links["incoming"]] == ["Gamma.md"]
    as_note = cli("links", "log")
    assert as_note.code == 1 and "log.md" not in as_note.out


def test_a_confirm_command_with_a_backslash_in_a_pii_regex_pastes_and_applies(vault: Path, home: Home, cli: Any) -> None:
    policy = json.dumps({"patterns": [{"name": "emp", "regex": r"EMP-\d{4}\b"}]})
    preview = cli("vault", "set", "v", "--pii", policy)
    assert preview.code == 0, preview.err
    line = preview.out.strip().splitlines()[-1].strip()
    words = _bash_words(line)
    assert words[words.index("--pii") + 1] == policy
    applied = cli(*words[1:])
    assert applied.code == 0, applied.err
    entry = json.loads((home.home / "config.json").read_text())["vaults"][0]
    assert entry["pii"]["patterns"][0]["regex"] == r"EMP-\d{4}\b"


@pytest.mark.parametrize("opt_in", [False, True])
def test_git_checkpoints_leave_raw_copies_out_unless_the_user_opts_in(daemon: Daemon, home: Home, cli: Any, opt_in: bool) -> None:
    root = gitrepo.init(home.root / "gv", {"Note.md": "# Note\n"})
    ok(cli, "vault", "add", "g", str(root), "--git", "checkpoint", "--role", "raw=raw", *(["--git-raw"] if opt_in else []))
    paper = home.root / "paper.txt"
    paper.write_text("captured bytes\n")
    elsewhere = home.root / "loose.txt"
    elsewhere.write_text("another capture\n")
    src = ok(cli, "capture", str(paper), "--vault", "g")["detail"]["sources"][0]
    committed = gitrepo.tree(root)
    assert src["note"] in committed  # the source note is the user's knowledge: always committed
    assert (src["raw"] in committed) is opt_in
    assert (root / src["raw"]).read_text() == "captured bytes\n"  # kept in the vault either way
    # A snapshot (the hand-edit commit) leaves them out too.
    ok(cli, "vault", "git", "g", "--mode", "snapshot")
    ok(cli, "snapshot", "--vault", "g")
    assert (src["raw"] in gitrepo.tree(root)) is opt_in
