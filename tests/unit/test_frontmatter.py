"""Frontmatter: Obsidian's fence rule, the data model, every issue code, and lossless edits.

The edit tests run a fixed corpus of tricky headers (msgspec's JSON test-suite pattern): each must
come back byte-identical with no change, and a one-key change must leave every other line alone.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.corpus import generator
from vaultd.errors import InvalidParams, LimitExceeded, ValidationFailed
from vaultd.vault.frontmatter import (
    MAX_HEADER_BYTES,
    find_header,
    load_header,
    parse,
    split,
)
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.frontmatter_yaml import load_careful, load_fast

if TYPE_CHECKING:
    from pathlib import Path


def as_json(value: Any) -> str:
    """A spelling that tells 1 from 1.0 from true and minds key order."""
    return json.dumps(value, ensure_ascii=False)


# -- finding the header ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "present", "body"),
    [
        ("---\na: 1\n---\nbody\n", True, "body\n"),
        ("---\r\na: 1\r\n---\r\nbody\r\n", True, "body\r\n"),
        ("\ufeff---\na: 1\n---\nbody", True, "body"),
        ("---   \na: 1\n--- \t\nbody", True, "body"),
        ("---\na: 1\n---", True, ""),
        ("---\na: 1\n---\r", True, ""),
        ("---\n---\n", True, ""),
        ("---\na: 1\n...\nb: 2\n---\nbody", True, "body"),  # only --- closes, as in Obsidian
        ("---\na: 1\n---\nbody\n---\nmore\n", True, "body\n---\nmore\n"),
        ("no header\n---\na: 1\n---\n", False, "no header\n---\na: 1\n---\n"),
        ("\n---\na: 1\n---\n", False, "\n---\na: 1\n---\n"),
        ("----\na: 1\n---\n", False, "----\na: 1\n---\n"),
        ("--- a\nb: 1\n---\n", False, "--- a\nb: 1\n---\n"),
        ("---", False, "---"),
        ("\ufeffbody", False, "body"),
        ("", False, ""),
    ],
)
def test_fences_follow_obsidian(text: str, present: bool, body: str) -> None:
    result = parse(text)
    assert result.present is present
    assert text[result.body_offset :] == body
    assert result.body_line == text.count("\n", 0, result.body_offset) + 1


def test_split_gives_header_text_and_body_offset() -> None:
    text = "\ufeff---\r\na: 1\r\n---\r\nbody"
    header, offset = split(text)
    assert header == "a: 1\r\n"
    assert text[offset:] == "body"
    assert split("plain") == (None, 0)
    assert split("---\nunterminated\n") == (None, 0)


def test_unterminated_header_is_no_header_and_reports_n06() -> None:
    result = parse("---\ntitle: x\n\nbody\n")
    assert (result.present, result.data, result.body_offset, result.body_line) == (False, None, 0, 1)
    assert [i.code for i in result.issues] == ["N06"]
    assert find_header("---\ntitle: x\n") is not None


@pytest.mark.parametrize("text", ["---\n---\n", "---\n\n---\n", "---\n# only a comment\n---\n"])
def test_empty_header_is_an_empty_mapping(text: str) -> None:
    result = parse(text)
    assert (result.data, result.present, result.issues) == ({}, True, [])


def test_body_line_counts_from_one() -> None:
    result = parse("---\na: 1\nb: 2\n---\n# Title\n")
    assert result.body_line == 5
    assert parse("body").body_line == 1


# -- the data model ----------------------------------------------------------------------------

DATA_CASES = [
    ("a: yes\nb: no\nc: on\nd: off\ne: y", {"a": "yes", "b": "no", "c": "on", "d": "off", "e": "y"}),
    ("a: true\nb: False\nc: TRUE", {"a": True, "b": False, "c": True}),
    (
        "a: 012\nb: 0o12\nc: 0x1F\nd: 0b101\ne: 1_000\nf: +12\ng: -0",
        {"a": 12, "b": 10, "c": 31, "d": 5, "e": 1000, "f": 12, "g": 0},
    ),
    ("a: 1e3\nb: 1.5\nc: .5\nd: 1.\ne: -1_0.5", {"a": 1000.0, "b": 1.5, "c": 0.5, "d": 1.0, "e": -10.5}),
    ("a: .inf\nb: -.Inf\nc: .NaN", {"a": ".inf", "b": "-.inf", "c": ".nan"}),
    ("a: ~\nb: null\nc:\nd: Null", {"a": None, "b": None, "c": None, "d": None}),
    ("a: 2020-01-27\nb: 2020-1-2\nc: 2023-02-30", {"a": "2020-01-27", "b": "2020-1-2", "c": "2023-02-30"}),
    (
        "a: 2001-12-14t21:59:43.10-05:00\nb: 2001-12-14 21:59:43.10\nc: 2020-01-01T00:00:00Z",
        {
            "a": "2001-12-14T21:59:43.100000-05:00",
            "b": "2001-12-14T21:59:43.100000",
            "c": "2020-01-01T00:00:00+00:00",
        },
    ),
    (
        "2: a\ntrue: b\nnull: c\n1.5: d\n2020-01-01: e",
        {"2": "a", "true": "b", "null": "c", "1.5": "d", "2020-01-01": "e"},
    ),
    ("a: 1:30\nb: =\nc: <<\nd: '012'", {"a": "1:30", "b": "=", "c": "<<", "d": "012"}),
    ("a: |+\n  keep\n\nb: >-\n  folded\n  text\n", {"a": "keep\n\n", "b": "folded text"}),
    ("t: [a, 'b', \"c\"]\nn:\n  x: {y: [1, 2.5]}", {"t": ["a", "b", "c"], "n": {"x": {"y": [1, 2.5]}}}),
    ('é: 한국어\n😀: "\\u00e9\\t"', {"é": "한국어", "😀": "é\t"}),
]


@pytest.mark.parametrize(("header", "data"), DATA_CASES)
def test_values_follow_yaml_1_2_core_on_both_paths(header: str, data: dict[str, Any]) -> None:
    parsed = parse(f"---\n{header}\n---\n")
    assert parsed.issues == []
    assert as_json(parsed.data) == as_json(data)
    careful, issues = load_careful(header)
    assert issues == []
    assert as_json(careful) == as_json(data)


def test_typical_header_takes_the_fast_path_and_is_quick() -> None:
    header = (
        'title: "Flainly Wufaness"\ntype: method\ndomain: learning\ntags: [todo, zouss]\n'
        "aliases:\n  - Chyt pieness\ncreated: 2020-01-27\nupdated: 2020-03-16\nstatus: draft\n"
        "priority: 3\ndescription: From clouity smiord from glestda hofot them the.\n"
    )
    assert load_fast(header) == load_careful(header)[0]
    note = f"---\n{header}---\n\n# Body\n"
    start = time.perf_counter()
    for _ in range(200):
        parse(note)
    # The budget is 0.2 ms; this bound only catches a fall onto the slow path (about 2 ms).
    assert (time.perf_counter() - start) / 200 < 1e-3


# -- issues ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "code", "line"),
    [
        ("a: [1, 2\n", "N01", None),
        ("a: 'open\n", "N01", None),
        ("a: b: c\n", "N01", 2),
        ("a:\n\t- b\n", "N01", None),
        ("a: !custom x\n", "N01", 2),
        ("a: !!binary aGk=\n", "N01", None),
        ("a: " + "[" * 80 + "]" * 80 + "\n", "N01", None),
        ("- a\n- b\n", "N02", 2),
        ("just text\n", "N02", 2),
        ("null\n", "N02", 2),
        ("? [a, b]\n: c\n", "N02", None),
        ("a: 1\nb: 2\na: 3\n", "N03", 4),
        ("a: 1\n'a': 2\n", "N03", None),
        ("1: x\n1.0: y\n", "N03", None),
        ("1: x\n'1': y\n", "N03", None),
        ("a: &x 1\nb: *x\n", "N04", 2),
        ("a: &x 1\n", "N04", 2),
        ("base: &b {x: 1}\nc:\n  <<: *b\n", "N04", 2),
    ],
)
def test_issue_codes(header: str, code: str, line: int | None) -> None:
    result = parse(f"---\n{header}---\nbody\n")
    assert result.present
    assert result.data is None
    assert [i.code for i in result.issues] == [code]
    if line is not None:
        assert result.issues[0].line == line
    assert result.body_offset == len(f"---\n{header}---\n")


def test_alias_bomb_is_refused_without_expansion() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 40)]
    start = time.perf_counter()
    result = parse("---\n" + "\n".join(lines) + "\n---\n")
    assert time.perf_counter() - start < 2
    assert result.data is None
    assert [i.code for i in result.issues] == ["N04"]


def test_oversized_header_is_refused_unread() -> None:
    header = "".join(f"k{n}: {'x' * 60}\n" for n in range(MAX_HEADER_BYTES // 60 + 1))
    result = parse(f"---\n{header}---\nbody")
    assert (result.present, result.data, [i.code for i in result.issues]) == (True, None, ["N05"])
    assert result.body_offset == len(f"---\n{header}---\n")


@pytest.mark.parametrize(
    "text",
    [
        "---\na: \ud800\n---\n",
        "---\na: \x00\n---\n",
        "---\n" + "- " * 5000 + "x\n---\n",
        "---\n" + "a:\n " * 300 + "x\n---\n",
        "---\n%YAML 1.1\n---\n",
        "---\na: -_\n---\n",
        "---\na: 0x_\n---\n",
        "---\n\u2028a: 1\n---\n",
        "---\na: |\n  x\n b\n---\n",
    ],
)
def test_parse_never_raises(text: str) -> None:
    result = parse(text)
    assert result.data is None or isinstance(result.data, dict)
    assert result.data is not None or result.issues


def test_careful_path_decides_when_the_fast_path_cannot() -> None:
    data, issues = load_header("a: Tom & Jerry\nb: x * y\nc: hey!\n")
    assert (data, issues) == ({"a": "Tom & Jerry", "b": "x * y", "c": "hey!"}, [])
    assert load_header("a: 'x\ty'\n") == ({"a": "x\ty"}, [])
    assert load_header("<<: {a: 1}\nb: 2\n") == ({"b": 2, "a": 1}, [])


# -- editing: a fixed corpus of tricky headers ---------------------------------------------------

CORPUS = {
    "comments": "---\n# lead\ntitle: Hello   # eol comment\n\n# about tags\ntags:\n  - a\n  # inside\n  - b\n# trailing\n---\nbody\n",
    "quoted keys": '---\n"my key": 1\n\'other key\': two\nplain: "quoted: value"\n---\n',
    "folded and literal": "---\nfold: >-\n  one\n  two\nlit: |+\n  keep\n\n\nnext: x\n---\n",
    "flow lists": '---\ntags: [a, "b c", 3]\nmap: {x: 1, y: [2, 3]}\nafter: z\n---\n',
    "nested": "---\nouter:\n  inner:\n    deep: 1\n  list:\n  - x\n  - y: 2\nflat: 3\n---\n",
    "crlf": "---\r\ntitle: x\r\ntags:\r\n  - a\r\nn: 1\r\n---\r\nbody\r\n",
    "bom": "\ufeff---\ntitle: x\nn: 1\n---\nbody",
    "unicode": '---\ntitle: 한국어 노트\n名前: 東京\némoji: "😀 \\u00e9"\n---\n',
    "empty values": "---\na:\nb: ''\nc: \"\"\nd: []\ne: {}\nf: ~\n---\n",
    "trailing spaces": "---  \ntitle: x   \nn: 1 \n---   \nbody",
    "no trailing newline": "---\na: 1\nb: 2\n---",
    "dashes in body": "---\na: 1\n---\n---\nb: 2\n---\n",
    "tabs": '---\nlit: |\n  \tindented with tab\nq: "a\tb"\n# \tcomment\nz: 1\n---\n',
    "multi-line scalars": '---\nplain: first\n  second\ndq: "one\n  two"\nz: 1\n---\n',
    "indentless list": "---\ntags:\n- a\n- b\nn: 1\n---\n",
    "indented mapping": "---\n  a: 1\n  b:\n    - x\n  c: 3\n---\n",
    "dates": "---\ncreated: 2020-01-27\nupdated: 2020-03-16T10:00:00\nn: 1\n---\n",
    "empty header": "---\n---\nbody\n",
    "comment only header": "---\n# nothing here\n---\n",
    "no header": "just a body\n",
    "crlf no header": "line one\r\nline two\r\n",
}


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_no_change_is_identity(name: str) -> None:
    text = CORPUS[name]
    assert emit(text) == text
    assert emit(text, unset=["absent"]) == text
    data = parse(text).data
    if data:
        assert emit(text, set=data) == text  # setting every key to its own value changes nothing


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_one_key_change_is_local(name: str) -> None:
    text = CORPUS[name]
    data = parse(text).data or {}
    for key in data:
        result = emit(text, set={key: "changed value"})
        assert parse(result).data == {**data, key: "changed value"}
        assert_one_hunk_at(key, header_lines(text), header_lines(result))
        assert result[parse(result).body_offset :] == text[parse(text).body_offset :]


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_unset_and_add_are_local(name: str) -> None:
    text = CORPUS[name]
    data = parse(text).data or {}
    for key in data:
        result = emit(text, unset=[key])
        assert parse(result).data == {k: v for k, v in data.items() if k != key}
        assert_one_hunk_at(key, header_lines(text), header_lines(result))
    added = emit(text, set={"added": ["x", 1]})
    assert parse(added).data == {**data, "added": ["x", 1]}
    if parse(text).present:
        newline = "\r\n" if "\r\n" in text else "\n"
        indent = " " * (len(header_lines(text)[0]) - len(header_lines(text)[0].lstrip(" "))) if data else ""
        assert header_lines(added) == [
            *header_lines(text),
            *(f"{indent}{line}{newline}" for line in ("added:", "  - x", "  - 1")),
        ]
    assert added.endswith(text[parse(text).body_offset :])


def header_lines(text: str) -> list[str]:
    bounds = find_header(text)
    assert bounds is not None
    return text[bounds.start : bounds.end].splitlines(keepends=True)


def assert_one_hunk_at(key: str, before: list[str], after: list[str]) -> None:
    """Every line is kept except one contiguous run, which starts at ``key``'s line."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    hunks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    assert len(hunks) == 1, hunks
    assert key in before[hunks[0][1]], (key, before[hunks[0][1]])


