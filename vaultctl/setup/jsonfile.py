"""Textual edits of an ``mcpServers`` JSON file: splice one member, keep every other byte.

Why textual: ``json.dumps`` would re-lay-out a file that the user or the host formatted (indent,
key spacing, CRLF, escapes, key order), and undo could not give the same bytes back. The stdlib
decoder does all the validating and says where each value ends (``raw_decode``); this module walks
only the top-level object and the ``mcpServers`` object, and copies the file's own spacing for
what it inserts. JSONC (comments, trailing commas) is refused: editing it faithfully would need a
JSONC parser, and dropping a user's comments is not faithful.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultctl.setup.edits import Found, Put, Splice, expected_data
from vaultctl.setup.errors import CannotEditFaithfully, EntryChanged, MalformedConfig

_WS = re.compile(r"[ \t\n\r]*")
_BOM = "\ufeff"


class _NonStandard(ValueError):
    """NaN or Infinity: Python accepts them, JSON (and the hosts) do not."""


def _reject_constant(name: str) -> Any:
    raise _NonStandard(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


@dataclass(frozen=True, slots=True)
class _Member:
    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int
    value: Any


@dataclass(frozen=True, slots=True)
class _Object:
    start: int  #: index of ``{``
    end: int  #: index after ``}``
    members: tuple[_Member, ...]


@dataclass(frozen=True, slots=True)
class _Style:
    """How the file lays itself out, for text we insert where nothing nearby shows it."""

    pretty: bool
    unit: str
    colon: str
    item_sep: str


class JsonFormat:
    """JSON host files keyed ``mcpServers`` -> name -> entry."""

    def __init__(self, container: str, name: str) -> None:
        self.container = container
        self.name = name

    def parse(self, text: str, path: Path) -> JsonDocument:
        """Validate strictly and index the members setup may touch.

        Raises:
            MalformedConfig: VALIDATION, not strict JSON, or not the shape hosts expect.
        """
        return JsonDocument(text, path, self.container, self.name)

    def fresh(self, entry: dict[str, Any]) -> str:
        return json.dumps({self.container: {self.name: entry}}, indent=2, ensure_ascii=False) + "\n"

    def manual(self, entry: dict[str, Any], text: str | None) -> str:
        return self.fresh(entry)

    def value_of(self, text: str) -> Any:
        return json.loads(text)


class JsonDocument:
    """One parsed JSON host file and the two edits setup makes to it."""

    def __init__(self, text: str, path: Path, container: str, name: str) -> None:
        self.text = text
        self.path = path
        self.container = container
        self.name = name
        self._base = 1 if text.startswith(_BOM) else 0
        self.data = _load(text[self._base :], path)
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.top = self._object(_skip(text, self._base))
        self.servers_member = self._only(self.top, container)
        self.servers: _Object | None = None
        self.entry_member: _Member | None = None
        if self.servers_member is not None:
            if not isinstance(self.servers_member.value, dict):
                raise MalformedConfig(
                    f'In {path}, "{container}" is not an object; fix it (or remove it) and run setup again.',
                    path=path,
                )
            self.servers = self._object(self.servers_member.value_start)
            self.entry_member = self._only(self.servers, name)

    def entry(self) -> Found | None:
        m = self.entry_member
        return None if m is None else Found(m.value)

    def put(self, entry: dict[str, Any]) -> Put:
        if self.entry_member is not None:
            assert self.servers is not None
            m = self.entry_member
            splice = Splice(m.value_start, m.value_end, self._render_at(m, self.servers, entry))
            prior = self.text[m.value_start : m.value_end]
            put = Put(splice, prior_text=prior, container_existed=True, spacing=None)
        elif self.servers is not None:
            splice, spacing = self._insert(self.servers, self.name, entry)
            put = Put(splice, prior_text=None, container_existed=True, spacing=spacing)
        else:
            splice, spacing = self._insert(self.top, self.container, {self.name: entry})
            put = Put(splice, prior_text=None, container_existed=False, spacing=spacing)
        self._verify(splice, present=True, value=entry, drop_empty=False)
        return put

    def revert(self, prior_text: str | None, container_existed: bool, spacing: str | None) -> Splice:
        m = self.entry_member
        if m is None or self.servers is None or self.servers_member is None:
            raise EntryChanged(f"{self.path} has no vaultd entry to undo.", path=self.path)
        if prior_text is not None:
            splice = Splice(m.value_start, m.value_end, prior_text)
            self._verify(splice, present=True, value=json.loads(prior_text), drop_empty=False)
            return splice
        if not container_existed and len(self.servers.members) == 1:
            splice = _remove(self.top, self.servers_member, spacing)
        else:
            splice = _remove(self.servers, m, spacing if container_existed else None)
        self._verify(splice, present=False, value=None, drop_empty=not container_existed)
        return splice

    # -- reading ---------------------------------------------------------------------------------

    def _object(self, start: int) -> _Object:
        """Index the members of the object at ``start``; the text is known-valid JSON by now."""
        text = self.text
        members: list[_Member] = []
        i = _skip(text, start + 1)
        if text.startswith("}", i):
            return _Object(start, i + 1, ())
        while True:
            key, key_end = _DECODER.raw_decode(text, i)
            colon = _skip(text, key_end)
            value_start = _skip(text, colon + 1)
            value, value_end = _DECODER.raw_decode(text, value_start)
            members.append(_Member(key, i, key_end, value_start, value_end, value))
            i = _skip(text, value_end)
            if text.startswith("}", i):
                return _Object(start, i + 1, tuple(members))
            i = _skip(text, i + 1)  # past the comma

    def _only(self, obj: _Object, key: str) -> _Member | None:
        found = [m for m in obj.members if m.key == key]
        if len(found) > 1:
            raise MalformedConfig(
                f'{self.path} has "{key}" more than once in one object; hosts read only the last. '
                "Remove the duplicate and run setup again.",
                path=self.path,
            )
        return found[0] if found else None

    # -- writing ---------------------------------------------------------------------------------

    def _insert(self, obj: _Object, key: str, value: Any) -> tuple[Splice, str | None]:
        """Add ``key: value`` after the object's last member, spaced like its neighbours.

        Undo removes from the previous member's end to this value's end, which is exactly the
        inserted text. An empty object has no neighbours: its inner whitespace is returned so
        undo can put it back.
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
                rendered = self._pretty(value, indent, self._unit(obj, indent), colon)
            else:
                rendered = _inline(value, sep, colon)
            new = sep + _dumps(key) + colon + rendered
            return Splice(last.value_end, last.value_end, new), None
        inner = text[obj.start + 1 : obj.end - 1]
        style = self._style()
        if style.pretty:
            outer = _line_indent(text, obj.start)
            indent = outer + style.unit
            rendered = self._pretty(value, indent, style.unit, style.colon)
            new = self.newline + indent + _dumps(key) + style.colon + rendered + self.newline + outer
        else:
            new = _dumps(key) + style.colon + _inline(value, style.item_sep, style.colon)
        return Splice(obj.start + 1, obj.end - 1, new), inner

    def _render_at(self, m: _Member, obj: _Object, value: Any) -> str:
        """A replacement value laid out like the member it replaces."""
        text = self.text
        line_start = text.rfind("\n", 0, m.key_start) + 1
        prefix = text[line_start : m.key_start]
        colon = _clean_colon(text[m.key_end : m.value_start])
        if line_start > 0 and prefix.strip(" \t") == "":
            return self._pretty(value, prefix, self._unit(obj, prefix), colon)
        if len(obj.members) >= 2:
            sep = text[obj.members[0].value_end : obj.members[1].key_start]
        else:
            sep = self._style().item_sep
        return _inline(value, sep if "\n" not in sep else ", ", colon)

    def _pretty(self, value: Any, indent: str, unit: str, colon: str) -> str:
        rendered = json.dumps(value, ensure_ascii=False, indent=unit, separators=(",", colon))
        return (self.newline + indent).join(rendered.split("\n"))

    def _unit(self, obj: _Object, indent: str) -> str:
        """One level of indentation: a member's indent minus its closing brace's."""
        closing = self.text[self.text.rfind("\n", 0, obj.end - 1) + 1 : obj.end - 1]
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

    def _verify(self, splice: Splice, *, present: bool, value: Any, drop_empty: bool) -> None:
        """Refuse unless the edited text parses to exactly the intended data."""
        after_text = splice.apply(self.text)
        try:
            after = json.loads(after_text[self._base :], parse_constant=_reject_constant)
        except ValueError as exc:
            raise self._unfaithful() from exc
        if after != expected_data(self.data, self.container, self.name, value, present=present, drop_empty=drop_empty):
            raise self._unfaithful()

    def _unfaithful(self) -> CannotEditFaithfully:
        return CannotEditFaithfully(
            f"setup cannot change the vaultd entry in {self.path} without disturbing the rest of "
            "the file; nothing was written. Edit the entry by hand.",
            path=self.path,
        )


