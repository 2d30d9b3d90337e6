"""lint.fix finds its fixes without holding the vault's writes, and still refuses a fix whose text
moved, through a real daemon, on a small vault (its rules in a daemon thread) and on one large
enough for a lint worker process.

The work is held at fault gates, so what the tests show is an order of replies, never a duration.
Held at ``lint-rules`` (its copy of the index taken, its rules not yet run), a write to the very
vault is acknowledged, and a note edited by hand meanwhile gets no fix (its bytes are not the
ones the copy indexed). Held at ``lint-fixes-found`` (the fixes made, the writer not yet taken), a
note edited by hand makes the call a CONFLICT with nothing written; the next lint.fix, previewed
and confirmed, fixes the note as it is now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import RawClient, paused_daemon, snapshot, wait_at_gate
from vaultd.lint.worker import WORKER_MIN_NOTES

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

NOTES = {
    "Alpha.md": "---\naliases: [Al]\n---\n# Alpha\n\nThe note the alias names.\n",
    "Uses.md": "# Uses\n\nSee [[Al]].\n",
    "Other.md": "# Other\n\nSee [[Al]] too.\n",
}
EDITED = "# Other\n\nEdited by hand first. See [[Al]] too.\n"


def _vault(home: Home, filler: int = 0) -> Path:
    root = home.root / "v"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "filler").mkdir()
    for i in range(filler):
        (root / "filler" / f"Filler {i:04}.md").write_text(f"# Filler {i}\n\nText.\n")
    return root


def _fix_all(client: RawClient) -> dict[str, Any]:
    preview = client.call("lint.fix", {"vault": "v"})
    assert preview["outcome"] == "preview", preview
    done: dict[str, Any] = client.call("lint.fix", {"vault": "v", "confirm": True, "fingerprint": preview["fingerprint"]})
    assert done["outcome"] == "applied", done
    return done


@pytest.mark.parametrize("filler", [0, WORKER_MIN_NOTES], ids=["in-a-thread", "in-a-worker"])
def test_a_write_goes_on_while_lint_fix_reads_the_vault(home: Home, filler: int) -> None:
    root = _vault(home, filler)
    daemon, gate = paused_daemon(home, "lint-rules", 1)
    try:
        setup = RawClient.session(home.socket)
        setup.call("vault.add", {"id": "v", "path": str(root)})
        fixer = RawClient.session(home.socket)
        fixer.send(1, "lint.fix", {"vault": "v"})
        wait_at_gate(gate, daemon, "lint.fix to reach its rules")

        made = setup.call("note.create", {"vault": "v", "path": "Written.md", "body": "# Written\n\nWhile lint.fix reads.\n"})
        assert made["outcome"] == "applied", made
        assert setup.call("note.read", {"vault": "v", "target": "Written"})["body"].startswith("# Written")
        assert gate.exists(), "lint.fix was still held when the write was acknowledged"
        (root / "Other.md").write_text(EDITED)
        before = snapshot(root)

        gate.unlink()
        held = fixer.reply_to(1)
        assert held["result"]["outcome"] == "preview", held
        # The copy's fixes: Uses.md's; none made from Other.md, whose bytes are not the copy's.
        assert held["result"]["detail"]["fixes"] == ["Uses.md:3 [[Al]] → [[Alpha|Al]]"], held
        assert snapshot(root) == before, "a preview writes nothing"

        assert _fix_all(setup)["detail"]["fixed"] == 2
        assert (root / "Uses.md").read_text() == "# Uses\n\nSee [[Alpha|Al]].\n"
        assert (root / "Other.md").read_text() == EDITED.replace("[[Al]]", "[[Alpha|Al]]")
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_a_fix_whose_note_changed_after_it_was_made_is_refused(home: Home) -> None:
    root = _vault(home)
    daemon, gate = paused_daemon(home, "lint-fixes-found", 1)
    try:
        setup = RawClient.session(home.socket)
        setup.call("vault.add", {"id": "v", "path": str(root)})
        fixer = RawClient.session(home.socket)
        fixer.send(1, "lint.fix", {"vault": "v"})
        wait_at_gate(gate, daemon, "lint.fix to find its fixes")
        (root / "Other.md").write_text(EDITED)
        before = snapshot(root)

        gate.unlink()
        held = fixer.reply_to(1)
        assert held.get("error", {}).get("data", {}).get("code") == "CONFLICT", held
        assert "Other.md" in held["error"]["message"], held
        assert snapshot(root) == before, "a refused lint.fix writes nothing"

        assert _fix_all(setup)["detail"]["fixed"] == 2
        assert (root / "Other.md").read_text() == EDITED.replace("[[Al]]", "[[Alpha|Al]]")
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()
