"""A receipt, and a refusal, stay bounded however much debt the note already had."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.vaults import VAULT_ADD, DeadLinks, VaultAddParams
from protocol.methods.writes import APPEND, CREATE, DELETE, AppendParams, CreateParams, DeleteParams
from tests.support.harness import RawClient
from tests.support.typed import applied, refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClient, TypedClients

CAP = 100  #: warnings a receipt lists (MAX_RECEIPT_WARNINGS), issues a refusal lists


def _dead_links(n: int, prefix: str = "gone") -> str:
    return "".join(f"[[{prefix}{i:06d}]]\n" for i in range(n))


@pytest.fixture
def vault(home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    return root


def _add(client: TypedClient, root: Path, **settings: Any) -> None:
    client.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), **settings))


# Past the cap, the note's other old links are counted in one warning, not judged one by one:
# CAP + 50 dead links still give CAP judged + 1 summary, never CAP + 50 warnings.
@pytest.mark.parametrize(("dead", "listed", "omitted"), [(CAP - 1, CAP - 1, 0), (CAP, CAP, 0), (CAP + 1, CAP, 1), (CAP + 50, CAP, 1)])
def test_old_dead_links_warn_up_to_the_cap_and_the_rest_are_counted(
    vault: Path, typed: TypedClient, dead: int, listed: int, omitted: int
) -> None:
    (vault / "Debt.md").write_text("# Debt\n\n" + _dead_links(dead))
    _add(typed, vault)
    r = applied(typed.call(APPEND, AppendParams(target="Debt", section="More", markdown="one more line")))
    assert len(r.warnings) == listed
    assert r.warnings_omitted == omitted
    assert all(w.code == IssueCode.V03 for w in r.warnings)
    if dead > CAP:
        assert r.warnings[0].message.startswith(f"{dead - CAP} more link(s) the note already had")


def test_a_note_with_a_vast_number_of_dead_links_gets_a_small_receipt(
    vault: Path, home: Home, daemon: object, typed_clients: TypedClients
) -> None:
    n = 150_000
    (vault / "Debt.md").write_text("# Debt\n\n" + _dead_links(n, "g"))  # 1.8 MB, under the note limit
    client = typed_clients.open(home, timeout=120)  # indexing and checking 150 000 links takes a while on a busy machine
    _add(client, vault)
    # The bound is on the whole frame as sent, envelope included: read through the raw client, then
    # decoded into the receipt's type for the rest.
    raw = RawClient(home.socket, timeout=120)
    raw.hello()
    frame = raw.request(APPEND.name, {"target": "Debt", "section": "More", "markdown": "one more line"})
    assert len(json.dumps(frame)) < 64 * 1024
    receipt = applied(msgspec.convert(frame["result"], APPEND.result))
    assert len(receipt.warnings) == CAP
    assert receipt.warnings_omitted == 1
    assert receipt.warnings[0].message.startswith(f"{n - CAP} more link(s) the note already had")
    assert (vault / "Debt.md").read_text().endswith("one more line\n")


@pytest.mark.parametrize(("dead", "listed"), [(CAP, CAP), (CAP + 1, CAP)])
def test_a_refusal_lists_at_most_the_cap_and_counts_the_rest(vault: Path, typed: TypedClient, dead: int, listed: int) -> None:
    _add(typed, vault, dead_links=DeadLinks.REFUSE)  # the open profile only warns of links to notes not written yet
    with refused(ErrorCode.VALIDATION) as refusal:
        typed.call(CREATE, CreateParams(path="New", body=_dead_links(dead, "nowhere")))
    data = refusal.data
    assert len(data.issues) == listed
    assert data.issues_omitted == dead - listed
    assert data.message.endswith(f"(and {dead - 1} more)")
    assert not (vault / "New.md").exists()


# Every refusal is bounded where errors are sent, not by each check: a delete finds one issue per
# link it would break, however many notes link in.
@pytest.mark.parametrize(("links", "listed", "omitted"), [(CAP, CAP, 0), (CAP + 1, CAP, 1), (CAP + 50, CAP, 50)])
def test_a_delete_refused_for_its_backlinks_lists_at_most_the_cap(
    vault: Path, typed: TypedClient, cli: Any, links: int, listed: int, omitted: int
) -> None:
    (vault / "Target.md").write_text("# Target\n")
    for i in range(links):
        (vault / f"in{i:04d}.md").write_text("[[Target]]\n")
    _add(typed, vault)
    with refused(ErrorCode.VALIDATION) as refusal:
        typed.call(DELETE, DeleteParams(target="Target"))
    data = refusal.data
    assert f"would break {links} links" in data.message
    assert len(data.issues) == listed
    assert data.issues_omitted == omitted
    by_cli = cli("delete", "Target")
    assert by_cli.code == 1
    assert f"would break {links} links" in by_cli.err
    assert (f"... and {omitted} more issue(s)" in by_cli.err) is bool(omitted), by_cli.err
    assert (vault / "Target.md").exists()
