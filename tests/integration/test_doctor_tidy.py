"""doctor's tidy row through a real daemon and the real CLI: what `vaultctl tidy` would change in
each writable vault, by rule, and the notes it cannot edit, planned and never written; a planning
failure fails the check and doctor exits 1."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.errors import ExitStatus
from protocol.limits import MAX_NOTE_BYTES
from tests.support.harness import snapshot

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home, RawClient

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vault-mem-old"


def _rows(cli: Any, *words: str, **kw: Any) -> tuple[int, dict[str, dict[str, str]]]:
    done = cli("doctor", *words, "--json", **kw)
    rows = {f["check"]: f for f in done.json()["findings"]}
    return done.code, rows


def _state(root: Path) -> tuple[dict[str, bytes], list[str]]:
    """The vault's files, and its journal: a doctor run changes neither."""
    journal = root / ".vaultd" / "journal"
    return snapshot(root), sorted(p.name for p in journal.iterdir()) if journal.is_dir() else []


def test_doctor_counts_what_tidy_would_change_and_writes_nothing(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = home.root / "old"
    shutil.copytree(FIXTURE, root)
    # A header tidy cannot edit in place (a flow mapping): named, never blocking the rest.
    (root / "notes" / "anchored.md").write_text("---\n{type: insight, alias: Anchored}\n---\n# Anchored\n")
    raw.call("vault.add", {"id": "old", "path": str(root), "schema": "typed"})
    before = _state(root)

    code, rows = _rows(cli)
    row = rows["tidy:old"]
    assert row["level"] == "warn", row
    for shown in ("T01 ", "T02 ", "T03 ", "T04 ", "T05 ", "T06 "):
        assert shown in row["finding"], (shown, row)
    assert "1 note(s) it cannot edit: notes/anchored.md" in row["finding"], row
    assert "vaultctl tidy --vault old" in row["finding"], row
    assert code == 0, row  # pending changes are a warning
    assert _state(root) == before  # planned only: no note, log or journal entry written

    preview = cli("tidy", "--vault", "old", "--json").json()
    done = cli("tidy", "--vault", "old", "--confirm", "--fingerprint", preview["fingerprint"], "--json")
    assert done.code == 0, done.err
    code, rows = _rows(cli, "--vault", "old")
    assert rows["tidy:old"]["level"] == "warn" and "T0" not in rows["tidy:old"]["finding"].split(";")[0], rows["tidy:old"]
    (root / "notes" / "anchored.md").unlink()
    code, rows = _rows(cli, "--vault", "old")
    assert rows["tidy:old"] == {"level": "ok", "check": "tidy:old", "finding": "nothing to tidy"}, rows["tidy:old"]


def test_a_vault_nobody_may_write_gets_no_tidy_row(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = home.root / "ro"
    shutil.copytree(FIXTURE, root)
    raw.call("vault.add", {"id": "ro", "path": str(root), "schema": "typed", "write": "none"})
    code, rows = _rows(cli)
    assert "vault:ro" in rows and "tidy:ro" not in rows, sorted(rows)


def test_a_log_the_tidy_cannot_rewrite_is_a_warning_not_a_failed_plan(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = home.root / "long"
    root.mkdir()
    (root / "Note.md").write_text("# Note\n")
    # An operation log past the bound of a note one operation rewrites: the log rule leaves it.
    line = "2026-01-01 10:00  EDIT  -  note.md  —  edited\n"
    (root / "log.md").write_text("# vaultd operation log\n" + line * (MAX_NOTE_BYTES // len(line.encode()) + 1))
    raw.call("vault.add", {"id": "long", "path": str(root)})
    before = _state(root)
    code, rows = _rows(cli, "--vault", "long")
    row = rows["tidy:long"]
    assert row["level"] == "warn" and "log.md: the log is larger than" in row["finding"], row
    assert code == 0
    assert _state(root) == before


def test_without_a_daemon_doctor_says_tidy_was_not_planned(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    for name, write in (("rw", "mcp"), ("ro", "none")):
        (home.root / name).mkdir()
        raw.call("vault.add", {"id": name, "path": str(home.root / name), "write": write})
    daemon.stop()
    code, rows = _rows(cli, env={"VAULTD_NO_AUTOSTART": "1"})
    assert code == ExitStatus.REFUSED and rows["daemon"]["level"] == "fail"
    assert rows["tidy:rw"]["level"] == "warn" and rows["tidy:rw"]["finding"].startswith("not planned"), rows["tidy:rw"]
    assert "tidy:ro" not in rows