def test_change_keeps_other_lines_byte_for_byte() -> None:
    text = CORPUS["comments"]
    result = emit(text, set={"title": "New title"})
    assert result == text.replace("title: Hello   # eol comment\n", "title: New title\n")
    result = emit(CORPUS["quoted keys"], set={"my key": 2})
    assert result == CORPUS["quoted keys"].replace('"my key": 1', '"my key": 2')
    result = emit(CORPUS["crlf"], set={"tags": ["a", "b"]})
    assert result == CORPUS["crlf"].replace("  - a\r\n", "  - a\r\n  - b\r\n")
    result = emit(CORPUS["indented mapping"], set={"b": {"k": [1]}, "d": True})
    assert result == "---\n  a: 1\n  b:\n    k:\n      - 1\n  c: 3\n  d: true\n---\n"


def test_unset_keeps_a_keep_chomped_value_above() -> None:
    text = "---\nlit: |+\n  keep\n\nb: 1\n\nc: 2\n---\n"
    result = emit(text, unset=["b"])
    assert parse(result).data == {"lit": "keep\n\n", "c": 2}


def test_value_equal_by_python_but_not_by_type_is_rewritten() -> None:
    text = "---\na: true\nb: 1\nc: 1.0\n---\n"
    assert emit(text, set={"a": True, "b": 1, "c": 1.0}) == text
    result = emit(text, set={"a": 1, "b": 1.0, "c": 1})
    assert as_json(parse(result).data) == as_json({"a": 1, "b": 1.0, "c": 1})


