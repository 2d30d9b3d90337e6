"""vaultd: the daemon that owns, indexes, watches and writes Obsidian-compatible vaults."""

__version__ = "0.1.0"
