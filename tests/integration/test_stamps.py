"""Which date stamp an edit writes: only a key the note already has, in the open profile."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.receipts import Applied
from protocol.methods.vaults import VAULT_ADD, SchemaProfile, VaultAddParams
from protocol.methods.writes import (
    APPEND,
    CREATE,
    LINK,
    PATCH,
    SET_FRONTMATTER,
    AppendParams,
    CreateParams,
    Edit,
    LinkParams,
    PatchParams,
    SetFrontmatterParams,
)
from tests.support.typed import refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClient

TODAY = dt.date.today().isoformat()
NOTES = {
    "Bare.md": "---\ntags: [x]\n---\n# Bare\n\n## S\n\ntext\n",  #: a header without any stamp key
    "Dated.md": "---\nupdated: 2020-01-01\n---\n# Dated\n\n## S\n\ntext\n",
    "Modified.md": "---\nmodified: 2020-01-01\n---\n# Modified\n\n## S\n\ntext\n",
    "Target.md": "# Target\n",
}


def _vault(home: Home, typed: TypedClient, **add: Any) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), **add))
    return root


def _edits(typed: TypedClient, target: str) -> None:
    """Each authored edit once: patch, append, link, set_frontmatter."""
    typed.call(APPEND, AppendParams(target=target, section="S", markdown="more"))
    typed.call(PATCH, PatchParams(target=target, edits=[Edit(old="text", new="words")]))
    typed.call(LINK, LinkParams(source=target, target="Target"))
    typed.call(SET_FRONTMATTER, SetFrontmatterParams(target=target, set={"status": "draft"}))


def test_open_profile_edits_never_add_a_stamp_key_a_note_did_not_have(home: Home, typed: TypedClient) -> None:
    """Regression: patch, set and link added ``updated:`` to every note with a header."""
    root = _vault(home, typed)
    _edits(typed, "Bare")
    text = (root / "Bare.md").read_text()
    assert "status: draft" in text
    assert "words" in text
    assert "[[Target]]" in text
    assert "updated" not in text
    _edits(typed, "Dated")
    assert f"updated: {TODAY}" in (root / "Dated.md").read_text()


def test_the_vault_names_its_stamp_keys(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed, stamp_keys=["updated", "modified"])
    _edits(typed, "Modified")
    text = (root / "Modified.md").read_text()
    assert f"modified: {TODAY}" in text
    assert "updated" not in text
    created = typed.call(CREATE, CreateParams(path="New"))
    assert isinstance(created, Applied)
    assert f"updated: {TODAY}" in (root / "New.md").read_text()


def test_no_stamp_keys_means_no_stamp(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed, stamp_keys=[])
    _edits(typed, "Dated")
    assert "updated: 2020-01-01" in (root / "Dated.md").read_text()
    typed.call(CREATE, CreateParams(path="New"))
    assert "updated" not in (root / "New.md").read_text()


def test_the_typed_profile_adds_the_first_key(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed, schema=SchemaProfile.TYPED)
    typed.call(APPEND, AppendParams(target="Bare", section="S", markdown="more"))
    assert f"updated: {TODAY}" in (root / "Bare.md").read_text()


@pytest.mark.parametrize("bad", [["has space"], ["x" * 65], [""], ["a"] * 9])
def test_stamp_keys_are_bounded(home: Home, typed: TypedClient, bad: list[str]) -> None:
    root = home.root / "vault"
    root.mkdir()
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), stamp_keys=bad))
