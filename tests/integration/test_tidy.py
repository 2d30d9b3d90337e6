"""vault.tidy through a real daemon and the real CLI: a vault an older vault-mem wrote (the fixture
tests/fixtures/vault-mem-old, built from vault-mem's own examples: escaped strings, old enum
spellings, renamed and retired keys, workspace-prefixed sources, topics without a body list, dated
Connections sections) reaches a lint pass in one confirmed operation and undoes byte for byte;
secrets in notes and in the log are redacted and stay so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.errors import ExitStatus
from tests.support.harness import snapshot

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home, RawClient

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vault-mem-old"
TOKEN = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"  # a GitHub token's shape, made up


def _add(raw: RawClient, home: Home, name: str = "old") -> Path:
    root = home.root / name
    shutil.copytree(FIXTURE, root)
    raw.call("vault.add", {"id": name, "path": str(root), "schema": "typed"})
    return root


def _notes(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(root).items() if k.startswith("notes/")}


def _confirm(cli: Any, *words: str) -> dict[str, Any]:
    preview = cli(*words, "--json")
    assert preview.code == 0, preview.err
    fingerprint = preview.json()["fingerprint"]
    done = cli(*words, "--confirm", "--fingerprint", fingerprint, "--json")
    assert done.code == 0, done.err
    receipt: dict[str, Any] = done.json()
    return receipt


def test_an_old_vault_mem_vault_lints_clean_after_one_tidy_and_undoes_byte_for_byte(
    daemon: Daemon, raw: RawClient, home: Home, cli: Any
) -> None:
    root = _add(raw, home)
    before = _notes(root)
    assert cli("lint", "--vault", "old", "--json").json()["verdict"] == "fail"

    preview = cli("tidy", "--vault", "old")
    assert preview.code == 0, preview.err
    assert _notes(root) == before  # a preview writes nothing
    for shown in ("T01 notes/retained-note.md:", "T02 notes/duplicate-note.md:", "T03 notes/decision-log.md:", "T04 ", "T05 ", "T06 "):
        assert shown in preview.out, (shown, preview.out)

    applied = _confirm(cli, "tidy", "--vault", "old")
    assert applied["detail"]["counts"]["T03"] >= 5
    lint = cli("lint", "--vault", "old", "--json").json()
    assert lint["verdict"] != "fail", lint["findings"]
    assert lint["errors"] == 0
    retained = (root / "notes" / "retained-note.md").read_text()
    assert "title: Retained note — café notes\n" in retained
    assert "## Relevant Notes\n\n- [[cafe-research]] (supports)\n- [[duplicate-note]]\n" in retained
    assert retained.endswith("## Topics\n\n- [[home-moc]]\n")
    assert "  - specs/retained.md\n  - specs/appendix.md\n  - https://example.org/retained\n" in retained
    # the map of content has nothing to tidy and keeps every byte
    assert (root / "notes" / "home-moc.md").read_bytes() == before["notes/home-moc.md"]

    again = cli("tidy", "--vault", "old", "--json").json()
    assert again["changes"] == []  # a second run finds nothing left

    undone = cli("undo", applied["op_id"], "--vault", "old", "--json")
    assert undone.code == 0, undone.err
    assert _notes(root) == before


def test_redaction_in_notes_and_log_never_comes_back(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = _add(raw, home, "keys")
    note = root / "notes" / "cafe-research.md"
    header, body = note.read_text().split("---\n# ", 1)
    note.write_text(f"{header}api_token: {TOKEN}\n---\n# {body}\nThe old writer kept github_token = {TOKEN} here.\n")
    raw.call("log.append", {"vault": "keys", "event": {"type": "LINT", "source": "cli", "note": "start"}})
    log = root / "log.md"
    assert log.exists()
    with log.open("a", encoding="utf-8") as f:
        f.write(f"2024-01-01 10:00 LINT - cli - hand-edited line with {TOKEN}\n")

    applied = _confirm(cli, "tidy", "--vault", "keys", "--rule", "secrets", "--rule", "log")
    text = json.dumps(applied)
    assert TOKEN not in text
    assert any(c.startswith("T07 notes/cafe-research.md:") for c in applied["detail"]["changes"])
    assert any(c.startswith("T08 log.md:") for c in applied["detail"]["changes"])
    tidied = note.read_text()
    assert TOKEN not in tidied
    assert "github_token = [redacted] here." in tidied
    assert TOKEN not in log.read_text()

    held_before_undo = set(_holders(home.root))
    undone = cli("undo", applied["op_id"], "--vault", "keys", "--json")
    assert undone.code == 0, undone.err
    assert TOKEN not in note.read_text()  # the redaction stays
    assert TOKEN not in log.read_text()
    # Inside the vault, the only file that still holds the secret is the tidy's own journal entry,
    # which its rollback needs; and the undo put it into no file of the daemon's home either (the
    # index cache may keep the old text in pages it has not reused yet, as before the tidy).
    journal = root / ".vaultd" / "journal" / applied["op_id"]
    in_vault = _holders(root)
    assert in_vault, "the journal keeps the original"
    assert all(journal in p.parents for p in in_vault), in_vault
    assert set(_holders(home.root)) <= held_before_undo | set(in_vault), sorted(_holders(home.root))


def _holders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and TOKEN.encode() in p.read_bytes())


def test_a_note_changed_after_the_preview_makes_the_confirm_stale(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = _add(raw, home, "stale")
    preview = cli("tidy", "--vault", "stale", "--json").json()
    note = root / "notes" / "duplicate-note.md"
    note.write_text(note.read_text() + "\nEdited after the preview.\n")
    edited = _notes(root)
    done = cli("tidy", "--vault", "stale", "--confirm", "--fingerprint", preview["fingerprint"], "--json")
    assert done.code == int(ExitStatus.CONFLICT), done.err  # STALE_PREVIEW
    assert _notes(root) == edited


def test_the_undo_of_a_tidy_that_redacted_nothing_puts_every_byte_back(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = _add(raw, home, "plain")
    note = root / "notes" / "home-moc.md"
    note.write_text(note.read_text().replace("type: moc\n", 'type: moc\nsubtitle: "caf\\u00e9"\n') + f"\nold_key = {TOKEN}\n")
    before = _notes(root)
    applied = _confirm(cli, "tidy", "--vault", "plain", "--rule", "escapes")
    assert list(applied["detail"]["counts"]) == ["T01"]
    assert TOKEN in note.read_text()  # the escapes rule leaves a secret where it is
    undone = cli("undo", applied["op_id"], "--vault", "plain", "--json")
    assert undone.code == 0, undone.err
    assert _notes(root) == before


def test_a_note_the_header_editor_cannot_edit_is_reported_and_blocks_no_other(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = _add(raw, home, "flow")
    odd = root / "notes" / "flow-note.md"
    odd.write_text('---\n{type: Insight, description: "flow \\u00e9", topics: ["[[home-moc]]"]}\n---\n# Flow\n\nSee [[home-moc]].\n')
    kept = odd.read_bytes()
    applied = _confirm(cli, "tidy", "--vault", "flow")
    assert odd.read_bytes() == kept
    assert any(r.startswith("V01 notes/flow-note.md:") and "left as it is" in r for r in applied["detail"]["reported"]), applied["detail"]
    assert (root / "notes" / "retained-note.md").read_bytes() != (FIXTURE / "notes" / "retained-note.md").read_bytes()