def _load(body: str, path: Path) -> dict[str, Any]:
    if not body.strip(" \t\r\n"):
        raise MalformedConfig(
            f"{path} is empty, which is not JSON; write {{}} in it (or delete it) and run setup again.",
            path=path,
        )
    try:
        data = json.loads(body, parse_constant=_reject_constant)
    except _NonStandard as exc:
        raise MalformedConfig(
            f"{path} uses NaN or Infinity, which JSON does not allow; fix it and run setup again.",
            path=path,
        ) from exc
    except json.JSONDecodeError as exc:
        if _looks_like_jsonc(body, exc.pos):
            raise MalformedConfig(
                f"{path} has comments or trailing commas (JSONC, line {exc.lineno}); setup edits only "
                "strict JSON so that it never drops them. Add the vaultd entry by hand.",
                path=path,
            ) from exc
        # The decoder's own messages ("Expecting ',' delimiter") never quote the text.
        raise MalformedConfig(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); fix it and run setup again.",
            path=path,
        ) from exc
    if not isinstance(data, dict):
        raise MalformedConfig(
            f"The top level of {path} is not a JSON object, so it has no place for MCP servers; "
            "fix it (or move it aside) and run setup again.",
            path=path,
        )
    return data


def _looks_like_jsonc(body: str, pos: int) -> bool:
    if body.startswith(("//", "/*"), pos):
        return True
    before = body[:pos].rstrip(" \t\r\n")
    return body.startswith(("}", "]"), pos) and before.endswith(",")


def _remove(obj: _Object, m: _Member, spacing: str | None) -> Splice:
    """Take a member out together with one separator, the inverse of :meth:`_insert`."""
    members = obj.members
    i = next(n for n, each in enumerate(members) if each.key_start == m.key_start)
    if len(members) == 1:
        return Splice(obj.start + 1, obj.end - 1, spacing or "")
    if i > 0:
        return Splice(members[i - 1].value_end, m.value_end, "")
    return Splice(m.key_start, members[1].key_start, "")


def _skip(text: str, i: int) -> int:
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
