"""What a tool's input schema learns from the daemon: the registered vaults, as the ``vault``
argument's enum. The schema itself is generated from the params Struct
(:func:`protocol.schema.compact_schema`)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class VaultChoice:
    """The registered vaults, for the ``vault`` argument's enum."""

    ids: tuple[str, ...]
    default: str | None  #: the first personal vault, which the daemon uses when none is named


def with_vault_enum(schema: dict[str, Any], vaults: VaultChoice | None) -> dict[str, Any]:
    """Turn a ``vault`` argument into an enum of the registered vault ids, defaulting to the default vault.

    A model then picks a real vault instead of guessing one. With no vault registered (or the
    daemon unreachable) the schema is returned unchanged: an empty enum would forbid every call.
    """
    props = schema.get("properties")
    if not vaults or not vaults.ids or not isinstance(props, dict) or "vault" not in props:
        return schema
    out = copy.deepcopy(schema)
    original = out["properties"]["vault"]
    description = original.get("description") or _first_description(original)
    prop: dict[str, Any] = {"type": "string", "enum": list(vaults.ids)}
    if description:  # none when the server's instructions describe it once for every tool
        prop["description"] = description
    if "vault" not in out.get("required", []) and vaults.default is not None:
        prop["default"] = vaults.default
    out["properties"]["vault"] = prop
    return out


def _first_description(prop: dict[str, Any]) -> str | None:
    for option in prop.get("anyOf", []):
        if isinstance(option, dict) and isinstance(option.get("description"), str):
            return str(option["description"])
    return None
