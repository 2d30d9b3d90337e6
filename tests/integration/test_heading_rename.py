"""A patch that renames a heading reports the links it breaks, and can repoint them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.reads import LINKS, LinksParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import PATCH, UNDO, Edit, PatchParams, UndoParams
from tests.support.harness import Home, snapshot
from tests.support.typed import applied, refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient

NOTES = {
    "Guide.md": "# Guide\n\nSee [[#Setup]] below.\n\n## Setup\n\nSteps.\n\n## Other\n\nMore.\n",
    "A.md": "# A\n\nRead [[Guide#Setup]] first.\n",
    "B.md": "# B\n\n[[Guide#Setup|how]] and\n\n| col |\n|---|\n| [[Guide#Setup\\|x]] |\n",
    "C.md": "# C\n\n[the steps](Guide.md#setup)\n",
    "D.md": "# D\n\n[[Guide#Other]] stays.\n",
}
RENAME = PatchParams(target="Guide", old="## Setup\n", new="## Installation\n")


@pytest.fixture
def vault(home: Home, typed: TypedClient) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    return root


def test_renaming_a_heading_names_every_link_it_breaks(vault: Path, typed: TypedClient) -> None:
    """Regression: the rename was applied silently and four links pointed nowhere."""
    receipt = applied(typed.call(PATCH, RENAME))
    warned = [w for w in receipt.warnings if w.code == IssueCode.V03]
    assert len(warned) == 1, receipt.warnings
    message = warned[0].message
    assert "breaks 5 link(s)" in message
    assert "rewrite_anchors" in message
    assert "#Installation" in message
    for where in ("A.md:3", "B.md:3", "B.md:7", "C.md:3", "Guide.md:3"):
        assert where in message, message
    assert "D.md" not in message


def test_rewrite_anchors_repoints_them_in_one_undoable_operation(vault: Path, typed: TypedClient) -> None:
    before = snapshot(vault)
    receipt = applied(typed.call(PATCH, PatchParams(target="Guide", old="## Setup\n", new="## Installation\n", rewrite_anchors=True)))
    assert sorted(c.path for c in receipt.changes) == ["A.md", "B.md", "Guide.md"]
    assert (vault / "A.md").read_text() == "# A\n\nRead [[Guide#Installation]] first.\n"
    assert (vault / "B.md").read_text() == ("# B\n\n[[Guide#Installation|how]] and\n\n| col |\n|---|\n| [[Guide#Installation\\|x]] |\n")
    assert "See [[#Installation]] below." in (vault / "Guide.md").read_text()
    assert (vault / "C.md").read_text() == NOTES["C.md"]  # a URL slug anchor: reported, not rewritten
    left = [w for w in receipt.warnings if w.code == IssueCode.V03]
    assert len(left) == 1
    assert "C.md:3" in left[0].message
    links = typed.call(LINKS, LinksParams(target="A"))
    assert not links.dead, links
    typed.call(UNDO, UndoParams(op_id=receipt.op_id))
    after_undo = snapshot(vault)
    assert after_undo.pop("log.md", None) is not None  # the log records the patch and its undo
    assert after_undo == before


def test_rewrite_anchors_needs_exactly_one_renamed_heading(vault: Path, typed: TypedClient) -> None:
    before = snapshot(vault)
    with refused(ErrorCode.VALIDATION) as refusal:
        typed.call(
            PATCH,
            PatchParams(
                target="Guide", rewrite_anchors=True, edits=[Edit(old="## Setup\n", new="## One\n"), Edit(old="## Other\n", new="## Two\n")]
            ),
        )
    assert "exactly one heading" in refusal.data.message
    assert snapshot(vault) == before


def test_an_edit_that_keeps_the_headings_reports_nothing(vault: Path, typed: TypedClient) -> None:
    receipt = typed.call(PATCH, PatchParams(target="Guide", old="Steps.", new="The steps."))
    assert not [w for w in receipt.warnings if w.code == IssueCode.V03]
