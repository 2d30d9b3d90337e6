"""MCP protocol versions, and which one a request is served at.

MCP has two session models, and the shim serves both on one stdio stream:

- **Handshake era** (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): the client opens with ``initialize``
  and proposes a version; the server echoes it when it speaks it, else answers its newest
  handshake version and lets the client decide whether to go on. The negotiated version then
  holds for the whole session.
- **Stateless era** (2026-07-28): there is no handshake. Every request carries its version in
  ``params._meta["io.modelcontextprotocol/protocolVersion"]`` (``server/discover`` tells a client
  which versions to pick from); a version the server does not speak is refused with -32022 and
  the list of versions it does speak.

The version of each request is decided per request, so a client may probe with
``server/discover`` and fall back to ``initialize`` on the same stream, as the auto-negotiating
clients do.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl.mcp.errors import McpError, RpcCode

if TYPE_CHECKING:
    from collections.abc import Mapping

#: Oldest to newest. 2024-11-05 is still what some hosts and SDK clients built before spring 2025
#: send; answering them with a newer version makes them hang up, and all it costs is leaving out
#: the tool annotations that version did not have.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
ALL_VERSIONS: tuple[str, ...] = (*HANDSHAKE_VERSIONS, *STATELESS_VERSIONS)

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"  #: per-request version (2026-07-28)
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"  #: result stamp naming the server (2026-07-28)

_STRUCTURED_SINCE = "2025-06-18"  # outputSchema, structuredContent and Tool.title arrived here
_ANNOTATED_SINCE = "2025-03-26"  # Tool.annotations (read-only, destructive, idempotent hints) arrived here


class Era(enum.Enum):
    """The session model a request belongs to."""

    HANDSHAKE = "handshake"  #: versions negotiated once by ``initialize``
    STATELESS = "stateless"  #: the version travels in every request's ``_meta``


@dataclass(frozen=True, slots=True)
class Served:
    """The version one request is answered at, and what that version's results may carry."""

    version: str
    era: Era

    @property
    def structured(self) -> bool:
        """Whether tools may declare ``outputSchema`` and results carry ``structuredContent``."""
        return ALL_VERSIONS.index(self.version) >= ALL_VERSIONS.index(_STRUCTURED_SINCE)

    @property
    def annotated(self) -> bool:
        """Whether tool definitions may carry ``annotations``."""
        return ALL_VERSIONS.index(self.version) >= ALL_VERSIONS.index(_ANNOTATED_SINCE)

    @property
    def stateless(self) -> bool:
        return self.era is Era.STATELESS


def negotiate_handshake(requested: object) -> str:
    """The version ``initialize`` answers with: the client's own when we speak it, else our newest.

    A stateless-era version proposed through ``initialize`` gets the newest handshake version too:
    ``initialize`` does not exist in that era, so the client is asking for the handshake model.
    """
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE


def for_request(meta: Mapping[str, Any] | None, session_version: str | None) -> Served:
    """Decide the version one request is served at.

    A request whose ``_meta`` names a protocol version is a stateless-era request at that version;
    any other request belongs to the handshake session (its negotiated version, or our newest
    handshake version from a client that skipped ``initialize``: lenient, since refusing it helps
    nobody).

    Raises:
        McpError: -32602 when the version is not a string; -32022 (unsupported protocol version)
            when we do not speak it, with ``data`` ``{"supported": [...], "requested": ...}``.
    """
    if meta is None or PROTOCOL_VERSION_META_KEY not in meta:
        return Served(session_version or LATEST_HANDSHAKE, Era.HANDSHAKE)
    requested = meta[PROTOCOL_VERSION_META_KEY]
    if not isinstance(requested, str):
        raise McpError(RpcCode.INVALID_PARAMS, f"params._meta[{PROTOCOL_VERSION_META_KEY!r}] must be a protocol version string")
    if requested not in STATELESS_VERSIONS:
        raise unsupported_version(requested)
    return Served(requested, Era.STATELESS)


def unsupported_version(requested: str) -> McpError:
    """The -32022 refusal. ``supported`` lists every version we speak, the handshake ones too, so an
    auto-negotiating client that shares no stateless version with us falls back to ``initialize``
    instead of giving up."""
    return McpError(
        RpcCode.UNSUPPORTED_PROTOCOL_VERSION,
        f"unsupported protocol version {requested!r}; this server speaks {', '.join(ALL_VERSIONS)}",
        data={"supported": list(ALL_VERSIONS), "requested": requested},
    )
