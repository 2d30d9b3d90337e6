"""vaultd: the daemon that owns, indexes, watches and writes Obsidian-compatible vaults."""

from protocol.version import VERSION as __version__

__all__ = ["__version__"]
