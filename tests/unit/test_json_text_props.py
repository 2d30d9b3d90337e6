"""JSON edited in place: every string value is found with its path and span, however the file is
formatted or escaped, and replacing part of one string changes only those characters' bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.vault import json_text

_TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
_LEAVES = st.one_of(_TEXT, st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none())
DOCS = st.recursive(_LEAVES, lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(_TEXT, kids, max_size=4)), max_leaves=20)
STYLES = st.sampled_from([{}, {"indent": 2}, {"indent": "\t"}, {"separators": (",", ":")}, {"indent": 0}])


def _strings_of(doc: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    if isinstance(doc, str):
        return [(path, doc)]
    if isinstance(doc, list):
        return [s for i, v in enumerate(doc) for s in _strings_of(v, (*path, i))]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in _strings_of(v, (*path, k))]
    return []


def _at(doc: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@settings(max_examples=300, deadline=None)
@given(DOCS, STYLES, st.booleans())
def test_every_string_value_is_found_at_its_path_and_span(doc: Any, style: dict[str, Any], ascii_only: bool) -> None:
    text = json.dumps(doc, ensure_ascii=ascii_only, **style)
    found = json_text.strings(text)
    assert sorted((t.path, t.value) for t in found) == sorted(_strings_of(doc))
    for token in found:
        assert json.loads(text[token.start : token.end]) == token.value == _at(doc, token.path)
    assert [t.start for t in found] == sorted(t.start for t in found)


@settings(max_examples=300, deadline=None)
@given(DOCS, STYLES, st.booleans(), st.data())
def test_a_replacement_changes_only_its_characters(doc: Any, style: dict[str, Any], ascii_only: bool, data: st.DataObject) -> None:
    text = json.dumps(doc, ensure_ascii=ascii_only, **style)
    found = json_text.strings(text)
    if not found:
        return
    token = data.draw(st.sampled_from(found))
    n = len(token.value)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    new = data.draw(_TEXT)
    replaced = json_text.replace_in_string(text, token, [(start, end, new)])
    out = text[: token.start] + replaced + text[token.end :]
    expected = json.loads(text)
    value = token.value[:start] + new + token.value[end:]
    if token.path:
        _at(expected, token.path[:-1])[token.path[-1]] = value
    else:
        expected = value
    assert json.loads(out) == expected
    # the bytes before the edited characters and after them are the file's own
    inner = text[token.start + 1 : token.end - 1]
    offsets = json_text._char_offsets(inner)
    assert replaced[1:-1].startswith(inner[: offsets[start]]) and replaced[1:-1].endswith(inner[offsets[end] :])
    if text.isascii():
        assert out.isascii()


def test_escapes_outside_the_edit_keep_their_spelling() -> None:
    text = '{"file": "a\\/b \\u00e9 [[Old]] \\ud83d\\ude00 end", "n": 1.50}'
    [token] = json_text.strings(text)
    at = token.value.index("Old")
    out = json_text.replace_in_string(text, token, [(at, at + 3, "Néw")])
    assert out == '"a\\/b \\u00e9 [[N\\u00e9w]] \\ud83d\\ude00 end"'  # an ASCII file stays ASCII
    assert json.loads(text.replace(text[token.start : token.end], out))["file"] == "a/b é [[Néw]] 😀 end"


@pytest.mark.parametrize("bad", ["", "{", '{"a": NaN}', '{"a": 1,}', "[" * 100_000, '{"a": "\\x"}', "nul\x00"])
def test_text_that_is_not_json_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        json_text.strings(bad)


def test_a_deep_document_costs_no_recursion() -> None:
    depth = 50_000
    text = '{"a":' * 50 + "[" * depth + '"x"' + "]" * depth + "}" * 50
    try:
        found = json_text.strings(text)
    except ValueError:
        return  # refused as too deep for the strict loader: fine, never a crash
    assert [t.value for t in found] == ["x"]
