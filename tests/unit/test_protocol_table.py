"""The method table is the single source: every entry is complete and its schemas generate."""

from __future__ import annotations

import re

import msgspec
import pytest

from protocol.errors import ErrorCode, ExitStatus
from protocol.schema import all_schemas
from protocol.table import METHODS


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_has_summary_structs_and_valid_tool_name(name: str) -> None:
    spec = METHODS[name]
    assert spec.name == name
    assert spec.summary and spec.summary.endswith(".")
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", spec.tool_name)
    assert issubclass(spec.params, msgspec.Struct) and issubclass(spec.result, msgspec.Struct)
    if spec.two_step:
        assert "confirm" in spec.params.__struct_fields__ and "fingerprint" in spec.params.__struct_fields__


@pytest.mark.parametrize("name", sorted(METHODS))
def test_params_refuse_unknown_keys(name: str) -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(b'{"surely_not_a_field": 1}', type=METHODS[name].params)


def test_schemas_generate_for_every_method() -> None:
    schemas = all_schemas()
    assert [s["method"] for s in schemas] == list(METHODS)
    for s in schemas:
        assert s["params"] and s["result"]


def test_vault_codes_stay_out_of_the_range_mcp_reserves() -> None:
    codes = [c.rpc_code for c in ErrorCode]
    assert len(set(codes)) == len(codes)
    assert not [c for c in codes if -32099 <= c <= -32000]
    assert ErrorCode.CONFLICT.exit_status == ExitStatus.CONFLICT == 75  # type: ignore[comparison-overlap]
    assert ErrorCode.UNAVAILABLE.exit_status == 69
    assert ErrorCode.INTERNAL.exit_status == 70
