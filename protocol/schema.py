"""JSON Schemas of every method, generated from the method table."""

from __future__ import annotations

import functools
import types
import typing
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


MAX_SHOWN_PATTERN = 48  #: a longer pattern (a path rule of lookaheads) helps nobody in a help line


@functools.cache
def _hints(params: type) -> dict[str, Any]:
    return typing.get_type_hints(params, include_extras=True)


def _metas(tp: Any) -> list[msgspec.Meta]:
    """The Meta of a field's type, the outermost last; then those of its union's members."""
    if typing.get_origin(tp) is typing.Annotated:
        own = [m for m in tp.__metadata__ if isinstance(m, msgspec.Meta)]
        return own[::-1] + _metas(typing.get_args(tp)[0])
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(tp) for m in _metas(arg)]
    return []


def field_help(params: type, name: str) -> str:
    """A params field's description with its numeric bounds and its pattern, as the CLI's help for
    its option.

    It is the description the field's JSON Schema carries, so a person reading ``--help`` and a
    model reading a tool's ``inputSchema`` read one account of each argument. Read from the type
    hints rather than a generated schema, since every ``vaultctl`` start builds every command's help.

    Raises:
        KeyError: ``params`` has no field ``name``.
        StopIteration: the field has no description.
    """
    metas = _metas(_hints(params)[name])
    text = next(m.description for m in metas if m.description)
    low = next((m.ge for m in metas if m.ge is not None), None)
    high = next((m.le for m in metas if m.le is not None), None)
    if low is not None and high is not None:
        text = f"{text.rstrip('.')} ({low}..{high})."
    pattern = next((m.pattern for m in metas if m.pattern), None)
    if pattern is not None and len(pattern) <= MAX_SHOWN_PATTERN:
        text = f"{text} Matches {pattern}"  # shown as written: vaultctl's help has no markup
    return text
