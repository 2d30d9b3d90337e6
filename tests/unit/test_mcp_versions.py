"""The shim speaks every protocol revision the official SDK knows, in the same session model."""

from __future__ import annotations

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from vaultctl.mcp.versions import ALL_VERSIONS, HANDSHAKE_VERSIONS, STATELESS_VERSIONS


def test_every_revision_the_sdk_knows_is_spoken_here() -> None:
    """A newer SDK that adds a revision fails here until the shim speaks it (or says why not)."""
    assert ALL_VERSIONS == KNOWN_PROTOCOL_VERSIONS
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert STATELESS_VERSIONS == MODERN_PROTOCOL_VERSIONS
