"""Tool input and output schemas, generated from the method table's Structs.

MCP wants each schema self-contained with ``type: object`` at the root; ``msgspec.json.schema``
answers a root ``$ref`` into ``$defs``. So the root definition is lifted to the top and the other
definitions stay in ``$defs`` beside it, where every ``#/$defs/...`` reference still resolves.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import msgspec

_DEFS_PREFIX = "#/$defs/"


@dataclass(frozen=True, slots=True)
class VaultChoice:
    """The registered vaults, for the ``vault`` argument's enum."""

    ids: tuple[str, ...]
    default: str | None  #: the first personal vault, which the daemon uses when none is named


def self_contained(tp: type, *, closed: bool) -> dict[str, Any]:
    """The JSON Schema of ``tp`` with its root definition inlined.

    Args:
        tp: a msgspec Struct type.
        closed: refuse unknown keys at the root (``additionalProperties: false``). True for params,
            which the daemon refuses unknown keys in anyway; False for results, which are opened
            all the way down since they may grow fields an older client must not trip on.
    """
    schema = msgspec.json.schema(tp)
    defs: dict[str, Any] = schema.pop("$defs", {})
    ref = schema.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        name = ref[len(_DEFS_PREFIX) :]
        root = dict(defs[name])
        if not _referenced(defs, name):
            del defs[name]
        schema = {**root, **schema}
    schema.pop("title", None)  # a Struct's class name says nothing to a model
    schema["type"] = "object"
    if defs:
        schema["$defs"] = defs
    if closed:
        schema["additionalProperties"] = False
    else:
        _open_up(schema)
    return schema


def _open_up(node: Any) -> None:
    """Drop every ``additionalProperties: false``: a result Struct that refuses unknown keys in
    config must not make a client reject a result from a newer daemon that added a field."""
    if isinstance(node, dict):
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
        for value in node.values():
            _open_up(value)
    elif isinstance(node, list):
        for value in node:
            _open_up(value)


def _referenced(defs: dict[str, Any], name: str) -> bool:
    """Whether any definition (the root's own, when it is recursive) still refers to ``name``."""
    return json.dumps(_DEFS_PREFIX + name) in json.dumps(defs)


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
    description = original.get("description") or _first_description(original) or "The vault id."
    prop: dict[str, Any] = {"type": "string", "enum": list(vaults.ids), "description": description}
    if "vault" not in out.get("required", []) and vaults.default is not None:
        prop["default"] = vaults.default
    out["properties"]["vault"] = prop
    return out


def _first_description(prop: dict[str, Any]) -> str | None:
    for option in prop.get("anyOf", []):
        if isinstance(option, dict) and isinstance(option.get("description"), str):
            return str(option["description"])
    return None
