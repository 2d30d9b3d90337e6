"""Which followed resources a batch of the daemon's events reports changed (``vaultctl.mcp.updates``)."""

from __future__ import annotations

from typing import Any

import pytest

from vaultctl.mcp.updates import updated

FOLLOWED = {
    "vault://v/A.md": ("v", "A.md"),
    "vault://v/A": ("v", "A.md"),  # the same note by its name: both URIs hear of it
    "vault://v/b/B.md": ("v", "b/B.md"),
    "vault://w/A.md": ("w", "A.md"),
}


def ev(kind: str, vault: str = "v", **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "vault": vault, "clock": "00000000:1", **fields}


@pytest.mark.parametrize(
    ("events", "uris"),
    [
        ([ev("note.changed", path="A.md")], {"vault://v/A.md", "vault://v/A"}),
        ([ev("note.created", path="b/B.md")], {"vault://v/b/B.md"}),
        ([ev("note.removed", vault="w", path="A.md")], {"vault://w/A.md"}),
        ([ev("note.renamed", path="C.md", old_path="b/B.md")], {"vault://v/b/B.md"}),  # moved away
        ([ev("note.renamed", path="b/B.md", old_path="C.md")], {"vault://v/b/B.md"}),  # another moved onto it
        ([ev("note.changed", path="a.md")], set()),  # paths are exact, as the index has them
        ([ev("note.changed", path="Other.md"), ev("operation.applied", paths=["A.md"])], set()),  # its note event says it
        ([ev("state.leave", changes=10, listed=10)], set()),  # every change was listed
        ([ev("state.leave", changes=10, listed=3)], {"vault://v/A.md", "vault://v/A", "vault://v/b/B.md"}),
        ([ev("fresh_instance", reason="folder taken back")], {"vault://v/A.md", "vault://v/A", "vault://v/b/B.md"}),
        ([ev("vault.removed", vault="w")], {"vault://w/A.md"}),
        (["not an event", ev("note.changed", path="A.md", vault="x")], set()),
    ],
)
def test_which_followed_notes_a_batch_reports(events: list[Any], uris: set[str]) -> None:
    assert updated(events, FOLLOWED) == uris


def test_nothing_followed_hears_nothing() -> None:
    assert updated([ev("note.changed", path="A.md"), ev("fresh_instance", reason="r")], {}) == set()
