"""vault.tidy runs its rules over the vault without holding the vault's writes, and still plans
each note from its bytes as they are when it writes, through a real daemon.

The work is held at fault gates, so what the tests show is an order of replies, never a duration.
Held at ``tidy-rules`` (the copy of the index taken, the rules not yet run over it), a write to the
very vault is acknowledged. Held at ``tidy-scanned`` (the rules run, the writer not yet taken), a
note edited by hand is planned from its bytes as they are now, so the preview shows what the
confirm writes and its fingerprint holds.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from protocol.limits import MAX_NOTE_BYTES
from tests.support.harness import Daemon, RawClient, paused_daemon, snapshot, wait_at_gate

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

TOKEN = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"  # a GitHub token's shape, made up


def _vault(home: Home) -> Path:
    root = home.root / "v"
    root.mkdir()
    (root / "Keys.md").write_text(f"# Keys\n\nThe old writer kept github_token = {TOKEN} here.\n")
    (root / "Other.md").write_text(f"# Other\n\nAnd token = {TOKEN} here.\n")
    (root / "Clean.md").write_text("# Clean\n\nNothing to tidy.\n")
    return root


def test_a_write_goes_on_while_tidy_reads_the_vault(home: Home) -> None:
    root = _vault(home)
    daemon, gate = paused_daemon(home, "tidy-rules", 1)
    try:
        setup = RawClient.session(home.socket)
        setup.call("vault.add", {"id": "v", "path": str(root)})
        tidier = RawClient.session(home.socket)
        tidier.send(1, "vault.tidy", {"vault": "v", "rules": ["secrets"]})
        wait_at_gate(gate, daemon, "tidy to reach its rules")

        made = setup.call("note.create", {"vault": "v", "path": "Written.md", "body": "# Written\n\nWhile tidy reads.\n"})
        assert made["outcome"] == "applied", made
        assert gate.exists(), "tidy was still held when the write was acknowledged"
        before = snapshot(root)

        gate.unlink()
        preview = tidier.reply_to(1)["result"]
        assert preview["outcome"] == "preview", preview
        assert sorted(c.split(":")[0] for c in preview["detail"]["changes"]) == ["T07 Keys.md", "T07 Other.md"], preview
        assert TOKEN not in json.dumps(preview)
        assert snapshot(root) == before, "a preview writes nothing"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_a_note_edited_after_the_scan_is_tidied_as_it_is_now(home: Home) -> None:
    root = _vault(home)
    daemon, gate = paused_daemon(home, "tidy-scanned", 1)
    try:
        setup = RawClient.session(home.socket)
        setup.call("vault.add", {"id": "v", "path": str(root)})
        tidier = RawClient.session(home.socket)
        tidier.send(1, "vault.tidy", {"vault": "v", "rules": ["secrets"]})
        wait_at_gate(gate, daemon, "tidy to finish its scan")
        edited = f"# Keys\n\nEdited by hand. The old writer kept github_token = {TOKEN} here.\n"
        (root / "Keys.md").write_text(edited)

        gate.unlink()
        preview = tidier.reply_to(1)["result"]
        assert preview["outcome"] == "preview", preview
        # Keys.md is planned from its new bytes, so the preview's fingerprint holds for the confirm.
        assert sorted(c.split(":")[0] for c in preview["detail"]["changes"]) == ["T07 Keys.md", "T07 Other.md"], preview
        done = setup.call("vault.tidy", {"vault": "v", "rules": ["secrets"], "confirm": True, "fingerprint": preview["fingerprint"]})
        assert done["outcome"] == "applied", done
        assert (root / "Keys.md").read_text() == edited.replace(TOKEN, "[redacted]")
        assert TOKEN not in (root / "Other.md").read_text()
        assert (root / "Clean.md").read_text() == "# Clean\n\nNothing to tidy.\n"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_a_log_past_a_notes_bound_is_reported_and_the_notes_are_still_tidied(home: Home) -> None:
    """A long-lived vault's operation log outgrows the bound of a note one operation rewrites: the
    log rule says so and leaves it, and the other rules still tidy every note."""
    root = _vault(home)
    daemon = Daemon(home)
    try:
        client = RawClient.session(home.socket)
        client.call("vault.add", {"id": "v", "path": str(root)})
        client.call("log.append", {"vault": "v", "event": {"type": "LINT", "source": "cli", "note": "start"}})
        log = root / "log.md"
        line = "2024-01-01 10:00 LINT - cli - " + "a line of an old log " * 4 + "\n"
        with log.open("a", encoding="utf-8") as f:
            f.write(line * (MAX_NOTE_BYTES // len(line) + 1))
        assert log.stat().st_size > MAX_NOTE_BYTES
        before = log.read_bytes()

        preview = client.call("vault.tidy", {"vault": "v"})
        assert preview["outcome"] == "preview", preview
        assert sorted(c.split(":")[0] for c in preview["detail"]["changes"]) == ["T07 Keys.md", "T07 Other.md"], preview
        assert any(r.startswith("T08 log.md:1 the log is larger than") for r in preview["detail"]["reported"]), preview
        done = client.call("vault.tidy", {"vault": "v", "confirm": True, "fingerprint": preview["fingerprint"]})
        assert done["outcome"] == "applied", done
        assert TOKEN not in (root / "Keys.md").read_text()
        assert log.read_bytes()[: len(before)] == before, "the log is left as it was (a LINT line appended)"
    finally:
        daemon.stop()
