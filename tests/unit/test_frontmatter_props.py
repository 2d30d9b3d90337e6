"""Properties of frontmatter reading and editing over generated notes.

- the fast path (libyaml) and the careful path (ruamel.yaml round-trip) give the same data;
- parse never raises, whatever the text;
- emit with no changes is the identity;
- set/unset read back as the expected data and keep every other key's bytes;
- emit on any header either edits it correctly or refuses it, never anything else.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vaultd.errors import ValidationFailed
from vaultd.vault.frontmatter import body_start, find_header, parse
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.frontmatter_yaml import _SUSPECT, load_careful, load_fast

SLOW = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- generated headers: each entry is one key and its value, in one of many YAML styles -----------

WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,6}", fullmatch=True)
PLAIN_KEY = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
KEY = st.one_of(
    PLAIN_KEY,
    PLAIN_KEY.map(lambda k: f'"{k} q"'),
    PLAIN_KEY.map(lambda k: f"'{k} s'"),
    st.sampled_from(["名前", "émoji", "2024", "01", "k.v", "a b"]),
)
SCALAR = st.one_of(
    st.lists(WORD, min_size=1, max_size=4).map(lambda ws: " " + " ".join(ws)),
    st.sampled_from(
        [
            "",
            " ~",
            " null",
            " true",
            " False",
            " yes",
            " off",
            " 42",
            " 012",
            " 0o17",
            " 0x1F",
            " -1_000",
            " 1.5",
            " 1e3",
            " .5",
            " -.inf",
            " .NaN",
            " 2020-01-27",
            " 2020-1-2",
            " 2023-02-30",
            " 2001-12-14t21:59:43.10-05:00",
            " 2001-12-14 21:59:43.10",
            " 1:30",
            ' "double \\" \\u00e9 \\t quoted"',
            " 'single ''quoted'''",
            " ''",
            ' ""',
            " 한국어 노트",
            " 😀 emoji",
            " hello!",
            " a:b",
            " =",
            " <<",
            ' "[[Wiki Link]]"',
        ]
    ),
)
ONE_LINE = st.one_of(
    SCALAR,
    st.sampled_from([" []", " {}", " [a, 'b', 3]", " {x: 1, y: [2, z]}", ' ["[[Note]]", x]']),
)
MULTI_LINE = st.sampled_from(
    [
        "\n  - a\n  - b",
        "\n- a\n- 'b c'",
        "\n  - x: 1\n    y: [2]\n  - - nested",
        "\n  sub: 1\n  other:\n    - z\n  # inside comment",
        " |\n  line1\n  line2",
        " |+\n  keep\n\n",
        " |-\n  strip\n",
        " >-\n  folded\n  text",
        " >\n  a\n\n  b\n",
        ' "multi\n  line"',
        " plain\n  continued",
    ]
)
BETWEEN = st.sampled_from(["", "", "", "\n", "# comment\n", "\n# section\n"])
EOL_COMMENT = st.sampled_from(["", "", "  # eol", " #x"])


@st.composite
def headers(draw: st.DrawFn) -> str:
    lines: list[str] = [draw(BETWEEN)]
    for key in draw(st.lists(KEY, max_size=6, unique=True)):
        if draw(st.booleans()):
            lines.append(f"{key}:{draw(ONE_LINE)}{draw(EOL_COMMENT)}\n")
        else:
            lines.append(f"{key}:{draw(MULTI_LINE).rstrip(chr(10))}\n")
        lines.append(draw(BETWEEN))
    return "".join(lines)


@st.composite
def notes(draw: st.DrawFn) -> str:
    header = draw(headers())
    body = draw(st.sampled_from(["", "body\n", "# Title\n\ntext", "---\nnot: header\n---\n", "x"]))
    fence = draw(st.sampled_from(["---", "---  "]))
    text = f"{fence}\n{header}---\n{body}"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


def readable(text: str) -> dict[str, Any]:
    parsed = parse(text)
    assume(parsed.issues == [] and parsed.data is not None)
    assert parsed.data is not None
    return parsed.data


# Strings YAML might read as something else, plus anything at all.
TRICKY_TEXT = (
    st.sampled_from(
        [
            "<<",
            "=",
            "yes",
            "true",
            "null",
            "~",
            "",
            " ",
            "\n",
            "2020-01-01",
            "2020-01-01T10:00:00",
            "1e3",
            "0o12",
        ]
        + [
            "- x",
            "#",
            "a: b",
            "a #b",
            "[[Link]]",
            "{x}",
            "'q'",
            '"q"',
            ".inf",
            "...",
            "---",
            "é\u2028\x85\ufeff",
        ]
    )
    | st.text()
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=8,
)


# -- the two read paths agree --------------------------------------------------------------------

YAML_BITS = st.sampled_from(
    [*"ab01 :-#\n\"'[]{},.|>?\\_+&*!%@`~=\r\t", "<<", "&a ", "*a", "!!str ", "  ", "\n  ", ": ", "- "]
    + ["\r\n", "true", "2020-01-01", "0x", "\\u00e9", "\\/", "\u2028", "\x85", "\ufeff", "é"]
)
YAML_SOUP = st.lists(YAML_BITS, max_size=40).map("".join)


def assert_paths_agree(header: str) -> None:
    if _SUSPECT.search(header) is not None:
        return  # the fast path is never tried on such text
    try:
        fast = load_fast(header)
    except Exception:  # noqa: BLE001 - the careful path decides these; nothing to compare
        return
    careful, issues = load_careful(header)
    assert issues == []
    assert as_json(fast) == as_json(careful)


@SLOW
@given(headers())
def test_fast_and_careful_paths_agree_on_generated_headers(header: str) -> None:
    assert_paths_agree(header)
    assert_paths_agree(header.replace("\n", "\r\n"))


@SLOW
@given(YAML_SOUP)
def test_fast_and_careful_paths_agree_on_yaml_soup(header: str) -> None:
    assert_paths_agree(header)


# -- parse never raises --------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_parse_never_raises_on_any_text(text: str) -> None:
    for candidate in (text, f"---\n{text}\n---\n", f"\ufeff---\n{text}\n", f"---\r\n{text}\r\n---\r\nbody"):
        result = parse(candidate)
        assert result.data is None or isinstance(result.data, dict)
        assert 0 <= result.body_offset <= len(candidate)
        assert body_start(candidate) == (result.body_offset, result.body_line)  # the same body, without the YAML


@SLOW
@given(YAML_SOUP)
def test_parse_never_raises_on_yaml_soup(header: str) -> None:
    result = parse(f"---\n{header}\n---\nbody")
    assert result.present
    assert (result.data is None) == bool(result.issues)


# -- emit ---------------------------------------------------------------------------------------


@SLOW
@given(notes())
def test_emit_without_changes_is_identity(text: str) -> None:
    data = readable(text)
    assert emit(text) == text
    assert emit(text, set=data) == text
    assert emit(text, unset=["not-there"]) == text


@SLOW
@given(notes(), st.data())
def test_set_and_unset_read_back_and_keep_other_keys_bytes(text: str, draw: st.DataObject) -> None:
    data = readable(text)
    keys = list(data)
    changed = draw.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))
    removed = [k for k in draw.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([])) if k not in changed]
    added = draw.draw(st.dictionaries(TRICKY_TEXT, JSON, max_size=2))
    changes = {k: draw.draw(JSON) for k in changed} | {k: v for k, v in added.items() if k not in data}
    result = emit(text, set=changes, unset=removed)

    expected = {k: v for k, v in data.items() if k not in removed} | changes
    again = parse(result)
    assert again.issues == []
    assert as_json(again.data) == as_json(expected)
    assert result[again.body_offset :] == text[parse(text).body_offset :]
    # Every key that was neither changed nor removed keeps its exact bytes, in order.
    untouched = [k for k in keys if k not in changes and k not in removed]
    assert spans_of(result, untouched) == spans_of(text, untouched)


def spans_of(text: str, keys: list[str]) -> list[str]:
    """Each key's own text, found by cutting the header where a line starts a key at its column.

    Deliberately simpler than the module's event-based spans: it looks for each key's own line
    and takes the lines up to the next line at the same column that is not a comment.
    """
    bounds = find_header(text)
    assert bounds is not None
    lines = text[bounds.start : bounds.end].splitlines(keepends=True)
    starts = [n for n, line in enumerate(lines) if line[:1] not in " #\r\n-" and ":" in line]
    out: list[str] = []
    for key in keys:
        matches = [n for n in starts if key_of(lines[n]) == key]
        assert len(matches) == 1, (key, lines)
        n = matches[0]
        later = [m for m in starts if m > n]
        stop = later[0] if later else len(lines)
        block = lines[n:stop]
        while block and block[-1][:1] in "\r\n#":  # blank lines and comments between keys
            block.pop()
        out.append("".join(block))
    return out


def key_of(line: str) -> str:
    head = line.split(":", 1)[0]
    data = parse(f"---\n{head}: x\n---\n").data
    return next(iter(data)) if data else head


@SLOW
@given(YAML_SOUP, JSON)
def test_emit_either_edits_correctly_or_refuses(header: str, value: Any) -> None:
    text = f"---\n{header}\n---\nbody"
    try:
        result = emit(text, set={"zz": value})
    except ValidationFailed:
        return
    again = parse(result)
    before = parse(text).data
    assert before is not None
    assert as_json(again.data) == as_json({**before, "zz": value})
    assert result.endswith("\n---\nbody")
