"""The typed test client holds a test to what it asserts: a refusal with another error code or
another first issue, or no refusal at all, fails the test; a reply the result type would not hold
whole fails it; a session opens on the channel asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.reads import READ, SEARCH, ReadParams, SearchResult
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import CREATE, CreateParams
from tests.support.typed import TypedClient, TypedClients, _whole, refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon


def test_refused_holds_the_code_and_the_first_issue(typed: TypedClient, sample_vault: Path) -> None:
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    with refused(ErrorCode.AMBIGUOUS) as refusal:
        typed.call(READ, ReadParams(target="Meeting Notes"))
    assert sorted(refusal.data.candidates) == ["projects/alpha/Meeting Notes.md", "projects/beta/Meeting Notes.md"]
    with pytest.raises(AssertionError, match="NOT_FOUND"), refused(ErrorCode.CONFLICT):
        typed.call(READ, ReadParams(target="no such note"))
    with pytest.raises(AssertionError, match="V03"), refused(ErrorCode.VALIDATION, IssueCode.V06):
        typed.call(CREATE, CreateParams(path="d/amb", body="see [[Meeting Notes]]\n"))
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"), refused(ErrorCode.NOT_FOUND):
        typed.call(READ, ReadParams(target="Alpha Plan"))


def test_a_session_speaks_on_the_channel_it_opened(daemon: Daemon, typed_clients: TypedClients, sample_vault: Path) -> None:
    agent = typed_clients.open(daemon.home, Channel.MCP)
    with refused(ErrorCode.POLICY) as refusal:  # registering a vault is a person's, not an agent's
        agent.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    assert "not open to agents" in refusal.data.message
    person = typed_clients.open(daemon.home, Channel.CLI)
    assert person.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault))).entry.id == "sample"


def test_a_reply_must_decode_whole_into_its_type() -> None:
    """A key the result type does not declare would be dropped by the decode: the typed client
    fails the test instead, so comparing a result with a Struct holds the reply to its exact JSON."""
    assert _whole(SEARCH, b'{"hits": [], "did_you_mean": null, "left_out": 0, "cursor": null}') == SearchResult(hits=[], did_you_mean=None)
    with pytest.raises(AssertionError, match="does not decode whole"):
        _whole(SEARCH, b'{"hits": [], "did_you_mean": null, "left_out": 0, "cursor": null, "undeclared": 1}')
