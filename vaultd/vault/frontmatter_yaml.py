"""A note's header read as YAML, when it is not flat (:mod:`.frontmatter_flat` reads those).

Imported at the first such header (:func:`.frontmatter.load_header`): it loads libyaml and
ruamel.yaml, which a vault of flat headers, or a warm start that parses no note, never needs.

Reading has two paths that must agree on the data:

- The **fast path** lets libyaml (PyYAML's ``CParser``) compose the node tree in C and walks it in
  Python, resolving plain scalars with ruamel.yaml's own YAML 1.2 core rules
  (:mod:`.yaml_scalars`: only ``true`` and ``false`` are booleans, ``012`` is the integer 12). It takes about 50 µs
  for a ten-key header (ruamel.yaml takes about 2 ms); the index parses up to 100,000 notes.
- The **careful path** is ruamel.yaml's round-trip loader, the reference view. The fast path hands
  over whenever it meets anything unusual: a possible anchor, alias or tag (a cheap regex over the
  text), a merge key, a duplicate or non-string key, a nesting deeper than :data:`MAX_DEPTH`, or
  any error. So every issue is decided in one place, and the data the fast path returns is the
  data the careful path would give (a hypothesis test holds the two paths together).

Both paths map values the same JSON-compatible way: dates and times become ISO strings (a date
that does not exist, like ``2023-02-30``, stays the string written), non-finite floats become
``".inf"``, ``"-.inf"`` or ``".nan"``, and a non-string key becomes its JSON spelling (``1`` ->
``"1"``, ``true`` -> ``"true"``, ``null`` -> ``"null"``).

Anchors and aliases are refused (N04) and never expanded, so an alias bomb costs one linear scan.
Before ruamel.yaml reads anything, libyaml's event stream is screened for depth and size
(:mod:`.yaml_bounds`): ruamel.yaml's scanner is quadratic in nesting, and a header nested 8,000
levels deep would cost it half a minute at every parse.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Final

import yaml  # type: ignore[import-untyped]
from ruamel.yaml import YAML
from ruamel.yaml.comments import TaggedScalar
from ruamel.yaml.constructor import DuplicateKeyError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, MappingStartEvent, NodeEvent
from ruamel.yaml.scalarbool import ScalarBoolean

from protocol.issue_codes import IssueCode
from protocol.parse_limits import MAX_YAML_DEPTH, MAX_YAML_NODES
from vaultd.vault.model import NoteIssue
from vaultd.vault.yaml_bounds import YamlRefused, screen
from vaultd.vault.yaml_scalars import float_value, key_string, resolve_plain

MAX_DEPTH: Final = MAX_YAML_DEPTH  #: deeper nesting is refused (N01); real properties nest two or three levels

# Anchors (&), aliases (*) and tags (!) can only start a node: at a line start or after an
# indicator. A plain scalar such as "Tom & Jerry" does not match; a rare false hit only costs the
# careful path. A lone \r also breaks lines, so it counts as a line start.
# Where libyaml and ruamel.yaml read text differently, the careful path decides too: ruamel.yaml
# rejects a tab inside a plain scalar ("a: x<TAB>y") and a comment glued to a block scalar header
# ("|#"), reads an inner BOM differently, and (as YAML 1.2 says) does not break lines at NEL, LS
# or PS, which libyaml does.
_SUSPECT = re.compile(r"(?:^|[\[{,:?\-\r])[ \t]*[&*!]|[\t\ufeff\x85\u2028\u2029]|[|>][-+0-9]*#", re.MULTILINE)
_ODD = re.compile(r"[&*!|>\t\ufeff\x85\u2028\u2029]")  # a quick scan: without these, _SUSPECT cannot match

_STR_TAG: Final = "tag:yaml.org,2002:str"
_CORE_TAGS: Final = frozenset(
    {"!"} | {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")}
)
# TaggedScalars ruamel keeps for these tags are plain strings to us (``a: =``, ``a: <<``).
_STRING_TAGS: Final = frozenset({_STR_TAG, "tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"})


class _Fallback(Exception):
    """The fast path met something it leaves to the careful path."""


class _Refused(Exception):
    """The careful path's conversion found data vaultd does not read."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def load_yaml(header: str, first_line: int = 1) -> tuple[dict[str, Any] | None, list[NoteIssue]]:
    """Header YAML as data: the fast path, else the careful one. Never raises.

    Args:
        header: the YAML between the fences.
        first_line: the file line of the header's first line, for issue line numbers.
    """
    if _CParser is None or (_ODD.search(header) is not None and _SUSPECT.search(header) is not None):
        return load_careful(header, first_line)
    try:
        return load_fast(header), []
    # Anything the fast path cannot vouch for, error or not, is the careful path's to judge.
    except Exception:  # noqa: BLE001
        return load_careful(header, first_line)


