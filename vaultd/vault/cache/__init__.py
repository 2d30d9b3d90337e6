"""The per-vault derived SQLite cache, one concept per module; the names callers use, re-exported."""

from vaultd.vault.cache.index_cache import CacheStats, IndexCache
from vaultd.vault.cache.records import normalize_folder, normalize_tag
from vaultd.vault.cache.search import Hit
from vaultd.vault.cache.sqlite_file import SCHEMA_VERSION, OpenOutcome, cache_file_name
from vaultd.vault.search_doc import SearchDoc

__all__ = [
    "SCHEMA_VERSION",
    "CacheStats",
    "Hit",
    "IndexCache",
    "OpenOutcome",
    "SearchDoc",
    "cache_file_name",
    "normalize_folder",
    "normalize_tag",
]
