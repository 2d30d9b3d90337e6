"""JSON Schemas of every method, generated from the method table."""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.table import METHODS, MethodSpec


def method_schema(spec: MethodSpec[Any, Any]) -> dict[str, Any]:
    (params, result), components = msgspec.json.schema_components([spec.params, spec.result])
    return {
        "method": spec.name,
        "summary": spec.summary,
        "flags": {
            "read_only": spec.read_only,
            "destructive": spec.destructive,
            "two_step": spec.two_step,
            "idempotent": spec.idempotent,
            "mcp": spec.mcp,
        },
        "params": params,
        "result": result,
        "$defs": components,
    }


def all_schemas() -> list[dict[str, Any]]:
    return [method_schema(spec) for spec in METHODS.values()]


def inline_schema(tp: type) -> dict[str, Any]:
    """A self-contained schema (``$defs`` inside), as MCP tool schemas must be."""
    return msgspec.json.schema(tp)