# -- the fast path -----------------------------------------------------------------------------

_PLAIN, _QUOTED, _SEQ, _MAP = "?plain", "?quoted", "?seq", "?map"

_CParser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)


class _Composer(_CParser or object):  # type: ignore[misc]
    """libyaml's composer with resolution deferred: it only says plain or quoted, seq or map.

    The walk resolves plain scalars itself (YAML 1.2 core); libyaml's composer calls these three
    methods. Without libyaml (a PyYAML built without it) every header takes the careful path.
    """

    def descend_resolver(self, *args: Any) -> None:
        pass

    def ascend_resolver(self, *args: Any) -> None:
        pass

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _QUOTED
        return _SEQ if kind is yaml.SequenceNode else _MAP


def load_fast(header: str) -> dict[str, Any]:
    """Data via libyaml; raises on anything the careful path must judge (callers catch).

    Callers first rule out what :data:`_SUSPECT` matches; this does not look for it again.
    """
    composer = _Composer(header)
    try:
        root = composer.get_single_node()
    finally:
        composer.dispose()
    if root is None:
        return {}
    if root.tag != _MAP:
        raise _Fallback("not a mapping")
    return _walk_map(root, 1, set())


def _walk(node: Any, depth: int, seen: set[int]) -> Any:
    tag = node.tag
    if tag == _PLAIN:
        return resolve_plain(node.value)
    if tag == _QUOTED:
        return node.value
    if depth >= MAX_DEPTH or id(node) in seen:  # a repeated node is an alias: never expand it
        raise _Fallback("deep or aliased")
    seen.add(id(node))
    if tag == _MAP:
        return _walk_map(node, depth + 1, seen)
    if tag == _SEQ:
        return [_walk(item, depth + 1, seen) for item in node.value]
    raise _Fallback(f"explicit tag {tag}")


