"""Hypothesis strategies for hostile traffic: raw frames, and method params from their JSON Schemas.

Params are drawn from each method's params Struct schema (``protocol.schema``), so a new method or
field is fuzzed without touching this file. Each draw is a mostly well-shaped object with hostile
values mixed in: wrong types, huge and odd Unicode strings, NaN and infinities, deep nesting and
unknown keys. Values that JSON cannot carry (NaN, nesting deeper than the encoder recurses) travel
as placeholders that :func:`encode` splices into the raw frame.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from protocol.schema import method_schema
from protocol.table import METHODS

#: never fuzzed: it would stop the daemon under test (its refusal paths are covered elsewhere)
EXCLUDED = {"daemon.stop"}
FUZZED = sorted(name for name in METHODS if name not in EXCLUDED)


class Raw:
    """A JSON token spliced into the frame as is (NaN, Infinity, 100k nested brackets)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:20]!r}{'...' if len(self.text) > 20 else ''})"


def encode(message: Any) -> bytes:
    """JSON-encode with :class:`Raw` placeholders replaced by their raw text; one frame with newline."""
    raws: list[str] = []

    def default(o: Any) -> Any:
        if isinstance(o, Raw):
            raws.append(o.text)
            return f"\x00RAW{len(raws) - 1}\x00"
        raise TypeError(type(o))

    text = json.dumps(message, default=default, ensure_ascii=False)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00RAW{i}\x00"), raw, 1)
    return text.encode("utf-8", "surrogatepass") + b"\n"


_odd_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
    st.sampled_from(
        [
            "",
            " ",
            "..",
            "../../etc/passwd",
            "/etc/passwd",
            "a/../../b",
            "C:\\x",
            "\u0000",
            "\ud800",
            "e\u0301",
            "\u00e9",
            "\u202e",
            "\ufeff",
            "🙂" * 30,
            "a" * 255,
            ".vaultd/x",
            ".git/config",
            "%2e%2e/x",
            "~/x",
            "\\..\\x",
            "x\ny",
            "[[x]]",
            "#tag",
            "---",
        ]
    ),
)


@st.composite
def _deep(draw: st.DrawFn) -> Raw:
    depth = draw(st.sampled_from([64, 1000, 10_000, 100_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    return Raw(opener * depth + "1" + closer * depth)


hostile_values: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**200),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e999"), Raw("-0"), Raw("1E400")]),
    _odd_text,
    st.integers(min_value=1, max_value=700_000).map(lambda n: "x" * n),
    st.lists(st.integers(), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    _deep(),
)


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def shaped(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that fit the schema (roughly: patterns are sampled, not always matched)."""
    schema = _resolve(schema, defs)
    if "anyOf" in schema:
        return st.one_of([shaped(s, defs, depth) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            return st.one_of(st.from_regex(schema["pattern"], fullmatch=True), _odd_text)
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 60), 60))
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", -10), max_value=schema.get("maximum", 10**6))
    if kind == "number":
        return st.floats(allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if depth > 3:
            return st.just([])
        return st.lists(shaped(schema.get("items", {}), defs, depth + 1), max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if not props:
            return st.dictionaries(st.text(max_size=10), st.one_of(st.text(max_size=10), st.integers()), max_size=3)
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: shaped(v, defs, depth + 1) for k, v in props.items() if k in required},
            optional={k: shaped(v, defs, depth + 1) for k, v in props.items() if k not in required},
        )
    return hostile_values


@st.composite
def params_for(draw: st.DrawFn, method: str) -> Any:
    """Shaped params with zero or more fields made hostile, sometimes an unknown key, sometimes junk."""
    schema = method_schema(METHODS[method])
    params = schema["params"]
    defs = schema["$defs"]
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(hostile_values, st.lists(st.integers(), max_size=3)))
    value = draw(shaped(params, defs))
    if not isinstance(value, dict):
        return value
    props = list(_resolve(params, defs).get("properties", {}))
    for key in draw(st.lists(st.sampled_from(props), max_size=3, unique=True)) if props else []:
        value[key] = draw(hostile_values)
    if draw(st.integers(0, 4)) == 0:
        value[draw(st.text(min_size=1, max_size=12))] = draw(hostile_values)
    if method == "vault.add" and isinstance(value.get("path"), str):
        value["path"] = "/nonexistent-vaultd-fuzz/" + value["path"]  # never register a real folder like /
    return value


frames: st.SearchStrategy[bytes] = st.one_of(
    st.binary(max_size=2048),
    st.binary(max_size=64).map(lambda b: b.replace(b"\n", b"")),
    st.sampled_from(
        [
            b"{",
            b"}",
            b"[]",
            b"null",
            b"{}",
            b'{"jsonrpc":"2.0"}',
            b'{"jsonrpc":"2.0","id":1}',
            b'{"jsonrpc":"2.0","id":1,"method":"hello","params":null}',
            b"\xef\xbb\xbf{}",
            b'{"jsonrpc":"2.0","id":NaN,"method":"daemon.status"}',
            b"\xff\xfe\xfd",
            b'{"jsonrpc":"2.0","id":1,"method":"note.read","params":{"target":"\\ud800"}}',
            b"[" * 100_000,
            b'{"a":' * 50_000,
            b"\r\n",
            b"\x00" * 100,
        ]
    ),
    st.builds(
        lambda m, i: json.dumps({"jsonrpc": "2.0", "id": i, "method": m}).encode(),
        st.sampled_from(FUZZED + ["", "hello ", "note.READ", "__class__"]),
        st.one_of(st.integers(), st.text(max_size=8), st.none(), st.floats(allow_nan=False)),
    ),
)


def check_reply(reply: Any) -> str | None:
    """None when ``reply`` is a well-formed JSON-RPC result or structured error, else what is wrong."""
    if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0":
        return f"not JSON-RPC: {reply!r:.200}"
    if ("result" in reply) == ("error" in reply):
        return f"neither or both of result and error: {reply!r:.200}"
    if "error" in reply:
        err = reply["error"]
        if not isinstance(err.get("code"), int) or not isinstance(err.get("message"), str):
            return f"unstructured error: {err!r:.200}"
        data = err.get("data")
        if data is not None and data.get("code") == "INTERNAL":
            return f"internal error: {err!r:.300}"
    return None
