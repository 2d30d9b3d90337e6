"""Obsidian's property types: types.json read as Obsidian reads it (junk ignored), types inferred
as Obsidian infers them, values checked and put in Obsidian's form."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.properties import PropertyType
from vaultd.obsidian.property_types import (
    MAX_TYPES_BYTES,
    PropertyValueError,
    coerce,
    infer,
    parse_types,
    read_types,
    type_of,
    typed_properties,
    vault_types,
)

if TYPE_CHECKING:
    from pathlib import Path

T = PropertyType


def test_types_json_is_read_and_junk_is_ignored() -> None:
    raw = json.dumps({"types": {"Due": "date", "n": "number", "bad": "colour", "x": 3, "": "text", "l": "multitext"}}).encode()
    assert parse_types(raw) == {"due": T.DATE, "n": T.NUMBER, "l": T.MULTITEXT}
    for junk in (b"", b"{", b"[]", b'{"types": []}', b'{"types": "x"}', b"\xff\xfe", b"[" * 100_000):
        assert parse_types(junk) == {}


def test_a_types_file_at_and_past_the_bound(tmp_path: Path) -> None:
    (tmp_path / ".obsidian").mkdir()
    body = json.dumps({"types": {"a": "date"}})
    at = body[:-1] + " " * (MAX_TYPES_BYTES - len(body)) + "}"
    (tmp_path / ".obsidian" / "types.json").write_text(at)
    assert read_types(tmp_path) == {"a": T.DATE}
    (tmp_path / ".obsidian" / "types.json").write_text(at[:-1] + " }")
    assert read_types(tmp_path) == {}
    (tmp_path / ".obsidian" / "types.json").unlink()
    assert read_types(tmp_path) == {}
    (tmp_path / "elsewhere.json").write_text(body)
    (tmp_path / ".obsidian" / "types.json").symlink_to(tmp_path / "elsewhere.json")
    assert read_types(tmp_path) == {}  # a link is not followed


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (True, T.CHECKBOX),
        (3, T.NUMBER),
        (2.5, T.NUMBER),
        (["a"], T.MULTITEXT),
        ("2026-01-02", T.DATE),
        ("2026-01-02T10:30", T.DATETIME),
        ("2026-01-02 10:30:15", T.DATETIME),
        ("2026-13-02", T.TEXT),
        ("hello", T.TEXT),
        ({"a": 1}, T.UNKNOWN),
        (None, None),
    ],
)
def test_inference(value: Any, kind: PropertyType | None) -> None:
    assert infer(value) == kind


def test_built_in_and_declared_win_over_values() -> None:
    assert type_of("tags", "a", {}) == T.TAGS
    assert type_of("Aliases", ["x"], {}) == T.ALIASES
    assert type_of("cssclasses", "wide", {}) == T.MULTITEXT
    assert type_of("Due", "soon", {"due": T.DATE}) == T.DATE
    assert type_of("empty", None, {}) == T.TEXT


def test_the_vault_type_is_the_most_common() -> None:
    notes: list[dict[str, Any] | None] = [{"s": "2026-01-01", "Tags": ["a"]}, {"S": "2026-01-02"}, {"s": "later", "e": None}, None]
    found = vault_types(notes, {})
    assert {k: (v.name, v.type, v.notes) for k, v in found.items()} == {
        "s": ("s", T.DATE, 3),
        "tags": ("Tags", T.TAGS, 1),
        "e": ("e", T.TEXT, 1),
    }
    assert typed_properties({"S": "x", "new": 4}, found) == {"S": T.DATE, "new": T.NUMBER}


@pytest.mark.parametrize(
    ("kind", "value", "written"),
    [
        (T.DATE, "2026-03-04", "2026-03-04"),
        (T.DATE, dt.date(2026, 3, 4), "2026-03-04"),
        (T.DATETIME, "2026-03-04 09:30", "2026-03-04T09:30"),
        (T.DATETIME, "2026-03-04T09:30:15", "2026-03-04T09:30:15"),
        (T.NUMBER, "12", 12),
        (T.NUMBER, "-1.5", -1.5),
        (T.NUMBER, 7, 7),
        (T.CHECKBOX, "TRUE", True),
        (T.CHECKBOX, False, False),
        (T.MULTITEXT, "one", ["one"]),
        (T.MULTITEXT, ["a", 2], ["a", "2"]),
        (T.TAGS, "#a, b c", ["a", "b", "c"]),
        (T.TAGS, ["#x/y"], ["x/y"]),
        (T.ALIASES, "Other name", ["Other name"]),
        (T.TEXT, 5, "5"),
        (T.TEXT, None, None),
        (T.UNKNOWN, {"a": 1}, {"a": 1}),
    ],
)
def test_values_take_obsidians_form(kind: PropertyType, value: Any, written: Any) -> None:
    assert coerce("p", kind, value) == written


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (T.DATE, "next week"),
        (T.DATE, "2026-02-30"),
        (T.DATE, 20260101),
        (T.DATETIME, "2026-03-04"),
        (T.DATETIME, "2026-03-04T25:00"),
        (T.NUMBER, "many"),
        (T.NUMBER, True),
        (T.NUMBER, float("nan")),
        (T.CHECKBOX, "maybe"),
        (T.CHECKBOX, 1),
        (T.MULTITEXT, [["nested"]]),
        (T.TAGS, ["two words"]),
        (T.TEXT, ["a"]),
        (T.TEXT, True),
    ],
)
def test_values_that_do_not_fit_are_refused_by_name(kind: PropertyType, value: Any) -> None:
    with pytest.raises(PropertyValueError) as caught:
        coerce("due", kind, value)
    assert "'due'" in str(caught.value) and kind.value in str(caught.value)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30))
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=4), st.dates().map(dt.date.isoformat))


@given(st.sampled_from(list(PropertyType)), _VALUES)
def test_coercion_is_idempotent_and_agrees_with_inference(kind: PropertyType, value: Any) -> None:
    try:
        once = coerce("p", kind, value)
    except PropertyValueError:
        return
    assert coerce("p", kind, once) == once
    if once is not None and kind in (T.DATE, T.DATETIME, T.NUMBER, T.CHECKBOX, T.MULTITEXT):
        assert infer(once) == kind


@given(st.binary(max_size=300))
def test_any_bytes_give_types_or_nothing(raw: bytes) -> None:
    assert all(isinstance(v, PropertyType) for v in parse_types(raw).values())


def test_declared_types_are_kept_up_to_their_bound() -> None:
    from vaultd.obsidian.property_types import MAX_TYPES

    many = {f"p{k}": "number" for k in range(MAX_TYPES + 1)}
    kept = parse_types(json.dumps({"types": many}).encode())
    assert len(kept) == MAX_TYPES
    assert f"p{MAX_TYPES - 1}" in kept and f"p{MAX_TYPES}" not in kept
