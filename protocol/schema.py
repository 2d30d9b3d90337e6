"""JSON Schemas of every method, generated from the method table."""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.methods.common import PERSON_ONLY

if TYPE_CHECKING:
    from collections.abc import Iterable

    from protocol.table import MethodSpec

_DEFS_PREFIX = "#/$defs/"


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
    from protocol.table import METHODS  # the whole table: a command's help needs only its own Structs

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


_PERSON_ONLY: dict[type, tuple[str, ...]] = {}


def person_only_fields(params: type) -> tuple[str, ...]:
    """The fields of a params Struct only a person's call may give: those whose type's Meta says
    so (:data:`protocol.methods.common.PERSON_ONLY`), read from the type hints as
    :func:`field_help` reads descriptions (once per Struct: the shim asks at every call)."""
    found = _PERSON_ONLY.get(params)
    if found is None:
        marked = (name for name, tp in _hints(params).items() if any((m.extra or {}).get(PERSON_ONLY) for m in _metas(tp)))
        found = _PERSON_ONLY[params] = tuple(marked)
    return found


_REST_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_REST_LITERAL = re.compile(r"``([^`]*)``")
_NULL = {"type": "null"}
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)\.\s+(?=[A-Z(])")


def plain_text(text: str) -> str:
    """``text`` without reST markup or docstring line breaks, as a model reads it best: ``x`` and
    :class:`x` become x, and every run of whitespace one space."""
    text = _REST_ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _REST_LITERAL.sub(r"\1", text)
    return " ".join(text.split())


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` in plain text: what a model needs of a description, the rest
    (bounds the daemon enforces, edge cases, how the CLI differs) staying in the reference docs."""
    text = plain_text(text)
    match = _SENTENCE_END.search(text)
    return text[: match.start() + 1] if match else text


_ASIDE = re.compile(r"\s*\([^()]*\)")
_CLAUSE_END = re.compile(r"[;:]\s")
GIST_MIN_WORDS = 4  #: a shorter head ("Counts", "The claim ledger") is only a label for what its colon lists


def gist(text: str) -> str:
    """What a tool does, in as few words as say it: the first sentence without its asides in
    brackets, up to its first colon or semicolon when the words before it say what the tool does
    (at least :data:`GIST_MIN_WORDS`). A tool list is read whole in every session, so the details
    a call's arguments or its answer already show (what a result holds, what is refused, the
    two-step flow) are left to them and to the reference docs.

    A sentence that would lose everything keeps its first sentence.
    """
    sentence = first_sentence(text)
    bare = sentence
    while (unwrapped := _ASIDE.sub("", bare)) != bare:  # innermost brackets first
        bare = unwrapped
    for match in _CLAUSE_END.finditer(bare):
        if len(bare[: match.start()].split()) >= GIST_MIN_WORDS:
            bare = bare[: match.start()]
            break
    bare = bare.strip().rstrip(".,")
    return f"{bare}." if bare else sentence


def compact_schema(tp: type, *, hidden: Iterable[str] = ()) -> dict[str, Any]:
    """The input schema of a params Struct as a model should pay for it.

    Self-contained (the root inlined, ``type: object``), and every byte that tells a model nothing
    is gone:

    - an optional field's ``anyOf [X, null]`` with ``default: null`` is X (leaving it out is how
      a model says null), and a default of false, "", [] or {} goes (leaving it out means that);
    - titles go (a class name such as ``Proposed[NoDetail]``), a description is its first
      sentence in plain text, a list's items lose a description the list already gives, an
      enum loses one that only lists its members, and the root has none (the params Struct's
      docstring; the tool's description says it);
    - a definition used once is inlined where it is used;
    - bounds are left to the daemon, which refuses a value past them naming the field and the
      bound: a string's pattern and lengths (and a size bound in its description, "; at most
      64 KiB as UTF-8"), a number's minimum and maximum, a list's or an object's sizes; and so
      is a number's default (a call that leaves it out gets the usual
      amount, and the answer shows how many it holds);
    - no ``additionalProperties: false``: the daemon refuses an unknown argument naming it, and
      the keyword tells a model nothing the property list does not;
    - the ``hidden`` fields (settings for another client, such as the CLI's ``log``) are not offered;
    - an enum of more than :data:`MAX_SHOWN_ENUM` strings is a string its description explains
      (``a rule code, e.g. L03``): the daemon refuses any other value, naming the ones it takes,
      and a list of 21 rule codes costs every session more than it helps one call.

    What the daemon checks is unchanged: it decodes the arguments against the Struct itself.
    """
    schema = msgspec.json.schema(tp)
    defs: dict[str, Any] = schema.pop("$defs", {})
    ref = schema.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        schema = {**defs.pop(ref[len(_DEFS_PREFIX) :]), **schema}  # params Structs are not recursive
    hidden_names = set(hidden)
    props = schema.get("properties") or {}
    for name in hidden_names & set(props):
        del props[name]
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r not in hidden_names]
    schema = _compact(schema)
    defs = {name: _compact(d) for name, d in defs.items()}
    schema = _inline_single_use(schema, defs)
    schema = {k: _plain_enums(v) for k, v in schema.items()}
    schema.pop("description", None)  # the params Struct's docstring: the tool's own description says it
    schema["type"] = "object"
    return schema


_STRING_CHECKS = ("pattern", "minLength", "maxLength")  #: the daemon's to enforce; a model reads the description
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "minProperties", "maxProperties")
_NUMBERS = ("integer", "number")
_NOTHING: tuple[object, ...] = (False, "", [], {})  #: defaults a model assumes of an omitted argument anyway


def _compact(node: Any) -> Any:
    if isinstance(node, list):
        return [_compact(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _compact(v) for k, v in node.items() if k != "title"}
    if isinstance(node.get("properties"), dict):  # its keys are field names: a field may be called title
        out["properties"] = {name: _compact(v) for name, v in node["properties"].items()}
    for key in (*_STRING_CHECKS, *_BOUNDS):  # a dict's keys are strings with no type of their own
        out.pop(key, None)
    if out.get("propertyNames") == {}:
        del out["propertyNames"]
    if "default" in out and any(out["default"] == n and type(out["default"]) is type(n) for n in _NOTHING):
        del out["default"]
    if out.get("type") in _NUMBERS and "default" in out:
        del out["default"]
    if out.get("required") == []:
        del out["required"]
    items = out.get("items")
    if "description" in out and isinstance(items, dict) and "description" in items:
        del items["description"]  # the list's own description says what its items are
    if out.get("additionalProperties") is False:
        del out["additionalProperties"]  # the daemon's decode refuses unknown keys, naming them
    options = out.get("anyOf")
    if isinstance(options, list) and _NULL in options and out.get("default", ...) is None:
        rest = [o for o in options if o != _NULL]
        del out["default"]
        del out["anyOf"]
        inner = rest[0] if len(rest) == 1 else {"anyOf": rest}
        merged = {**inner, **out}  # the field's own description wins over its type's
        out = merged
    if isinstance(out.get("description"), str):
        out["description"] = _BYTE_BOUND.sub("", first_sentence(out["description"]))
        if _ONLY_BOUND.fullmatch(out["description"]):
            del out["description"]  # "At most 256 KiB as UTF-8.": the daemon's bound, and nothing else
        if isinstance(out.get("enum"), list) and _only_names(out["description"], out["enum"]):
            del out["description"]  # "low, medium or high.": the enum says it
    if "description" in out:  # description first, as people write schemas
        out = {"description": out.pop("description"), **out}
    return out


MAX_SHOWN_ENUM = 16  #: a longer enum of strings is left to the field's description and the daemon


def _plain_enums(node: Any) -> Any:
    """Once definitions are inlined (a field's description and its type's own meet): an enum a
    description only lists loses the description, a long enum of strings that has a description
    becomes a string, and a list's items lose a description the list already gives."""
    if isinstance(node, list):
        return [_plain_enums(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _plain_enums(v) for k, v in node.items()}
    items = out.get("items")
    if "description" in out and isinstance(items, dict) and "description" in items:
        out["items"] = {k: v for k, v in items.items() if k != "description"}  # the list says what its items are
    members = out.get("enum")
    text = out.get("description")
    if isinstance(members, list) and isinstance(text, str):
        if _only_names(text, members):
            del out["description"]
        elif len(members) > MAX_SHOWN_ENUM and all(isinstance(m, str) for m in members):
            del out["enum"]
            out["type"] = "string"
    return out


_BYTE_BOUND = re.compile(r"; at most \d+ [KM]iB[^;.]*")  #: a size bound in words: the daemon's, like maxLength
_ONLY_BOUND = re.compile(r"At most \d+ [KM]iB[^;.]*\.")  #: a description that is only such a bound
_LIST_WORDS = re.compile(r",\s*|\s+or\s+|\s+and\s+|\.$")


def _only_names(description: str, members: list[Any]) -> bool:
    """Whether ``description`` only lists the enum's members ("low, medium or high.")."""
    words = {w for w in _LIST_WORDS.split(description) if w}
    return words == {str(m) for m in members}


def _refs(node: Any, counts: dict[str, int]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            name = ref[len(_DEFS_PREFIX) :]
            counts[name] = counts.get(name, 0) + 1
        for value in node.values():
            _refs(value, counts)
    elif isinstance(node, list):
        for value in node:
            _refs(value, counts)


def _inline_single_use(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Inline every definition referred to once (and not by itself); drop the unreferenced ones."""
    while True:
        counts: dict[str, int] = {}
        _refs(schema, counts)
        for d in defs.values():
            _refs(d, counts)
        used = {n: defs[n] for n in defs if counts.get(n)}
        once = [n for n in used if counts[n] == 1 and not _refers_to(used[n], n)]
        if not once:
            break
        name = once[0]
        body = used.pop(name)
        schema = _replace_ref(schema, name, body)
        defs = {n: _replace_ref(d, name, body) for n, d in used.items()}
    if used:
        schema["$defs"] = used
    return schema


def _refers_to(node: Any, name: str) -> bool:
    counts: dict[str, int] = {}
    _refs(node, counts)
    return name in counts


def _replace_ref(node: Any, name: str, body: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_replace_ref(n, name, body) for n in node]
    if not isinstance(node, dict):
        return node
    if node.get("$ref") == _DEFS_PREFIX + name:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**body, **rest}
    return {k: _replace_ref(v, name, body) for k, v in node.items()}
