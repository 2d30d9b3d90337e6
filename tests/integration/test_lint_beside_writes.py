"""vault.lint of a large generated vault never holds the vault's writes, and its findings are of one
state of the vault, through a real daemon.

The lint is held at a fault gate (``VAULTD_FAULTS=pause=lint-rules``: its copy of the index taken,
its rules not yet run), so what the test shows is an order of replies, never a duration: while the
lint is held, writes to the very vault it lints are acknowledged (and read back), and once it goes
on it answers exactly what a lint of the quiet vault answered before those writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.corpus import generator
from tests.support.harness import RawClient, paused_daemon, wait_at_gate

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

NOTES = 3000
LINT = {"vault": "big", "as_of": "2026-01-01", "limit": 2000}
WRITTEN = "Written While Linting.md"
DEAD = "No Note Has This Name Anywhere"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    command = [sys.executable, str(generator()), str(out), "--notes", str(NOTES), "--seed", "5"]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return out / "notes"


def _copy(source: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(source), str(dest)], check=True, timeout=300)
    return dest


def _lint_reply(client: RawClient) -> dict[str, Any]:
    message = client.reply_to(1)
    assert "result" in message, message
    result: dict[str, Any] = message["result"]
    return result


def _mentions(result: dict[str, Any], path: str) -> bool:
    return any(f["note"] == path or path in f["finding"] for f in result["findings"])


def test_writes_to_the_vault_being_linted_are_acknowledged_before_it_answers(home: Home, generated: Path) -> None:
    vault = _copy(generated, home.root / "big")
    linked = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))[0]
    daemon, gate = paused_daemon(home, "lint-rules", 2)  # the first lint is the quiet one
    try:
        setup = RawClient.session(home.socket, timeout=60)
        setup.call("vault.add", {"id": "big", "path": str(vault)})
        quiet = setup.call("vault.lint", LINT)
        assert quiet["checked"] == NOTES and quiet["findings"], quiet["counts"]
        assert not _mentions(quiet, WRITTEN)

        linter = RawClient.session(home.socket, timeout=60)
        linter.send_bytes(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "vault.lint", "params": LINT}).encode() + b"\n")
        wait_at_gate(gate, daemon, "the lint to reach its rules")  # the lint has its copy of the index and is held before its rules

        writer = RawClient.session(home.socket, timeout=60)
        made = writer.call("note.create", {"vault": "big", "path": WRITTEN, "body": f"# Written\n\nSee [[{DEAD}]].\n"})
        assert made["outcome"] == "applied", made
        appended = writer.call(
            "note.append", {"vault": "big", "target": linked, "section": "Later", "markdown": f"Also [[{DEAD} Again]].\n"}
        )
        assert appended["outcome"] == "applied", appended
        read = writer.call("note.read", {"vault": "big", "target": WRITTEN})
        assert DEAD in read["body"]
        assert gate.exists(), "the lint was still held while both writes were acknowledged"

        gate.unlink()
        held = _lint_reply(linter)
        # One state of the vault: the one the lint copied, before either write.
        assert held == quiet

        # The writes are the next lint's: the new note and the appended link.
        after = setup.call("vault.lint", {**LINT, "note": WRITTEN})
        assert any(DEAD in f["finding"] for f in after["findings"]), after
        after = setup.call("vault.lint", {**LINT, "note": linked})
        assert any(f"{DEAD} Again" in f["finding"] for f in after["findings"]), after
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()
