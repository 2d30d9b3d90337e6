"""The MCP methods the shim answers, for both session models.

``prepare`` runs on the reading thread and answers at once everything that needs no daemon
(``initialize``, ``server/discover``, ``ping``, every error); what needs the daemon (``tools/list``
for the vault enum, ``tools/call``) comes back as a job for the call worker. The handshake
therefore never waits for the daemon, its start-up or its indexing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from vaultctl.client import CLIENT_VERSION
from vaultctl.mcp import paging, resources, versions, wire
from vaultctl.mcp.budget import DEFAULT_BUDGET, call_budget
from vaultctl.mcp.calls import run_tool, vault_choice
from vaultctl.mcp.errors import McpError, RpcCode, invalid_params
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.mcp.versions import Served

if TYPE_CHECKING:
    from vaultctl.mcp.daemon_connection import DaemonConnection
    from vaultctl.mcp.updates import ResourceUpdates

log = logging.getLogger("vaultctl.mcp")

SERVER_NAME = "vaultd"
INSTRUCTIONS = (
    "vaultd keeps Markdown notes in vaults. Search first, then read only the section you need. "
    "Every write is validated and answers with a receipt; a refused write lists its issues: fix "
    "them and call again. If a write failed or timed out, read the note before retrying, so it is "
    "not applied twice."
)
CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": True, "listChanged": False},  # resources/subscribe: vaultctl.mcp.updates
}
STATELESS_CAPABILITIES: dict[str, Any] = {
    **CAPABILITIES,
    "resources": {"subscribe": False, "listChanged": False},  # 2026-07-28 has no resources/subscribe
}
TOOLS_TTL_MS = 60_000  #: the tool set is fixed per release; only the vault enum may change
DISCOVER_TTL_MS = 3_600_000
RESOURCES_TTL_MS = 5_000  #: notes change as people write; a short cache still saves a host's repeated lists


Handler = Callable[[msgspec.Raw, Served], dict[str, Any]]  #: (raw params, served version) -> result body


class _CallParams(msgspec.Struct):
    name: Any = None
    arguments: msgspec.Raw = msgspec.Raw(b"null")  # absent and null both mean no arguments


_call_params = msgspec.json.Decoder(_CallParams)


@dataclass(frozen=True, slots=True)
class Job:
    """Work for the call worker: produces the reply frame for ``request_id``."""

    request_id: wire.RequestId
    run: Callable[[], bytes]


class Session:
    """One stdio session: the handshake version, if any, and the method handlers."""

    def __init__(
        self,
        daemon: DaemonConnection,
        catalogue: ToolCatalogue | None = None,
        result_bound: int = DEFAULT_BUDGET,
        tools_page: int = paging.DEFAULT_TOOLS_PAGE,
        updates: ResourceUpdates | None = None,
    ) -> None:
        self._daemon = daemon
        self._updates = updates
        self._result_bound = result_bound
        self._tools_page = tools_page
        self._catalogue = catalogue or ToolCatalogue()
        self.handshake_version: str | None = None
        self._inline: dict[str, Handler] = {
            "ping": lambda _p, _s: {},
            "server/discover": self._discover,
            "resources/templates/list": self._templates,
        }
        self._deferred: dict[str, Handler] = {
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
            "resources/subscribe": self._resources_subscribe,
            "resources/unsubscribe": self._resources_unsubscribe,
        }

    def prepare(self, request: wire.Request) -> bytes | Job:
        """Answer ``request`` now (a frame), or hand back the job that will."""
        try:
            meta = wire.meta_of(request.params)
            if request.method == "initialize":
                return wire.result_frame(request.id, self._initialize(request.params))
            served = versions.for_request(meta, self.handshake_version)
            if (inline := self._inline.get(request.method)) is not None:
                return wire.result_frame(request.id, _shape(inline(request.params, served), served))
            deferred = self._deferred.get(request.method)
            if deferred is None:
                raise McpError(RpcCode.METHOD_NOT_FOUND, f"method {request.method!r} is not served here")
        except McpError as exc:
            return wire.error_frame(request.id, exc)
        return Job(request.id, lambda: self._run(request, deferred, served))

    def _run(self, request: wire.Request, handler: Handler, served: Served) -> bytes:
        try:
            return wire.result_frame(request.id, _shape(handler(request.params, served), served))
        except McpError as exc:
            return wire.error_frame(request.id, exc)

    def _initialize(self, params: msgspec.Raw) -> dict[str, Any]:
        requested = wire.decode_object(params).get("protocolVersion")
        version = versions.negotiate_handshake(requested)
        self.handshake_version = version
        log.info("initialize: client proposed %r, serving %s", requested, version)
        served = Served(version, versions.Era.HANDSHAKE)
        return {
            "protocolVersion": version,
            "capabilities": CAPABILITIES,
            "serverInfo": server_info(served),
            "instructions": self._catalogue.instructions(INSTRUCTIONS),
        }

    def _discover(self, _params: msgspec.Raw, served: Served) -> dict[str, Any]:
        return {
            "supportedVersions": list(versions.STATELESS_VERSIONS),
            "capabilities": STATELESS_CAPABILITIES,
            "instructions": self._catalogue.instructions(INSTRUCTIONS),
            "ttlMs": DISCOVER_TTL_MS,
            "cacheScope": "public",
        }

    def _tools_list(self, params: msgspec.Raw, served: Served) -> dict[str, Any]:
        cursor = wire.decode_object(params).get("cursor") if bytes(params) else None
        tools = self._catalogue.definitions(vault_choice(self._daemon), structured=served.structured, annotated=served.annotated)
        shown, following = paging.page(tools, cursor, self._tools_page)
        result: dict[str, Any] = {"tools": shown}
        if following is not None:
            result["nextCursor"] = following
        if served.stateless:
            result.update(ttlMs=TOOLS_TTL_MS, cacheScope="private")  # the vault ids are this user's
        return result

    def _tools_call(self, params: msgspec.Raw, served: Served) -> dict[str, Any]:
        try:
            call = _call_params.decode(params)
        except msgspec.ValidationError as exc:
            raise invalid_params(f"tools/call params must be an object with a name: {exc}", "$.params") from exc
        decoded = self._catalogue.decode(call.name, call.arguments)
        budget = call_budget(wire.meta_of(params), self._result_bound)
        outcome = run_tool(self._daemon, decoded.spec, decoded.params, budget, decoded.carry)
        if outcome.is_error:
            log.info("tool %s answered an error: %s", decoded.spec.tool_name, outcome.text[:200])
        return outcome.as_result(structured=served.structured)

    def _templates(self, _params: msgspec.Raw, served: Served) -> dict[str, Any]:
        result = resources.templates()
        if served.stateless:
            result.update(ttlMs=DISCOVER_TTL_MS, cacheScope="public")  # fixed per release
        return result

    def _resources_list(self, params: msgspec.Raw, served: Served) -> dict[str, Any]:
        cursor = wire.decode_object(params).get("cursor") if bytes(params) else None
        result = resources.list_page(self._daemon, cursor)
        if served.stateless:
            result.update(ttlMs=RESOURCES_TTL_MS, cacheScope="private")  # the user's notes, changing as they write
        return result

    def _resources_read(self, params: msgspec.Raw, served: Served) -> dict[str, Any]:
        uri = wire.decode_object(params).get("uri")
        return resources.read(self._daemon, uri, call_budget(wire.meta_of(params), self._result_bound))

    def _subscriptions(self, served: Served) -> ResourceUpdates:
        if served.stateless or self._updates is None:
            raise McpError(RpcCode.METHOD_NOT_FOUND, "resources/subscribe is not served in the stateless model (2026-07-28 removed it)")
        return self._updates

    def _resources_subscribe(self, params: msgspec.Raw, served: Served) -> dict[str, Any]:
        updates = self._subscriptions(served)
        uri = wire.decode_object(params).get("uri")
        note = resources.resolve(self._daemon, uri)
        assert isinstance(uri, str)  # resolve refused anything else
        updates.subscribe(uri, note)
        return {}

    def _resources_unsubscribe(self, params: msgspec.Raw, served: Served) -> dict[str, Any]:
        updates = self._subscriptions(served)
        uri = wire.decode_object(params).get("uri")
        if not isinstance(uri, str):
            raise invalid_params("uri must be a string", "$.params.uri")
        updates.unsubscribe(uri)
        return {}


def server_info(served: Served) -> dict[str, Any]:
    info: dict[str, Any] = {"name": SERVER_NAME, "version": CLIENT_VERSION}
    if served.structured:  # Implementation.title arrived with 2025-06-18
        info["title"] = "vaultd vaults"
    return info


def _shape(result: dict[str, Any], served: Served) -> dict[str, Any]:
    """Stateless-era results carry ``resultType`` and the server's identity in ``_meta``."""
    if served.stateless:
        result.setdefault("resultType", "complete")
        meta = dict(result.get("_meta") or {})
        meta.setdefault(versions.SERVER_INFO_META_KEY, server_info(served))
        result["_meta"] = meta
    return result
