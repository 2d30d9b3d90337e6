"""Strict JSON text indexed for splicing: where each member and element starts and ends, and how
to add one or take one out while every other byte stays as it was.

Why textual: ``json.dumps`` would re-lay-out a file that the user or the host formatted (indent,
key spacing, CRLF, escapes, key order), and undo could not give the same bytes back. The stdlib
decoder does all the validating and says where each value ends (``raw_decode``); this module
indexes only the objects and arrays an editor asks for, and copies the file's own spacing for
what it inserts. Every insertion is the exact text its removal takes out again, so an undo in
reverse order gives back the original bytes. JSONC (comments, trailing commas) is refused:
editing it faithfully would need a JSONC parser, and dropping a user's comments is not faithful.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl.setup.edits import Splice
from vaultctl.setup.errors import MalformedConfig

if TYPE_CHECKING:
    from pathlib import Path

_WS = re.compile(r"[ \t\n\r]*")
BOM = "\ufeff"


class _NonStandard(ValueError):
    """NaN or Infinity: Python accepts them, JSON (and the hosts) do not."""


def reject_constant(name: str) -> Any:
    raise _NonStandard(name)


_DECODER = json.JSONDecoder(parse_constant=reject_constant)


@dataclass(frozen=True, slots=True)
class Member:
    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int
    value: Any


@dataclass(frozen=True, slots=True)
class Element:
    start: int
    end: int
    value: Any


@dataclass(frozen=True, slots=True)
class Obj:
    start: int  #: index of ``{``
    end: int  #: index after ``}``
    members: tuple[Member, ...]


@dataclass(frozen=True, slots=True)
class Arr:
    start: int  #: index of ``[``
    end: int  #: index after ``]``
    elements: tuple[Element, ...]


@dataclass(frozen=True, slots=True)
class _Style:
    """How the file lays itself out, for text we insert where nothing nearby shows it."""

    pretty: bool
    unit: str
    colon: str
    item_sep: str


class JsonText:
    """One strict-JSON object document: its data, and the splices that add or remove one part.

    Raises:
        MalformedConfig: VALIDATION, not strict JSON or its top level is not an object. Messages
            give a position, never the file's text (host files hold other servers' tokens).
    """

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path
        self.base = 1 if text.startswith(BOM) else 0
        self.data = load(text[self.base :], path)
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.top = self.object_at(skip(text, self.base))

    # -- reading ---------------------------------------------------------------------------------

    def object_at(self, start: int) -> Obj:
        """Index the members of the object at ``start``; the text is known-valid JSON by now."""
        text = self.text
        members: list[Member] = []
        i = skip(text, start + 1)
        if text.startswith("}", i):
            return Obj(start, i + 1, ())
        while True:
            key, key_end = _DECODER.raw_decode(text, i)
            colon = skip(text, key_end)
            value_start = skip(text, colon + 1)
            value, value_end = _DECODER.raw_decode(text, value_start)
            members.append(Member(key, i, key_end, value_start, value_end, value))
            i = skip(text, value_end)
            if text.startswith("}", i):
                return Obj(start, i + 1, tuple(members))
            i = skip(text, i + 1)  # past the comma

    def array_at(self, start: int) -> Arr:
        """Index the elements of the array at ``start``."""
        text = self.text
        elements: list[Element] = []
        i = skip(text, start + 1)
        if text.startswith("]", i):
            return Arr(start, i + 1, ())
        while True:
            value, end = _DECODER.raw_decode(text, i)
            elements.append(Element(i, end, value))
            i = skip(text, end)
            if text.startswith("]", i):
                return Arr(start, i + 1, tuple(elements))
            i = skip(text, i + 1)

    def only(self, obj: Obj, key: str) -> Member | None:
        """The member named ``key``; a key written twice is refused (hosts read only the last)."""
        found = [m for m in obj.members if m.key == key]
        if len(found) > 1:
            raise MalformedConfig(
                f'{self.path} has "{key}" more than once in one object; hosts read only the last. '
                "Remove the duplicate and run setup again.",
                path=self.path,
            )
        return found[0] if found else None

    def reparse(self, splice: Splice) -> Any:
        """The data of the text after ``splice``. Raises ValueError when it is not strict JSON."""
        after = splice.apply(self.text)
        return json.loads(after[self.base :], parse_constant=reject_constant)

    # -- writing ---------------------------------------------------------------------------------

    def insert_member(self, obj: Obj, key: str, value: Any) -> tuple[Splice, str | None]:
        """Add ``key: value`` after the object's last member, spaced like its neighbours.

        Undo (:func:`remove_member`) takes out from the previous member's end to this value's end,
        which is exactly the inserted text. An empty object has no neighbours: its inner
        whitespace is returned so undo can put it back.
        """
        text = self.text
        if obj.members:
            last = obj.members[-1]
            if len(obj.members) >= 2:
                sep = text[obj.members[-2].value_end : last.key_start]
            else:
                sep = "," + text[obj.start + 1 : last.key_start]
            colon = _clean_colon(text[last.key_end : last.value_start])
            if "\n" in sep:
                indent = sep.rsplit("\n", 1)[1]
                rendered = self._pretty(value, indent, self._unit(obj.end, indent), colon)
            else:
                rendered = _inline(value, sep, colon)
            return Splice(last.value_end, last.value_end, sep + _dumps(key) + colon + rendered), None
        style = self._style()
        if style.pretty:
            outer = _line_indent(text, obj.start)
            indent = outer + style.unit
            rendered = self._pretty(value, indent, style.unit, style.colon)
            new = self.newline + indent + _dumps(key) + style.colon + rendered + self.newline + outer
        else:
            new = _dumps(key) + style.colon + _inline(value, style.item_sep, style.colon)
        return Splice(obj.start + 1, obj.end - 1, new), text[obj.start + 1 : obj.end - 1]

    def append_element(self, arr: Arr, value: Any) -> tuple[Splice, str | None]:
        """Add ``value`` after the array's last element, the way :meth:`insert_member` adds a member."""
        text = self.text
        style = self._style()
        if arr.elements:
            last = arr.elements[-1]
            if len(arr.elements) >= 2:
                sep = text[arr.elements[-2].end : last.start]
            else:
                sep = "," + text[arr.start + 1 : last.start]
            if "\n" in sep:
                indent = sep.rsplit("\n", 1)[1]
                rendered = self._pretty(value, indent, self._unit(arr.end, indent), style.colon)
            else:
                rendered = _inline(value, sep, style.colon)
            return Splice(last.end, last.end, sep + rendered), None
        if style.pretty:
            outer = _line_indent(text, arr.start)
            indent = outer + style.unit
            rendered = self._pretty(value, indent, style.unit, style.colon)
            new = self.newline + indent + rendered + self.newline + outer
        else:
            new = _inline(value, style.item_sep, style.colon)
        return Splice(arr.start + 1, arr.end - 1, new), text[arr.start + 1 : arr.end - 1]

    def render_member_value(self, m: Member, obj: Obj, value: Any) -> str:
        """A replacement value laid out like the member it replaces."""
        text = self.text
        line_start = text.rfind("\n", 0, m.key_start) + 1
        prefix = text[line_start : m.key_start]
        colon = _clean_colon(text[m.key_end : m.value_start])
        if line_start > 0 and prefix.strip(" \t") == "":
            return self._pretty(value, prefix, self._unit(obj.end, prefix), colon)
        if len(obj.members) >= 2:
            sep = text[obj.members[0].value_end : obj.members[1].key_start]
        else:
            sep = self._style().item_sep
        return _inline(value, sep if "\n" not in sep else ", ", colon)

    def render_element(self, el: Element, arr: Arr, value: Any) -> str:
        """A replacement element laid out like the one it replaces."""
        text = self.text
        style = self._style()
        line_start = text.rfind("\n", 0, el.start) + 1
        prefix = text[line_start : el.start]
        if line_start > 0 and prefix.strip(" \t") == "":
            return self._pretty(value, prefix, self._unit(arr.end, prefix), style.colon)
        return _inline(value, ", " if style.pretty else style.item_sep, style.colon)

    def _pretty(self, value: Any, indent: str, unit: str, colon: str) -> str:
        rendered = json.dumps(value, ensure_ascii=False, indent=unit, separators=(",", colon))
        return (self.newline + indent).join(rendered.split("\n"))

    def _unit(self, end: int, indent: str) -> str:
        """One level of indentation: an item's indent minus its container's closing bracket's."""
        closing = self.text[self.text.rfind("\n", 0, end - 1) + 1 : end - 1]
        if closing.strip(" \t") == "" and indent.startswith(closing) and len(indent) > len(closing):
            return indent[len(closing) :]
        return self._style().unit

    def _style(self) -> _Style:
        text, top = self.text, self.top
        if not top.members:
            return _Style(pretty=True, unit="  ", colon=": ", item_sep=", ")
        first = top.members[0]
        lead = text[top.start + 1 : first.key_start]
        colon = _clean_colon(text[first.key_end : first.value_start])
        if "\n" in lead:
            indent = lead.rsplit("\n", 1)[1]
            outer = _line_indent(text, top.start)
            unit = indent.removeprefix(outer)
            return _Style(pretty=True, unit=unit or "  ", colon=colon, item_sep=", ")
        item_sep = ", "
        if len(top.members) >= 2:
            item_sep = text[first.value_end : top.members[1].key_start]
        return _Style(pretty=False, unit="  ", colon=colon, item_sep=item_sep)


