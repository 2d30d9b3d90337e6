"""One name rule for the notes a write creates: every name can be linked, and synced anywhere."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.receipts import Applied
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import CREATE, MOVE, CreateParams, MoveParams
from tests.support.harness import Home, snapshot
from tests.support.typed import refused

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.support.typed import TypedClient

BREAKING = ["[", "]", "#", "^", "|"]
NOT_PORTABLE = ["*", '"', "<", ">", ":", "?"]


@pytest.fixture
def vault(home: Home, typed: TypedClient) -> Path:
    root = home.root / "vault"
    (root / "inbox").mkdir(parents=True)
    (root / "inbox" / "Plain.md").write_text("# Plain\n")
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    return root


@pytest.mark.parametrize("char", BREAKING + NOT_PORTABLE)
@pytest.mark.parametrize("where", ["name", "folder"])
def test_create_and_move_refuse_a_name_that_cannot_be_linked_or_synced(vault: Path, typed: TypedClient, char: str, where: str) -> None:
    """Regression: ``new "inbox/C# notes"`` was accepted though no link can reach it, and ``|`` was
    refused with a message about a log field."""
    path = f"inbox/C{char} notes" if where == "name" else f"in{char}box/notes"
    before = snapshot(vault)
    calls: list[tuple[str, Callable[[], object]]] = [
        ("note.create", lambda: typed.call(CREATE, CreateParams(path=path))),
        ("note.move", lambda: typed.call(MOVE, MoveParams(target="inbox/Plain", to=path))),
    ]
    for method, call in calls:
        with refused(ErrorCode.VALIDATION, IssueCode.V04) as refusal:
            call()
        message = refusal.data.message
        assert f"holds {char!r}" in message, (method, message)
        assert "name" in message, (method, message)
        assert "log field" not in message, (method, message)
    assert snapshot(vault) == before


def test_the_cli_says_what_is_wrong_with_the_name(vault: Path, cli: Any) -> None:
    made = cli("new", "inbox/C# notes", "--vault", "v")
    assert made.code == 1, made.err
    assert "'#'" in made.err, made.err
    assert "wiki-link" in made.err, made.err
    assert not (vault / "inbox" / "C# notes.md").exists()


def test_names_the_rule_allows_still_work(vault: Path, typed: TypedClient) -> None:
    for path in ("inbox/C sharp notes", "inbox/2026-12-03 plan (draft), v2", "inbox/Ünïcödé & more!"):
        assert isinstance(typed.call(CREATE, CreateParams(path=path)), Applied), path
        assert (vault / f"{path}.md").is_file()
