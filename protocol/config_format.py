"""The registry file's format version, and how a file of another version is read.

The daemon (``vaultd.registry.config``) and ``vaultctl doctor`` without a daemon read config.json
by these rules, so both name the same problem the same way:

- ``version`` is a positive integer; absent means 1. A format that adds a key bumps it.
- An older file is read through the migrations (the daemon writes the result back, keeping the
  original beside it as ``config.v<N>.json``).
- A newer file is read tolerantly where that is safe: a key this build does not know at the top
  level, in the daemon's limits or in a vault entry is set aside and written back unchanged by
  every registry change, while the keys it knows are still checked strictly. A key it does not
  know *inside* a setting (a PII policy, the agent policy, folder roles, ...) cannot be enforced,
  so the file is refused loudly, naming where, rather than enforcing less than the file says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.methods.vaults import VaultEntry

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

CONFIG_VERSION = 4  #: 2: vaults may declare domains and folder roles; 3: log project ids; 4: canonical tables
BACKUP_NAME = "config.v{version}.json"  #: where a migration keeps the file it replaced, beside it


class FormatProblem(ValueError):
    """The file's version or shape cannot be read by this build; the message says why."""


#: A registry key this build does not know, kept to be written back: (vault id or None, key, value).
Kept = list[tuple[str | None, str, Any]]


def version_of(doc: object) -> int:
    """The file's format version.

    Raises:
        FormatProblem: the file is not a JSON object or its version is not a positive integer.
    """
    if not isinstance(doc, dict):
        raise FormatProblem("it is not a JSON object")
    version = doc.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise FormatProblem(f"its version must be a positive integer, got {version!r}")
    return version


def _migrate_1(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 1 to 2: 2 only adds optional keys (domains, roles), so the entries are unchanged."""
    return {**doc, "version": 2}


def _migrate_2(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 2 to 3: 3 only adds an optional key (projects, the log's project registry)."""
    return {**doc, "version": 3}


def _migrate_3(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 3 to 4: 4 only adds an optional key (canon_tables, the canonical tables of promotion)."""
    return {**doc, "version": 4}


#: One step per old version: the migration from format N to N + 1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _migrate_1, 2: _migrate_2, 3: _migrate_3}


def migrated(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` brought to ``CONFIG_VERSION`` through every step from its own version."""
    version = version_of(doc)
    while version < CONFIG_VERSION:
        doc = MIGRATIONS[version](doc)
        version = version_of(doc)
    return doc


def set_aside(doc: dict[str, Any], top: Collection[str], daemon: Collection[str]) -> tuple[dict[str, Any], Kept]:
    """A newer file's known part, and the unknown keys of the three tolerant levels.

    ``top`` and ``daemon`` are the keys this build knows at the top level and in ``daemon``;
    a vault entry's are :class:`VaultEntry`'s. Unknown keys deeper down are left in place, for
    the strict decoder to refuse with their path.
    """
    kept: Kept = []
    known = {k: v for k, v in doc.items() if k in top}
    kept += [(None, k, v) for k, v in doc.items() if k not in top]
    if isinstance(doc.get("daemon"), dict) and "daemon" in top:
        known["daemon"] = {k: v for k, v in doc["daemon"].items() if k in daemon}
        kept += [("", k, v) for k, v in doc["daemon"].items() if k not in daemon]
    if isinstance(doc.get("vaults"), list) and "vaults" in top:
        fields = VaultEntry.__struct_fields__
        vaults = []
        for entry in doc["vaults"]:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                vaults.append({k: v for k, v in entry.items() if k in fields})
                kept += [(entry["id"], k, v) for k, v in entry.items() if k not in fields]
            else:
                vaults.append(entry)
        known["vaults"] = vaults
    return known, kept


def put_back(doc: dict[str, Any], kept: Kept) -> dict[str, Any]:
    """``doc`` (a registry as this build writes it) with the keys set aside put back.

    A vault's keys go back only while that vault is registered; a removed vault's go with it.
    """
    out = dict(doc)
    by_id = {v["id"]: v for v in out.get("vaults", []) if isinstance(v, dict)}
    for where, key, value in kept:
        if where is None:
            out.setdefault(key, value)
        elif where == "":
            out["daemon"] = {key: value, **out.get("daemon", {})}
        elif where in by_id:
            by_id[where].setdefault(key, value)
    return out


def newer_problem(path: str, version: int, detail: str) -> str:
    """The refusal of a newer file this build cannot read safely, naming the file and the place."""
    return (
        f"{path} is config format {version}, newer than this vaultd's {CONFIG_VERSION}, and holds a setting this vaultd "
        f"cannot enforce: {detail}; run the vaultd that wrote it, or remove that setting"
    )
