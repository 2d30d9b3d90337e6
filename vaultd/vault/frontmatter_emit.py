"""Edit a note's frontmatter losslessly: only the keys a caller changes get new bytes.

Re-emitting a whole header through a YAML library, even a round-trip one, normalizes things
people care about (quoting, indentation, folded scalars, comments in odd places). So the edit is
textual. The header is parsed once more for event marks, which give every top-level key's span:
its key line through the last line of its value, plus the indented comment lines after it. Then:

- an unchanged key (including one set to the value it already has) keeps its span byte for byte;
- a changed key's span is replaced by freshly emitted YAML under the key as written (so a quoted
  key stays quoted): block style, plain scalars where they read back the same, double quotes
  otherwise, lists as ``- item`` lines. The span's own comments (end of line, or indented after
  the value) go with the old value;
- an unset key's span goes, and so do the blank lines right after it (so a ``|+`` value above it
  keeps its trailing newlines);
- a new key is appended at the end of the header;
- the other lines between spans (blank lines, comments above a key) are kept as they are.

The BOM, the fences, the body and every untouched line keep their bytes; new lines use the
header's own line ending. A header this cannot account for line by line (a flow mapping, merge
keys, anchors, explicit ``?`` keys, stray content) is refused, never canonicalized. As a last
guard the result is parsed again and must give exactly the expected data and the same body.
A call with nothing to set or unset returns the text untouched, even when its header is broken.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import yaml  # type: ignore[import-untyped]
from ruamel.yaml.resolver import implicit_resolvers

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import Internal, InvalidParams, LimitExceeded, ValidationFailed
from vaultd.vault.frontmatter import MAX_HEADER_BYTES, find_header, parse
from vaultd.vault.yaml_scalars import key_string, resolve_plain

MAX_VALUE_DEPTH: Final = 32  #: nesting allowed in a value a caller sets
MAX_KEY_CHARS: Final = 1000  #: YAML caps an implicit key at 1024 characters
_NO_CHANGES: Final[Mapping[str, Any]] = MappingProxyType({})

_GAP = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\r?\n)*")
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)*")
_INDENTED_COMMENT = re.compile(r"([ \t]*)#[^\n]*(?:\n|\Z)")
_KEY_COLON = re.compile(r"[ \t]*:")
# Characters YAML will not take raw (C0/C1 controls, line separators, BOM, non-characters).
_UNPRINTABLE = "\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff"
_PLAIN_SHAPE = re.compile(rf"[^\s\-?:,\[\]{{}}#&*!|>'\"%@`{_UNPRINTABLE}][^{_UNPRINTABLE}]*")
_NEEDS_ESCAPE = re.compile(rf'["\\{_UNPRINTABLE}]')
_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# Strings a YAML 1.1 reader would take for a boolean, number or null get quoted too, so other
# tools read the note the way vaultd does.
_YAML11_TYPED = [
    regexp
    for versions, tag, regexp, _ in implicit_resolvers
    if (1, 1) in versions and tag.rsplit(":", 1)[-1] in {"bool", "int", "float", "null"}
]


class _KeySpan(NamedTuple):
    key: str  #: the key as data
    key_text: str  #: the key exactly as written
    start: int  #: start of the key's line in the header
    end: int  #: just past the last line that belongs to the key


def emit(text: str, set: Mapping[str, Any] = _NO_CHANGES, unset: Iterable[str] = ()) -> str:
    """Return the note with ``set`` keys written and ``unset`` keys removed; nothing else changes.

    Args:
        text: the whole note.
        set: top-level keys to write, with JSON-compatible values.
        unset: top-level keys to remove; absent ones are ignored.

    Raises:
        InvalidParams: a key is not a string, a value is not JSON-compatible or not finite, or a
            key is both set and unset (``INVALID_PARAMS``, issue ``V02``).
        ValidationFailed: the header cannot be edited in place (``VALIDATION``, issue ``V01``).
        LimitExceeded: the header would grow past 64 KiB (``LIMIT``).
        Internal: the result did not read back as intended; the note is left alone (``INTERNAL``).
    """
    changes = {_checked_key(k, "$.set"): _normalized(v, f"$.set.{k}", 0) for k, v in set.items()}
    removals = [_checked_key(k, "$.unset") for k in unset]
    if both := changes.keys() & removals:
        raise _bad_param("$.unset", f"the key {min(both)!r} is both set and unset; pick one")
    if not changes and not removals:  # nothing asked, nothing to judge: even a broken header stays
        return text
    parsed = parse(text)
    if parsed.issues:
        issue = parsed.issues[0]
        raise _unsafe(issue.message, issue.line, _ADVICE.get(issue.code, _REWRITE))
    if not parsed.present:
        return _with_new_header(text, changes) if changes else text
    assert parsed.data is not None  # present without issues always has data
    current = parsed.data
    expected = {k: v for k, v in current.items() if k not in removals}
    changed = {k: v for k, v in changes.items() if k not in current or not _same(current[k], v)}
    expected.update(changed)
    if not changed and len(expected) == len(current):
        return text
    bounds = find_header(text)
    assert bounds is not None
    header = text[bounds.start : bounds.end]
    spans, indent = _layout(header, list(current))
    pieces: list[str] = []
    pos = 0
    for span in spans:
        gap = header[pos : span.start]
        if pieces and pieces[-1] == "":  # the previous key went: drop the blank lines after it
            gap = gap[_BLANK_LINES.match(gap).end() :]  # type: ignore[union-attr]
        pieces.append(gap)
        if span.key in removals:
            pieces.append("")
        elif span.key in changed:
            pieces.append(_entry(span.key_text, changed[span.key], " " * indent, bounds.newline))
        else:
            pieces.append(header[span.start : span.end])
        pos = span.end
    tail = header[pos:]
    if pieces and pieces[-1] == "":
        tail = tail[_BLANK_LINES.match(tail).end() :]  # type: ignore[union-attr]
    pieces.append(tail)
    pieces.extend(_entry(_key_text(k), v, " " * indent, bounds.newline) for k, v in changed.items() if k not in current)
    result = text[: bounds.start] + "".join(pieces) + text[bounds.end :]
    _verify(result, expected, text[bounds.body_offset :])
    return result


def rename_key(text: str, old: str, new: str) -> str:
    """Return the note with the top-level key ``old`` renamed ``new``; its value, its place and
    every other byte are kept (only the key's own characters change). Unchanged when ``old`` is
    absent or equals ``new``.

    Raises:
        InvalidParams: INVALID_PARAMS (V02), ``new`` is already a key of the note, or too long.
        ValidationFailed: VALIDATION (V01), the header cannot be edited in place.
        Internal: INTERNAL, the result did not read back as intended; the note is left alone.
    """
    new = _checked_key(new, "$.new")
    parsed = parse(text)
    if parsed.issues:
        issue = parsed.issues[0]
        raise _unsafe(issue.message, issue.line, _ADVICE.get(issue.code, _REWRITE))
    current = parsed.data or {}
    if old not in current or old == new:
        return text
    if new in current:
        raise _bad_param("$.new", f"the note already has a key {new!r}")
    bounds = find_header(text)
    assert bounds is not None  # a note with data has a header
    header = text[bounds.start : bounds.end]
    spans, _ = _layout(header, list(current))
    span = next(s for s in spans if s.key == old)
    key_start = span.start + len(header[span.start :]) - len(header[span.start :].lstrip(" "))
    renamed = header[:key_start] + _key_text(new) + header[key_start + len(span.key_text) :]
    result = text[: bounds.start] + renamed + text[bounds.end :]
    _verify(result, {(new if k == old else k): v for k, v in current.items()}, text[bounds.body_offset :])
    return result


def _with_new_header(text: str, changes: dict[str, Any]) -> str:
    """Put a header at the top of a note that has none, after its BOM, in its line ending."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    first_break = text.find("\n")
    newline = "\r\n" if first_break > 0 and text[first_break - 1] == "\r" else "\n"
    lines = "".join(_entry(_key_text(k), v, "", newline) for k, v in changes.items())
    result = f"{bom}---{newline}{lines}---{newline}{text[len(bom) :]}"
    _verify(result, changes, text[len(bom) :])
    return result


def _verify(result: str, expected: dict[str, Any], body: str) -> None:
    """Read the result back; anything but exactly the expected data and body is a bug of ours.

    Raises:
        LimitExceeded: LIMIT, the header would grow past ``MAX_HEADER_BYTES``.
        Internal: INTERNAL, the result does not read back as the data and body meant.
    """
    header = _header_of(result)
    if len(header.encode("utf-8")) > MAX_HEADER_BYTES:
        raise LimitExceeded(f"the frontmatter would grow past {MAX_HEADER_BYTES // 1024} KiB; keep long values in the body")
    again = parse(result)
    if again.issues or again.data is None or not _same(again.data, expected) or result[again.body_offset :] != body:
        raise Internal("the frontmatter edit did not read back as intended, so the note was left unchanged")


def _header_of(result: str) -> str:
    bounds = find_header(result)
    return "" if bounds is None else result[bounds.start : bounds.end]


# -- where each top-level key lives ----------------------------------------------------------


def _layout(header: str, keys: list[str]) -> tuple[list[_KeySpan], int]:
    """Every top-level key's span, in order, and the keys' column; refuses what it cannot map.

    Raises:
        ValidationFailed: VALIDATION (V01), the header is not a block mapping whose keys map to
            their own lines.
    """
    try:  # the pure-Python parser: its marks are character offsets into ``header``
        events = list(yaml.parse(header, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise _unsafe("vaultd could not match its lines to its keys") from exc
    nodes = [e for e in events if isinstance(e, (yaml.NodeEvent, yaml.CollectionEndEvent))]
    if not nodes:
        _check_gap(header)
        return [], 0
    root = nodes[0]
    if not isinstance(root, yaml.MappingStartEvent) or root.flow_style:
        raise _unsafe("it is not a block mapping of `key: value` lines")
    spans: list[_KeySpan] = []
    indent = -1
    i = 1
    while not isinstance(nodes[i], yaml.MappingEndEvent):
        key_event = nodes[i]
        if not isinstance(key_event, yaml.ScalarEvent):
            raise _unsafe("a key is not a plain value")
        if key_event.style is None and key_event.value == "<<":
            raise _unsafe("it uses a merge key (<<)")
        i, value_end = _value_end(nodes, i + 1)
        start, stop = key_event.start_mark.index, key_event.end_mark.index
        line_start = header.rfind("\n", 0, start) + 1
        indent = start - line_start if indent < 0 else indent
        if header[line_start:start] != " " * indent or not _KEY_COLON.match(header, stop):
            raise _unsafe(f"the key {key_event.value!r} does not start its own line")
        n = len(spans)
        raw = resolve_plain(key_event.value) if key_event.style is None else key_event.value
        if n >= len(keys) or key_string(raw) != keys[n]:
            raise _unsafe("its keys could not be matched to their lines")
        end = _span_end(header, value_end, indent)
        if spans and start < spans[-1].end:
            raise _unsafe("two keys share a line")
        _check_gap(header[spans[-1].end if spans else 0 : line_start])
        spans.append(_KeySpan(keys[n], header[start:stop], line_start, end))
    if len(spans) != len(keys):
        raise _unsafe("its keys could not be matched to their lines")
    _check_gap(header[spans[-1].end if spans else 0 :])
    return spans, max(indent, 0)


def _value_end(nodes: list[Any], i: int) -> tuple[int, int]:
    """Skip one value's events from ``nodes[i]``; return the next index and where its text ends.

    Block collections end where the next token starts (maybe lines later), so only scalars,
    aliases and flow collections' closing brackets mark the end of the text.
    """
    depth, flows, end = 0, [], 0
    while True:
        event = nodes[i]
        i += 1
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            flows.append(bool(event.flow_style))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            if flows.pop():
                end = event.end_mark.index
        else:
            end = event.end_mark.index
        if depth == 0:
            return i, end


def _span_end(header: str, value_end: int, indent: int) -> int:
    """Just past the value's last line, plus the more-indented comment lines that follow it."""
    line_start = header.rfind("\n", 0, value_end) + 1
    if header[line_start:value_end].strip(" \t"):
        newline = header.find("\n", value_end)
        end = len(header) if newline < 0 else newline + 1
    else:  # a block scalar's end mark sits at (or in the indentation of) the following line
        end = line_start
    while (comment := _INDENTED_COMMENT.match(header, end)) and end < len(header):
        if len(comment.group(1)) <= indent:
            break
        end = comment.end()
    return end


def _check_gap(gap: str) -> None:
    """Text between keys must be blank lines or comments: anything else belongs to no key and would
    be lost.

    Raises:
        ValidationFailed: VALIDATION (V01), the gap holds other lines.
    """
    if _GAP.fullmatch(gap) is None:
        raise _unsafe("it holds lines that belong to no key")


# -- writing values ----------------------------------------------------------------------------


def _entry(key_text: str, value: Any, indent: str, newline: str) -> str:
    return "".join(line + newline for line in _entry_lines(key_text, value, indent))


def _entry_lines(key_text: str, value: Any, indent: str) -> list[str]:
    head = f"{indent}{key_text}:"
    if isinstance(value, dict) and value:
        return [
            head,
            *(line for k, v in value.items() for line in _entry_lines(_key_text(k), v, indent + "  ")),
        ]
    if isinstance(value, list) and value:
        return [head, *_item_lines(value, indent + "  ")]
    scalar = "" if value is None else _scalar(value)
    return [f"{head} {scalar}" if scalar else head]


def _item_lines(items: list[Any], indent: str) -> list[str]:
    lines: list[str] = []
    for item in items:
        if isinstance(item, dict) and item:
            sub = [line for k, v in item.items() for line in _entry_lines(_key_text(k), v, indent + "  ")]
        elif isinstance(item, list) and item:
            sub = _item_lines(item, indent + "  ")
        else:
            lines.append(f"{indent}- {_scalar(item)}")
            continue
        lines.append(f"{indent}- {sub[0][len(indent) + 2 :]}")
        lines.extend(sub[1:])
    return lines


def _scalar(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        # "1e+16" is a float to YAML 1.2 but a string to YAML 1.1 readers; "1.0e+16" is both.
        return text.replace("e", ".0e") if "e" in text and "." not in text else text
    if isinstance(value, str):
        return value if _plain_ok(value) and resolve_plain(value) == value else _quoted(value)
    return "[]" if isinstance(value, list) else "{}"


def _key_text(key: str) -> str:
    """A key as written: plain when it reads back as itself, else quoted; bounded in length.

    Raises:
        InvalidParams: INVALID_PARAMS (V02), the written key is over ``MAX_KEY_CHARS``.
    """
    text = key if _plain_ok(key) and resolve_plain(key) == key else _quoted(key)
    if len(text) > MAX_KEY_CHARS:
        raise _bad_param("$.set", f"the key {key[:40]!r}... is longer than {MAX_KEY_CHARS} characters")
    return text


def _plain_ok(s: str) -> bool:
    """Whether ``s`` can be written unquoted, in block context, and read back as itself."""
    return (
        _PLAIN_SHAPE.fullmatch(s) is not None
        and not s.endswith((" ", ":"))
        and ": " not in s
        and " #" not in s
        and not s.startswith("...")
        and s not in ("<<", "=")  # a merge key and YAML 1.1's value key
        and not any(regexp.match(s) for regexp in _YAML11_TYPED)
    )


def _quoted(s: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# -- checking what callers pass -----------------------------------------------------------------


def _checked_key(key: Any, path: str) -> str:
    """A params key as a string frontmatter can hold.

    Raises:
        InvalidParams: INVALID_PARAMS (V02), the key is not a string or not valid Unicode.
    """
    if not isinstance(key, str):
        raise _bad_param(path, f"frontmatter keys must be strings, not {key!r}")
    if _SURROGATE.search(key):
        raise _bad_param(path, f"the key {key!r} is not valid Unicode")
    return str(key)


def _normalized(value: Any, path: str, depth: int) -> Any:
    """The JSON-compatible value as plain builtins; refuses what frontmatter cannot hold.

    Raises:
        InvalidParams: INVALID_PARAMS (V02), the value nests too deep, is not a finite number, not
            valid Unicode, or not JSON-compatible.
    """
    if depth > MAX_VALUE_DEPTH:
        raise _bad_param(path, f"the value nests deeper than {MAX_VALUE_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _bad_param(path, "the value is not a finite number; store it as a string instead")
        return float(value)
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise _bad_param(path, "the value is not valid Unicode")
        return str(value)
    if isinstance(value, Mapping):
        return {_checked_key(k, path): _normalized(v, f"{path}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalized(v, f"{path}[{n}]", depth + 1) for n, v in enumerate(value)]
    raise _bad_param(path, f"frontmatter values must be JSON-compatible, not {type(value).__name__}")


def _same(a: Any, b: Any) -> bool:
    """Equality that tells ``1`` from ``1.0`` and ``true`` and minds key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_REWRITE: Final = (
    "Rewrite the header as a block mapping (one `key: value` per line, no flow braces, anchors, aliases or merge keys) and retry."
)
_ADVICE: Final[dict[str, str]] = {
    IssueCode.N05: "Move long values into the note's body and retry.",
    IssueCode.N06: "Add the closing '---' line (or remove the opening one) and retry.",
}


def _unsafe(reason: str, line: int | None = None, advice: str = _REWRITE) -> ValidationFailed:
    message = f"The frontmatter cannot be edited in place: {reason}. {advice}"
    return ValidationFailed(message, issues=[Issue(code=IssueCode.V01, message=message, line=line)])


def _bad_param(path: str, message: str) -> InvalidParams:
    return InvalidParams(message, issues=[Issue(code=IssueCode.V02, message=message, path=path)])


def key_spans(text: str) -> dict[str, tuple[int, int]]:
    """Each top-level key's span in ``text`` (character offsets): its key line through the last line
    of its value, as :func:`emit` replaces it; for a rule that reads how a value was written.

    Raises:
        ValidationFailed: VALIDATION (V01), the header cannot be edited in place.
    """
    parsed = parse(text)
    bounds = find_header(text)
    if parsed.issues or not parsed.data or bounds is None:
        return {}
    spans, _ = _layout(text[bounds.start : bounds.end], list(parsed.data))
    return {s.key: (bounds.start + s.start, bounds.start + s.end) for s in spans}
