"""The method table is the single source: every entry is complete and its schemas generate."""

from __future__ import annotations

import re
import typing

import msgspec
import pytest

from protocol.errors import ErrorCode, ExitStatus
from protocol.schema import all_schemas
from protocol.table import METHODS, Effect


def test_every_method_has_summary_structs_and_valid_tool_name() -> None:
    for name, spec in METHODS.items():
        assert spec.name == name
        assert spec.summary and spec.summary.endswith(".")
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", spec.tool_name)
        assert issubclass(spec.params, msgspec.Struct) and issubclass(spec.result, msgspec.Struct)
        if spec.two_step:
            assert "confirm" in spec.params.__struct_fields__ and "fingerprint" in spec.params.__struct_fields__


def test_params_refuse_unknown_keys() -> None:
    for spec in METHODS.values():
        with pytest.raises(msgspec.ValidationError, match="unknown field"):
            msgspec.json.decode(b'{"surely_not_a_field": 1}', type=spec.params)


def test_schemas_generate_for_every_method() -> None:
    schemas = all_schemas()
    assert [s["method"] for s in schemas] == list(METHODS)
    for s in schemas:
        assert s["params"] and s["result"]


def test_vault_codes_stay_out_of_the_range_mcp_reserves() -> None:
    codes = [c.rpc_code for c in ErrorCode]
    assert len(set(codes)) == len(codes)
    assert not [c for c in codes if -32099 <= c <= -32000]
    assert ErrorCode.CONFLICT.exit_status == ExitStatus.CONFLICT == 75
    assert ErrorCode.UNAVAILABLE.exit_status == 69
    assert ErrorCode.INTERNAL.exit_status == 70


def _handler_table() -> dict[str, object]:
    from vaultd.api import load_handlers
    from vaultd.api.handlers import HANDLERS

    load_handlers()
    return dict(HANDLERS)


def test_every_spec_has_exactly_one_handler_typed_as_the_spec() -> None:
    handlers = _handler_table()
    assert sorted(handlers) == sorted(METHODS)
    for name, spec in METHODS.items():
        hints = typing.get_type_hints(handlers[name])
        params = [v for k, v in hints.items() if k not in ("ctx", "return")]
        assert params == [spec.params], name
        assert hints["return"] == spec.result, name


def test_a_second_handler_for_a_spec_is_refused() -> None:
    from vaultd.api.handlers import handles

    _handler_table()
    spec = METHODS["note.search"]
    with pytest.raises(KeyError, match="two handlers"):
        handles(spec)(_handler_table)  # type: ignore[arg-type]


def test_effect_and_traits_keep_every_combination_in_use() -> None:
    """The enum and flags say what six booleans said: two-step is only ever destructive, a read
    is always idempotent, and only hello opens a session."""
    for spec in METHODS.values():
        assert not (spec.read_only and spec.destructive)
        assert spec.idempotent or not spec.read_only
        assert not spec.two_step or spec.destructive
        assert spec.session == (spec.name == "hello")
    assert {s.effect for s in METHODS.values()} == set(Effect)
