"""The options every write command shares, through the real vaultctl and a real daemon: --log on
the writes that once lacked it, a preview's confirm command that carries the --vault and --log it
was given, --dry-run and --log on a canvas, and every setting of a vault given at registration."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

import pytest

from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from tests.support.harness import Daemon, snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient

OWN = {"type": "TASK", "source": "cli-test", "note": "an operator's own words"}


@pytest.fixture
def vault(typed: TypedClient, sample_vault: Path) -> Path:
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    return sample_vault


def _last_log_line(root: Path) -> str:
    return (root / "log.md").read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]


def _confirm_line(out: str) -> list[str]:
    """The command a preview prints after "to confirm, run:", as words."""
    lines = out.splitlines()
    return shlex.split(lines[lines.index("to confirm, run:") + 1])


def test_a_preview_confirm_command_carries_its_vault_and_log(vault: Path, cli: Any) -> None:
    own = json.dumps(OWN)
    preview = cli("move", "Ideas", "inbox/Kept Ideas", "--vault", "sample", "--log", own)
    assert preview.code == 0, preview.err
    words = _confirm_line(preview.out)
    assert words[:4] == ["vaultctl", "move", "Ideas", "inbox/Kept Ideas"]
    assert words[words.index("--vault") + 1] == "sample"
    assert json.loads(words[words.index("--log") + 1]) == OWN
    assert (vault / "inbox" / "Ideas.md").exists()  # a preview writes nothing
    applied = cli(*words[1:], "--json")
    assert applied.code == 0, applied.err
    assert applied.json()["outcome"] == "applied"
    assert (vault / "inbox" / "Kept Ideas.md").exists()
    assert "an operator's own words" in _last_log_line(vault)


def test_undo_takes_a_log_event_of_its_own(vault: Path, cli: Any) -> None:
    made = cli("new", "inbox/Passing Thought", "--json")
    assert made.code == 0, made.err
    undone = cli("undo", made.json()["op_id"], "--log", json.dumps(OWN), "--json")
    assert undone.code == 0, undone.err
    assert not (vault / "inbox" / "Passing Thought.md").exists()
    assert "an operator's own words" in _last_log_line(vault)


def test_a_malformed_log_is_a_usage_error_before_anything_runs(vault: Path, cli: Any) -> None:
    before = snapshot(vault)
    bad = cli("undo", "20240101T000000Z-0000", "--log", "{not json")
    assert bad.code == 2
    assert "--log is not valid JSON" in bad.err
    assert cli("lint", "--log", json.dumps(OWN)).code == 2  # --log goes with --fix
    assert snapshot(vault) == before


def test_lint_fix_preview_carries_its_log_to_the_confirm(vault: Path, cli: Any) -> None:
    (vault / "inbox" / "Alias User.md").write_text("# Alias User\n\nSee [[Countess]].\n", encoding="utf-8")
    (vault / "people" / "Ada Lovelace.md").write_text(
        "---\naliases: [Countess]\n---\n# Ada Lovelace\n", encoding="utf-8"
    )  # an alias written as a link: a mechanical fix
    preview = cli("lint", "--fix", "--log", json.dumps(OWN), "--fresh")
    assert preview.code == 0, preview.err
    assert "to confirm, run:" in preview.out, preview.out
    words = _confirm_line(preview.out)
    assert json.loads(words[words.index("--log") + 1]) == OWN


def test_vault_add_takes_every_setting(home: Any, daemon: Daemon, cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    added = cli(
        "vault",
        "add",
        "v",
        str(root),
        "--pii",
        "deny",
        "--deny-path",
        "secret/**",
        "--deny-path",
        "keys/**",
        "--sources-folder",
        "refs",
        "--quiet-seconds",
        "45",
        "--json",
    )
    assert added.code == 0, added.err
    entry = added.json()["entry"]
    assert entry["pii"] == "deny"
    assert entry["deny_paths"] == ["secret/**", "keys/**"]
    assert entry["sources"] == {"folder": "refs"}
    assert entry["snapshot_quiet_s"] == 45
    refused = cli("vault", "add", "w", str(root), "--pii", "sometimes")
    assert refused.code == 2
    assert "--pii" in refused.err
