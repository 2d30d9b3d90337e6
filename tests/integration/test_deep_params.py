"""A value nested past the header's bound is refused before anything is written, at its edge and far past it.

A method whose params hold free-form values (frontmatter to set) takes any JSON; a frame of
``[[[[...`` within the frame bound nests deeper than the decoder recurses (PARSE_ERROR, the
daemon answers on), and a value the decoder can follow but the header's bound cannot hold is
INVALID_PARAMS: vaultd never writes a header it would itself refuse to read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.harness import assert_alive
from vaultd.vault.frontmatter_emit import MAX_VALUE_DEPTH

if TYPE_CHECKING:
    from typing import Any

    from tests.support.harness import Daemon, Home, RawClient


def _frame(depth: int) -> bytes:
    nested = b"[" * depth + b"]" * depth
    return b'{"jsonrpc":"2.0","id":7,"method":"note.set_frontmatter","params":{"target":"Note","set":{"k":' + nested + b"}}}\n"


#: Lists nested ``depth`` deep: the outermost is the value at level 0, so MAX_VALUE_DEPTH + 1 of them
#: (the innermost empty) is the deepest value the bound lets through.
DEEPEST = MAX_VALUE_DEPTH + 1


@pytest.mark.parametrize("depth", [DEEPEST, DEEPEST + 1, 900, 200_000])
def test_a_value_nested_past_the_header_bound_is_refused_and_nothing_is_written(
    daemon: Daemon, home: Home, raw: RawClient, cli: Any, depth: int
) -> None:
    root = home.root / "vault"
    root.mkdir()
    (root / "Note.md").write_text("# Note\n")
    assert cli("vault", "add", "v", str(root)).code == 0
    raw.send_bytes(_frame(depth))
    reply = raw.recv_message()
    if depth <= DEEPEST:  # the key's mapping and the lists: within the bound, written and read back
        assert "result" in reply, reply
        assert cli("show", "Note", "--json").json()["frontmatter"] is not None
    else:
        assert "error" in reply and reply["error"]["data"]["code"] in {"INVALID_PARAMS", "PARSE_ERROR"}, reply
        assert (root / "Note.md").read_text() == "# Note\n"
    assert raw.call("daemon.status")["pid"] == daemon.proc.pid  # the same connection goes on
    assert_alive(home, daemon)
