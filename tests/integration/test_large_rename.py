"""Large renames: a note linked from more files than the old 1,024-file bound is renamed, undone
and recovered after a crash as one operation; at the 10,000-file bound the preview passes, and
one more linking note is refused at once, before any note is read. Real daemon, real vaultctl."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import Daemon, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

MAX_OP_FILES = 10_000  #: vaultd.txn.plan.MAX_OP_FILES, as a user meets it


def _hub_vault(root: Path, linkers: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Hub.md").write_text("# Hub\n\nLinked from everywhere.\n")
    for i in range(linkers):
        folder = root / f"n{i // 1000:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"note {i:05d}.md").write_text(f"# Note {i}\n\nSee [[Hub]] and [[Hub#Top|the hub]].\n")


def _add(home: Home, cli: Any, root: Path) -> None:
    added = cli("vault", "add", "v", str(root), "--json", timeout=600)
    assert added.code == 0, added.err


@pytest.mark.slow
def test_a_rename_past_the_old_bound_applies_undoes_and_says_it_is_large(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "vault"
    _hub_vault(root, 1030)  # the old bound refused anything over 1,024 files
    _add(home, cli, root)
    before = snapshot(root)
    preview = cli("move", "Hub", "topics/Hub Renamed", timeout=600)
    assert preview.code == 0, preview.err
    assert "preview of note.move: would change 1032 file(s)" in preview.out
    assert "writes 1032 files in one journaled transaction" in preview.out
    confirm = next(line.strip() for line in preview.out.splitlines() if "--confirm" in line)
    argv = shlex.split(confirm)
    assert argv[0] == "vaultctl"  # 1,032 files at 0.05 s each fit the default 60 s wait: no longer wait asked for
    done = cli(*argv[1:], "--json", env={"VAULTD_CLIENT_TIMEOUT": "600"}, timeout=900)
    assert done.code == 0, done.err
    receipt = done.json()
    assert receipt["outcome"] == "applied" and len(receipt["changes"]) == 1032
    assert (root / "n01" / "note 01029.md").read_text() == "# Note 1029\n\nSee [[Hub Renamed]] and [[Hub Renamed#Top|the hub]].\n"
    undone = cli("undo", receipt["op_id"], "--json", env={"VAULTD_CLIENT_TIMEOUT": "600"}, timeout=900)
    assert undone.code == 0, undone.err
    assert {k: v for k, v in snapshot(root).items() if k != "log.md"} == {k: v for k, v in before.items() if k != "log.md"}


@pytest.mark.slow
def test_a_crash_in_the_middle_of_a_large_rename_rolls_all_of_it_back(home: Home, cli: Any) -> None:
    root = home.root / "vault"
    _hub_vault(root, 1100)
    daemon = Daemon(home)
    try:
        _add(home, cli, root)
    finally:
        daemon.stop()
    before = snapshot(root)
    home.env["VAULTD_FAULTS"] = "crash=after-rename@600"
    daemon = Daemon(home)
    try:
        raw = RawClient(home.socket, timeout=600)
        raw.hello()
        preview = raw.call("note.move", {"target": "Hub", "to": "Hub Renamed"})
        try:
            raw.request("note.move", {"target": "Hub", "to": "Hub Renamed", "confirm": True, "fingerprint": preview["fingerprint"]})
        except (ConnectionError, OSError, json.JSONDecodeError):
            pass
    finally:
        daemon.stop()
    assert snapshot(root) != before, "the crash came in the middle of the writes"
    del home.env["VAULTD_FAULTS"]
    daemon = Daemon(home)
    try:
        raw = RawClient(home.socket, timeout=600)
        raw.hello()
        assert raw.call("vault.stats", {"fresh": True})["notes"] == 1101
        assert snapshot(root) == before
    finally:
        daemon.stop()


@pytest.mark.slow
def test_at_the_bound_the_preview_passes_and_one_more_is_refused_at_once(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "vault"
    _hub_vault(root, MAX_OP_FILES - 2)  # the linking notes, the new path and the old one: the bound exactly
    _add(home, cli, root)
    raw = RawClient(home.socket, timeout=900)
    raw.hello()
    preview = raw.call("note.move", {"target": "Hub", "to": "Hub Renamed"})
    assert preview["outcome"] == "preview" and len(preview["changes"]) == MAX_OP_FILES
    shown = cli("move", "Hub", "Hub Renamed", timeout=900)
    assert shown.code == 0 and "\n  VAULTD_CLIENT_TIMEOUT=500 vaultctl move Hub 'Hub Renamed' --confirm --fingerprint" in shown.out
    (root / "one more.md").write_text("# One more\n\n[[Hub]]\n")
    raw.call("vault.stats", {"fresh": True})
    refused = raw.request("note.move", {"target": "Hub", "to": "Hub Renamed"})
    error = refused["error"]["data"]
    assert error["code"] == "LIMIT"
    assert error["message"].startswith(
        f"moving Hub.md would rewrite links in {MAX_OP_FILES - 1} notes: the operation would write {MAX_OP_FILES + 1} files; "
        f"the limit is {MAX_OP_FILES}; nothing was read or written"
    )
    text = cli("move", "Hub", "Hub Renamed", timeout=900)
    assert text.code == 1 and "the limit is 10000" in text.err