def _walk_map(node: Any, depth: int, seen: set[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    typed: list[Any] = []  # non-string keys, compared as ruamel compares them (1 == 1.0 == true)
    for key_node, value_node in node.value:
        tag = key_node.tag
        if tag == _PLAIN and key_node.value == "<<":
            raise _Fallback("merge key")
        if tag == _PLAIN:
            raw = resolve_plain(key_node.value)
        elif tag == _QUOTED:
            raw = key_node.value
        else:
            raise _Fallback("complex key")
        if not isinstance(raw, str):
            if any(raw == other for other in typed):
                raise _Fallback("duplicate key")
            typed.append(raw)
        key = key_string(raw)
        if key in out:
            raise _Fallback("duplicate key")
        out[key] = _walk(value_node, depth, seen)
    return out


# -- the careful path --------------------------------------------------------------------------


class _Constructor(RoundTripConstructor):
    """ruamel.yaml's round-trip constructor, except that an impossible date stays a string."""

    def construct_yaml_timestamp(self, node: Any, values: Any = None) -> Any:
        try:
            return super().construct_yaml_timestamp(node, values)
        except ValueError:
            return node.value


_Constructor.add_constructor("tag:yaml.org,2002:timestamp", _Constructor.construct_yaml_timestamp)


def load_careful(header: str, first_line: int = 1) -> tuple[dict[str, Any] | None, list[NoteIssue]]:
    """Data via ruamel.yaml round-trip; the reference for both data and issues. Never raises."""
    try:
        screen(header, aliases=False)
    except YamlRefused as exc:
        line = None if exc.line is None else first_line + exc.line
        return None, [NoteIssue(IssueCode.N04 if exc.kind == "alias" else IssueCode.N01, f"the frontmatter {exc}", line)]
    loader = YAML(typ="rt")  # not shared: a YAML instance holds per-load state
    loader.Constructor = _Constructor
    root: NodeEvent | None = None
    depth = 0
    nodes = 0
    try:
        # Text libyaml could not screen is bounded here, event by event, before ruamel.yaml builds it.
        for event in loader.parse(header):
            if isinstance(event, CollectionEndEvent):
                depth -= 1
            if not isinstance(event, NodeEvent):
                continue
            nodes += 1
            if isinstance(event, CollectionStartEvent):
                depth += 1
            if depth > MAX_DEPTH or nodes > MAX_YAML_NODES:
                what = f"nests deeper than {MAX_DEPTH} levels" if depth > MAX_DEPTH else f"holds more than {MAX_YAML_NODES} values"
                return None, [NoteIssue(IssueCode.N01, f"the frontmatter {what}", first_line + event.start_mark.line)]
            if root is None:
                root = event
            if isinstance(event, AliasEvent) or event.anchor is not None:
                line = first_line + event.start_mark.line
                return None, [NoteIssue(IssueCode.N04, "the frontmatter uses YAML anchors or aliases", line)]
            tag = getattr(event, "tag", None)
            if tag is not None and str(tag) not in _CORE_TAGS:
                line = first_line + event.start_mark.line
                return None, [NoteIssue(IssueCode.N01, f"the frontmatter uses the YAML tag {tag}", line)]
        if root is None:
            return {}, []
        if not isinstance(root, MappingStartEvent):
            return None, [NoteIssue(IssueCode.N02, "the frontmatter is not a mapping of keys to values", first_line)]
        doc = loader.load(header)
        return _plain_data(doc, 0), []
    except DuplicateKeyError as exc:
        return None, [NoteIssue(IssueCode.N03, "the frontmatter repeats a key", _line(exc, first_line))]
    except _Refused as exc:
        return None, [NoteIssue(exc.code, str(exc), first_line)]
    except MarkedYAMLError as exc:
        problem = exc.problem or "it is not valid YAML"
        return None, [NoteIssue(IssueCode.N01, f"the frontmatter is malformed: {problem}", _line(exc, first_line))]
    # ruamel.yaml raises more than YAMLError on odd input (an IndexError for "-_", a
    # RecursionError for deep nesting); parse must never raise, so all of them are N01.
    except Exception as exc:  # noqa: BLE001
        return None, [NoteIssue(IssueCode.N01, f"the frontmatter is malformed ({type(exc).__name__})", first_line)]


def _line(exc: MarkedYAMLError, first_line: int) -> int | None:
    mark = exc.problem_mark or exc.context_mark
    return None if mark is None else first_line + mark.line


def _plain_data(value: Any, depth: int) -> Any:
    """ruamel.yaml's round-trip objects as plain JSON-compatible values."""
    if depth > MAX_DEPTH:
        raise _Refused(IssueCode.N01, f"the frontmatter nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):  # also ruamel's ScalarInt, HexInt and ScalarBoolean
        return bool(value) if isinstance(value, ScalarBoolean) else int(value)
    if isinstance(value, float):
        return float_value(float(value))
    if isinstance(value, datetime.date):  # datetime is a date too; both know isoformat
        return value.isoformat()
    if isinstance(value, TaggedScalar) and str(value.tag) in _STRING_TAGS:
        return str(value.value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key is not None and not isinstance(key, (str, int, float, datetime.date, TaggedScalar)):
                raise _Refused(IssueCode.N02, "the frontmatter has a key that is not a plain value")
            name = key_string(_plain_data(key, depth + 1))
            if name in out:
                raise _Refused(IssueCode.N03, f"the frontmatter repeats the key {name!r}")
            out[name] = _plain_data(item, depth + 1)
        return out
    if isinstance(value, list):
        return [_plain_data(item, depth + 1) for item in value]
    raise _Refused(IssueCode.N01, f"the frontmatter holds a value vaultd does not read ({type(value).__name__})")
