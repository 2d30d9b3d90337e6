"""What a handler may ask of the daemon that hosts it: the vaults, the config, a stop.

Handlers see the daemon only through this protocol, in their :class:`~vaultd.api.handlers.CallContext`;
``vaultd.daemon`` imports the handlers, never the other way round, so the methods can be read and
tested without the process around them (its listener, connections, budgets and shutdown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    import anyio

    from protocol.methods.service import Activation
    from protocol.methods.vaults import VaultEntry
    from vaultd.console.supervisor import ConsoleSupervisor
    from vaultd.registry.config import ConfigStore
    from vaultd.runtime import VaultRuntime
    from vaultd.sessions.book import SessionBook


class Host(Protocol):
    @property
    def home(self) -> Path: ...

    @property
    def socket_path(self) -> Path: ...

    @property
    def version(self) -> str: ...

    @property
    def activation(self) -> Activation:
        """Who opened the listening socket: the daemon itself or a service manager."""

    @property
    def idle_exit_s(self) -> float | None:
        """Quiet seconds after which a socket-activated daemon exits; None: it stays."""

    @property
    def started(self) -> float:
        """``time.monotonic()`` when the daemon started."""

    @property
    def config(self) -> ConfigStore:
        """The registry of vaults on disk (config.json); changed only by the vault methods."""

    @property
    def vaults(self) -> Mapping[str, VaultRuntime]:
        """The vaults the daemon serves, by id."""

    @property
    def stop_requested(self) -> anyio.Event:
        """Set it to stop the daemon gracefully."""

    def vault(self, vault_id: str | None) -> VaultRuntime:
        """The named vault, or the default one.

        Raises:
            NotFound: no such vault is registered (or none at all).
        """

    async def attach_and_index(self, entry: VaultEntry) -> VaultRuntime:
        """Serve a newly registered vault, its index built before this returns."""

    def detach(self, vault_id: str) -> None:
        """Stop serving a vault (its files are untouched)."""

    @property
    def sessions(self) -> SessionBook:
        """The agent sessions' records (in the daemon's home)."""

    @property
    def console(self) -> ConsoleSupervisor:
        """The web console's process: started on demand, stopped with the daemon."""
