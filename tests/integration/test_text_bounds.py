"""The patch and append bounds are bytes of UTF-8, as protocol/limits.py declares them, enforced
at the edge: the schema's character count lets a text of multi-byte characters through, so the
daemon counts the bytes itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.limits import MAX_APPEND_BYTES, MAX_PATCH_TEXT_BYTES
from tests.support.harness import RawClient

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home

TWO_BYTES = "é"


@pytest.fixture
def raw(daemon: Daemon, home: Home) -> RawClient:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n\nold words\n")
    client = RawClient(home.socket, timeout=60)
    client.hello("cli")
    client.call("vault.add", {"id": "v", "path": str(root)})
    return client


def _error(reply: dict[str, object]) -> str:
    error = reply.get("error")
    assert isinstance(error, dict), reply
    data = error["data"]
    assert isinstance(data, dict)
    return str(data["code"])


@pytest.mark.parametrize("unit", ["a", TWO_BYTES])
def test_append_takes_its_bound_in_bytes_and_not_one_more(raw: RawClient, home: Home, unit: str) -> None:
    fits = unit * (MAX_APPEND_BYTES // len(unit.encode()))
    assert len(fits.encode()) == MAX_APPEND_BYTES
    assert "result" in raw.request("note.append", {"target": "Alpha", "section": "Fits", "markdown": fits})
    before = (home.root / "vault" / "Alpha.md").read_bytes()
    over = raw.request("note.append", {"target": "Alpha", "section": "Over", "markdown": fits + unit})
    assert _error(over) == ("INVALID_PARAMS" if unit == "a" else "LIMIT"), "the schema counts characters, the daemon bytes"
    assert (home.root / "vault" / "Alpha.md").read_bytes() == before


@pytest.mark.parametrize("field", ["old", "new"])
def test_patch_texts_take_their_bound_in_bytes(raw: RawClient, home: Home, field: str) -> None:
    fits = TWO_BYTES * (MAX_PATCH_TEXT_BYTES // 2)
    over = fits + TWO_BYTES
    assert len(over) < MAX_PATCH_TEXT_BYTES < len(over.encode()), "over the bound in bytes, under it in characters"
    params = {"target": "Alpha", "old": "old words", "new": "new words", field: over}
    before = (home.root / "vault" / "Alpha.md").read_bytes()
    reply = raw.request("note.patch", params)
    assert _error(reply) == "LIMIT" and f"{field} is {len(over.encode())} bytes" in str(reply)
    in_edits = raw.request("note.patch", {"target": "Alpha", "edits": [{"old": "old words", "new": "x"}, {"old": "Alpha", "new": over}]})
    assert _error(in_edits) == "LIMIT" and "edits[1].new" in str(in_edits)
    assert (home.root / "vault" / "Alpha.md").read_bytes() == before
    if field == "new":
        assert "result" in raw.request("note.patch", {"target": "Alpha", "old": "old words", "new": fits})
