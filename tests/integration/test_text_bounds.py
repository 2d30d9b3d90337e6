"""The patch and append bounds are bytes of UTF-8, as protocol/limits.py declares them, enforced
at the edge: the schema's character count lets a text of multi-byte characters through, so the
daemon counts the bytes itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.limits import MAX_APPEND_BYTES, MAX_PATCH_TEXT_BYTES
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import APPEND, PATCH, AppendParams, Edit, PatchParams
from tests.support.typed import refused

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient, TypedClients

TWO_BYTES = "é"


@pytest.fixture
def client(daemon: Daemon, home: Home, typed_clients: TypedClients) -> TypedClient:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n\nold words\n")
    c = typed_clients.open(home, timeout=60)
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    return c


@pytest.mark.parametrize("unit", ["a", TWO_BYTES])
def test_append_takes_its_bound_in_bytes_and_not_one_more(client: TypedClient, home: Home, unit: str) -> None:
    fits = unit * (MAX_APPEND_BYTES // len(unit.encode()))
    assert len(fits.encode()) == MAX_APPEND_BYTES
    client.call(APPEND, AppendParams(target="Alpha", section="Fits", markdown=fits))
    before = (home.root / "vault" / "Alpha.md").read_bytes()
    # the schema counts characters, the daemon bytes
    with refused(ErrorCode.INVALID_PARAMS if unit == "a" else ErrorCode.LIMIT):
        client.call(APPEND, AppendParams(target="Alpha", section="Over", markdown=fits + unit))
    assert (home.root / "vault" / "Alpha.md").read_bytes() == before


@pytest.mark.parametrize("field", ["old", "new"])
def test_patch_texts_take_their_bound_in_bytes(client: TypedClient, home: Home, field: str) -> None:
    fits = TWO_BYTES * (MAX_PATCH_TEXT_BYTES // 2)
    over = fits + TWO_BYTES
    assert len(over) < MAX_PATCH_TEXT_BYTES < len(over.encode()), "over the bound in bytes, under it in characters"
    texts = {"old": "old words", "new": "new words", field: over}
    before = (home.root / "vault" / "Alpha.md").read_bytes()
    with refused(ErrorCode.LIMIT) as refusal:
        client.call(PATCH, PatchParams(target="Alpha", old=texts["old"], new=texts["new"]))
    assert f"{field} is {len(over.encode())} bytes" in repr(refusal.data)
    with refused(ErrorCode.LIMIT) as in_edits:
        client.call(PATCH, PatchParams(target="Alpha", edits=[Edit(old="old words", new="x"), Edit(old="Alpha", new=over)]))
    assert "edits[1].new" in repr(in_edits.data)
    assert (home.root / "vault" / "Alpha.md").read_bytes() == before
    if field == "new":
        client.call(PATCH, PatchParams(target="Alpha", old="old words", new=fits))
