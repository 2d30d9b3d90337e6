"""One name rule for the notes a write creates: every name can be linked, and synced anywhere."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import Home, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

BREAKING = ["[", "]", "#", "^", "|"]
NOT_PORTABLE = ["*", '"', "<", ">", ":", "?"]


@pytest.fixture
def vault(home: Home, raw: RawClient) -> Path:
    root = home.root / "vault"
    (root / "inbox").mkdir(parents=True)
    (root / "inbox" / "Plain.md").write_text("# Plain\n")
    raw.call("vault.add", {"id": "v", "path": str(root)})
    return root


def _refusal(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


@pytest.mark.parametrize("char", BREAKING + NOT_PORTABLE)
@pytest.mark.parametrize("where", ["name", "folder"])
def test_create_and_move_refuse_a_name_that_cannot_be_linked_or_synced(vault: Path, raw: RawClient, char: str, where: str) -> None:
    """Regression: ``new "inbox/C# notes"`` was accepted though no link can reach it, and ``|`` was
    refused with a message about a log field."""
    path = f"inbox/C{char} notes" if where == "name" else f"in{char}box/notes"
    before = snapshot(vault)
    for method, params in (("note.create", {"path": path}), ("note.move", {"target": "inbox/Plain", "to": path})):
        error = _refusal(raw.request(method, params))
        assert error["data"]["code"] == "VALIDATION", (method, error)
        assert error["data"]["issues"][0]["code"] == "V04"
        message = error["message"]
        assert f"holds {char!r}" in message and "name" in message and "log field" not in message, message
    assert snapshot(vault) == before


def test_the_cli_says_what_is_wrong_with_the_name(vault: Path, cli: Any) -> None:
    made = cli("new", "inbox/C# notes", "--vault", "v")
    assert made.code == 1 and "'#'" in made.err and "wiki-link" in made.err, made.err
    assert not (vault / "inbox" / "C# notes.md").exists()


def test_names_the_rule_allows_still_work(vault: Path, raw: RawClient) -> None:
    for path in ("inbox/C sharp notes", "inbox/2026-12-03 plan (draft), v2", "inbox/Ünïcödé & more!"):
        assert raw.call("note.create", {"path": path})["applied"], path
        assert (vault / f"{path}.md").is_file()