def test_dates_written_as_strings_stay_plain() -> None:
    text = "---\ncreated: 2020-01-27\n---\n"
    assert emit(text, set={"created": "2020-01-27"}) == text
    assert emit(text, set={"created": "2021-02-03"}) == "---\ncreated: 2021-02-03\n---\n"


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain words", "plain words"),
        ("yes", '"yes"'),
        ("true", '"true"'),
        ("012", '"012"'),
        ("1e3", '"1e3"'),
        ("", '""'),
        (" lead", '" lead"'),
        ("trail ", '"trail "'),
        ("a: b", '"a: b"'),
        ("a #b", '"a #b"'),
        ("#x", '"#x"'),
        ("- x", '"- x"'),
        ("[[Link]]", '"[[Link]]"'),
        ("two\nlines", '"two\\nlines"'),
        ('say "hi"', 'say "hi"'),
        ("tab\there", '"tab\\there"'),
        ("ctl\x01\x85\u2028", '"ctl\\x01\\x85\\u2028"'),
        ("한국어", "한국어"),
        ("null", '"null"'),
        ("~", '"~"'),
        ("...", '"..."'),
        ("<<", '"<<"'),
        ("=", '"="'),
        (1.0e16, "1.0e+16"),
        (-0.0, "-0.0"),
        (10**30, str(10**30)),
        (None, ""),
        (False, "false"),
    ],
)
def test_values_are_written_plain_when_they_read_back_the_same(value: Any, written: str) -> None:
    result = emit("---\nk: old\n---\n", set={"k": value})
    assert result == f"---\nk:{' ' if written else ''}{written}\n---\n"
    assert as_json(parse(result).data) == as_json({"k": value})


