"""Which date stamp an edit writes: only a key the note already has, in the open profile."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home, RawClient

TODAY = dt.date.today().isoformat()
NOTES = {
    "Bare.md": "---\ntags: [x]\n---\n# Bare\n\n## S\n\ntext\n",  #: a header without any stamp key
    "Dated.md": "---\nupdated: 2020-01-01\n---\n# Dated\n\n## S\n\ntext\n",
    "Modified.md": "---\nmodified: 2020-01-01\n---\n# Modified\n\n## S\n\ntext\n",
    "Target.md": "# Target\n",
}


def _vault(home: Home, raw: RawClient, **add: Any) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    raw.call("vault.add", {"id": "v", "path": str(root), **add})
    return root


def _edits(raw: RawClient, target: str) -> None:
    """Each authored edit once: patch, append, link, set_frontmatter."""
    raw.call("note.append", {"target": target, "section": "S", "markdown": "more"})
    raw.call("note.patch", {"target": target, "edits": [{"old": "text", "new": "words"}]})
    raw.call("note.link", {"source": target, "target": "Target"})
    raw.call("note.set_frontmatter", {"target": target, "set": {"status": "draft"}})


def test_open_profile_edits_never_add_a_stamp_key_a_note_did_not_have(home: Home, raw: RawClient) -> None:
    """Regression: patch, set and link added ``updated:`` to every note with a header."""
    root = _vault(home, raw)
    _edits(raw, "Bare")
    text = (root / "Bare.md").read_text()
    assert "status: draft" in text and "words" in text and "[[Target]]" in text
    assert "updated" not in text
    _edits(raw, "Dated")
    assert f"updated: {TODAY}" in (root / "Dated.md").read_text()


def test_the_vault_names_its_stamp_keys(home: Home, raw: RawClient) -> None:
    root = _vault(home, raw, stamp_keys=["updated", "modified"])
    _edits(raw, "Modified")
    text = (root / "Modified.md").read_text()
    assert f"modified: {TODAY}" in text and "updated" not in text
    created = raw.call("note.create", {"path": "New"})
    assert created["applied"]
    assert f"updated: {TODAY}" in (root / "New.md").read_text()


def test_no_stamp_keys_means_no_stamp(home: Home, raw: RawClient) -> None:
    root = _vault(home, raw, stamp_keys=[])
    _edits(raw, "Dated")
    assert "updated: 2020-01-01" in (root / "Dated.md").read_text()
    raw.call("note.create", {"path": "New"})
    assert "updated" not in (root / "New.md").read_text()


def test_the_typed_profile_adds_the_first_key(home: Home, raw: RawClient) -> None:
    root = _vault(home, raw, schema="typed")
    raw.call("note.append", {"target": "Bare", "section": "S", "markdown": "more"})
    assert f"updated: {TODAY}" in (root / "Bare.md").read_text()


@pytest.mark.parametrize("bad", [["has space"], ["x" * 65], [""], ["a"] * 9])
def test_stamp_keys_are_bounded(home: Home, raw: RawClient, bad: list[str]) -> None:
    root = home.root / "vault"
    root.mkdir()
    reply = raw.request("vault.add", {"id": "v", "path": str(root), "stamp_keys": bad})
    assert reply["error"]["data"]["code"] == "INVALID_PARAMS"