def remove_member(obj: Obj, m: Member, spacing: str | None) -> Splice:
    """Take a member out together with one separator, the inverse of :meth:`JsonText.insert_member`."""
    members = obj.members
    i = next(n for n, each in enumerate(members) if each.key_start == m.key_start)
    if len(members) == 1:
        return Splice(obj.start + 1, obj.end - 1, spacing or "")
    if i > 0:
        return Splice(members[i - 1].value_end, m.value_end, "")
    return Splice(m.key_start, members[1].key_start, "")


def remove_element(arr: Arr, el: Element, spacing: str | None) -> Splice:
    """Take an element out together with one separator, the inverse of :meth:`JsonText.append_element`."""
    elements = arr.elements
    i = next(n for n, each in enumerate(elements) if each.start == el.start)
    if len(elements) == 1:
        return Splice(arr.start + 1, arr.end - 1, spacing or "")
    if i > 0:
        return Splice(elements[i - 1].end, el.end, "")
    return Splice(el.start, elements[1].start, "")


def load(body: str, path: Path) -> dict[str, Any]:
    """Strictly decode a host file's text (BOM removed) that must hold one JSON object."""
    if not body.strip(" \t\r\n"):
        raise MalformedConfig(
            f"{path} is empty, which is not JSON; write {{}} in it (or delete it) and run setup again.",
            path=path,
        )
    try:
        data = json.loads(body, parse_constant=reject_constant)
    except _NonStandard as exc:
        raise MalformedConfig(
            f"{path} uses NaN or Infinity, which JSON does not allow; fix it and run setup again.",
            path=path,
        ) from exc
    except json.JSONDecodeError as exc:
        if _looks_like_jsonc(body, exc.pos):
            raise MalformedConfig(
                f"{path} has comments or trailing commas (JSONC, line {exc.lineno}); setup edits only "
                "strict JSON so that it never drops them. Add vaultd's part by hand.",
                path=path,
            ) from exc
        # The decoder's own messages ("Expecting ',' delimiter") never quote the text.
        raise MalformedConfig(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); fix it and run setup again.",
            path=path,
        ) from exc
    if not isinstance(data, dict):
        raise MalformedConfig(
            f"The top level of {path} is not a JSON object, so it has no place for vaultd's settings; "
            "fix it (or move it aside) and run setup again.",
            path=path,
        )
    return data


def _looks_like_jsonc(body: str, pos: int) -> bool:
    if body.startswith(("//", "/*"), pos):
        return True
    before = body[:pos].rstrip(" \t\r\n")
    return body.startswith(("}", "]"), pos) and before.endswith(",")


def skip(text: str, i: int) -> int:
    """Index of the first non-whitespace character at or after ``i``."""
    match = _WS.match(text, i)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _inline(value: Any, sep: str, colon: str) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(sep, colon))


def _clean_colon(colon: str) -> str:
    return ": " if ("\n" in colon or "\r" in colon) else colon


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]
