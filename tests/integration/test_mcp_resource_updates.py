"""``resources/subscribe`` through the official MCP SDK client: an edit made on disk reaches the
host as ``notifications/resources/updated``; a private note cannot be subscribed; one session
follows at most ``MAX_SUBSCRIPTIONS`` resources; an unsubscribed note is heard of no more."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import ResourceUpdatedNotification

from tests.support.agent import SHIM
from tests.support.harness import REPO, register
from vaultctl.mcp.resources import uri_of
from vaultctl.mcp.updates import MAX_SUBSCRIPTIONS

if TYPE_CHECKING:
    from pathlib import Path

    from mcp.client import Client

    from tests.support.harness import Daemon, Home

WAIT_S = 30  #: generous: the machine is shared


class Updates:
    """The URIs of every ``notifications/resources/updated`` the client received, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._arrived = anyio.Event()

    async def handle(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self._arrived.set()

    async def until(self, uri: str, after: int = 0) -> None:
        """Wait for an update of ``uri`` among those that arrive after the first ``after``."""
        with anyio.fail_after(WAIT_S):
            while uri not in self.uris[after:]:
                self._arrived = anyio.Event()
                await self._arrived.wait()


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "notes"
    (root / "diary").mkdir(parents=True)
    for i in range(MAX_SUBSCRIPTIONS + 1):
        (root / f"n{i:02d}.md").write_text(f"# N{i}\n")
    (root / "Plans.md").write_text("# Plans\n\nfirst\n")
    (root / "diary" / "Secret.md").write_text("# Secret\n")
    register(home, root, private_paths=["diary/**"])
    return root


async def _subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():  # the SDK marks it deprecated: 2026-07-28 replaced it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.subscribe_resource(uri)


async def _unsubscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.unsubscribe_resource(uri)


def _client(home: Home, updates: Updates) -> Any:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=SHIM[0], args=SHIM[1:], env=home.env, cwd=str(REPO))
    return Client(server, mode="legacy", read_timeout_seconds=60, message_handler=updates.handle)


async def test_an_edit_on_disk_reaches_the_subscribed_host(vault: Path, home: Home) -> None:
    updates = Updates()
    async with _client(home, updates) as client:
        assert client.server_capabilities.resources is not None and client.server_capabilities.resources.subscribe is True
        plans, other = uri_of("v", "Plans.md"), uri_of("v", "n00.md")
        await _subscribe(client, uri_of("v", "Plans"))  # a name resolves as resources/read resolves it
        await _subscribe(client, plans)
        await _subscribe(client, other)
        (vault / "Plans.md").write_text("# Plans\n\nsecond\n")
        await updates.until(plans)
        assert set(updates.uris) <= {plans, uri_of("v", "Plans")}
        [content] = (await client.read_resource(plans)).contents
        assert "second" in content.text
        await _unsubscribe(client, plans)
        await _unsubscribe(client, uri_of("v", "Plans"))
        heard = len(updates.uris)
        (vault / "Plans.md").write_text("# Plans\n\nthird\n")
        (vault / "n00.md").write_text("# N0\n\nedited\n")  # after Plans.md: its update would come first
        await updates.until(other)
        assert updates.uris[heard:] == [other], "nothing more of an unsubscribed note"
        heard = len(updates.uris)
        os.rename(vault / "n00.md", vault / "n00 moved.md")
        await updates.until(other, after=heard)  # a note moved away is an update of its URI


async def test_a_private_or_missing_note_cannot_be_subscribed(vault: Path, home: Home) -> None:
    async with _client(home, Updates()) as client:
        for uri in (uri_of("v", "diary/Secret.md"), uri_of("v", "Nothing here.md"), uri_of("nope", "Plans.md")):
            with pytest.raises(MCPError) as refused:
                await _subscribe(client, uri)
            assert refused.value.error.code == -32002, uri


async def test_a_session_follows_at_most_its_bound(vault: Path, home: Home) -> None:
    updates = Updates()
    async with _client(home, updates) as client:
        uris = [uri_of("v", f"n{i:02d}.md") for i in range(MAX_SUBSCRIPTIONS + 1)]
        for uri in uris[:MAX_SUBSCRIPTIONS]:
            await _subscribe(client, uri)
        await _subscribe(client, uris[0])  # again: still one subscription
        with pytest.raises(MCPError) as refused:
            await _subscribe(client, uris[MAX_SUBSCRIPTIONS])
        assert refused.value.error.code == -32602 and str(MAX_SUBSCRIPTIONS) in refused.value.error.message
        await _unsubscribe(client, uris[1])
        await _subscribe(client, uris[MAX_SUBSCRIPTIONS])
        (vault / f"n{MAX_SUBSCRIPTIONS:02d}.md").write_text("# last\n\nedited\n")
        await updates.until(uris[MAX_SUBSCRIPTIONS])


async def test_the_stateless_model_has_no_resources_subscribe(vault: Path, home: Home) -> None:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=SHIM[0], args=SHIM[1:], env=home.env, cwd=str(REPO))
    async with Client(server, mode="auto", read_timeout_seconds=60) as client:
        resources = client.server_capabilities.resources
        assert resources is not None and not resources.subscribe