def test_merge_looking_keys_are_quoted() -> None:
    result = emit("---\na: 1\n---\n", set={"<<": {"x": 1}, "=": "<<"})
    assert result == '---\na: 1\n"<<":\n  x: 1\n"=": "<<"\n---\n'
    assert parse(result).data == {"a": 1, "<<": {"x": 1}, "=": "<<"}


@pytest.mark.parametrize("text", ["---\na: [1\n---\n", "---\nunterminated\n", "---\n{a: 1}\n---\n"])
def test_no_change_never_judges_the_header(text: str) -> None:
    assert emit(text) == text


def test_new_header_goes_after_the_bom_in_the_notes_line_ending() -> None:
    assert emit("body\n", set={"a": 1}) == "---\na: 1\n---\nbody\n"
    assert emit("\ufeffone\r\ntwo", set={"a": 1}) == "\ufeff---\r\na: 1\r\n---\r\none\r\ntwo"
    assert emit("", set={"a": [1]}) == "---\na:\n  - 1\n---\n"
    assert emit("body\n", unset=["a"]) == "body\n"
    assert emit("---", set={"a": 1}) == "---\na: 1\n---\n---"


def test_nested_values_round_trip() -> None:
    value = {"x": [1, [2, [3]], {"y": None, "z": []}], "": {}, "q: k": "v"}
    result = emit("---\n---\n", set={"n": value, "l": [{"a": 1, "b": [True]}, [], {}]})
    assert as_json(parse(result).data) == as_json({"n": value, "l": [{"a": 1, "b": [True]}, [], {}]})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\n{a: 1, b: 2}\n---\n", "not a block mapping"),
        ("---\na: [1\n---\n", "malformed"),
        ("---\na: &x 1\nb: *x\n---\n", "anchors or aliases"),
        ("---\n<<: {a: 1}\nb: 2\n---\n", "merge key"),
        ("---\n? a\n: 1\n---\n", "does not start its own line"),
        ("---\na: 1\n", "closing '---'"),
        ("---\n" + "k: " + "x" * MAX_HEADER_BYTES + "\n---\n", "64 KiB"),
        ("---\n- a\n---\n", "not a mapping"),
        ("---\n!!map\na: 1\n---\n", "belong to no key"),
        ("---\na: 1\n...\n---\n", "belong to no key"),
    ],
)
def test_headers_that_cannot_be_edited_in_place_are_refused(text: str, reason: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        emit(text, set={"z": 1})
    assert [i.code for i in caught.value.issues] == ["V01"]
    assert reason in caught.value.message


@pytest.mark.parametrize(
    ("changes", "unset"),
    [
        ({1: "x"}, ()),
        ({"a": {None: 1}}, ()),
        ({"a": float("inf")}, ()),
        ({"a": float("nan")}, ()),
        ({"a": {"b": [float("-inf")]}}, ()),
        ({"a": object()}, ()),
        ({"a": b"bytes"}, ()),
        ({"a": {1: 2}}, ()),
        ({"a": "\ud800"}, ()),
        ({"a": 1}, ("a",)),
        ({"k" * 2000: 1}, ()),
    ],
)
def test_bad_params_are_refused(changes: dict[Any, Any], unset: tuple[str, ...]) -> None:
    with pytest.raises(InvalidParams) as caught:
        emit("---\na: 0\n---\n", set=changes, unset=unset)
    assert caught.value.issues[0].code == "V02"


def test_growing_past_the_size_limit_is_refused() -> None:
    with pytest.raises(LimitExceeded):
        emit("---\na: 1\n---\n", set={"big": "x" * MAX_HEADER_BYTES})


# -- real-looking notes ------------------------------------------------------------------------


def test_generated_vault_notes_parse_and_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "fm_corpus"
    subprocess.run(
        [sys.executable, str(generator()), str(out), "--notes", "300", "--seed", "3"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    notes = sorted((out / "notes").rglob("*.md"))
    assert len(notes) == 300
    for path in notes:
        text = path.read_bytes().decode("utf-8")
        parsed = parse(text)
        assert parsed.issues == [], path
        assert parsed.data and "title" in parsed.data, path
        assert emit(text) == text
        assert emit(text, set=parsed.data) == text
        changed = emit(text, set={"title": "Renamed"}, unset=["description"])
        expected = {k: v for k, v in parsed.data.items() if k != "description"} | {"title": "Renamed"}
        assert parse(changed).data == expected
        lines = header_lines(text)
        kept = [line for line in lines if not line.startswith(("title:", "description:"))]
        assert [line for line in header_lines(changed) if not line.startswith("title:")] == kept
        assert changed[parse(changed).body_offset :] == text[parsed.body_offset :]
