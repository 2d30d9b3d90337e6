"""Obsidian's property types: the declared ones in ``.obsidian/types.json``, the rest inferred as
Obsidian infers them, and a value checked against a type and put in the form Obsidian writes.

Obsidian keeps one type per property name for the whole vault. It writes the types a person chose
to ``.obsidian/types.json`` (``{"types": {"due": "date", ...}}``) and infers a type for the others
from a value when it first meets one: a boolean is a checkbox, a number a number, a list a list
(``multitext``), a ``YYYY-MM-DD`` string a date, a ``YYYY-MM-DDTHH:MM`` string a date and time,
anything else text. ``tags``, ``aliases`` and ``cssclasses`` have fixed types of their own.

The file is read live, bounded, and tolerated as Obsidian tolerates it: a file that is not JSON,
a ``types`` that is not an object, a type name Obsidian does not know, are each ignored rather
than refused, so a broken settings file never stops a read. Names are compared case-insensitively,
as Obsidian does. vaultd never writes the file.

Everything here is pure but :func:`read_types`, which reads one small file.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import weakref
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from protocol.methods.properties import PropertyType
from vaultd.fsio import ReadRefused, read_regular

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

    from vaultd.vault.index import VaultIndex

TYPES_FILE: Final = ".obsidian/types.json"
MAX_TYPES_BYTES: Final = 256 * 1024  #: a larger types.json is ignored, as one that is not JSON
MAX_TYPES: Final = 10_000  #: declared types kept at most; the rest of a hostile file is ignored


#: Types Obsidian gives these names whatever types.json says.
BUILT_IN: Final[Mapping[str, PropertyType]] = {
    "tags": PropertyType.TAGS,
    "aliases": PropertyType.ALIASES,
    "cssclasses": PropertyType.MULTITEXT,
}
_LIST_TYPES: Final = frozenset({PropertyType.MULTITEXT, PropertyType.ALIASES, PropertyType.TAGS})
_DATE_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME_RE: Final = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)")
_NUMBER_RE: Final = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class PropertyValueError(ValueError):
    """A value that does not fit its property's type; the message names the property, the type
    and the value, for the caller to fix."""


def key_of(name: str) -> str:
    """How Obsidian compares property names: case-insensitively."""
    return name.casefold()


def parse_types(raw: bytes) -> dict[str, PropertyType]:
    """The declared types in a ``types.json``'s bytes, by :func:`key_of` name; junk ignored."""
    if len(raw) > MAX_TYPES_BYTES:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    types = data.get("types") if isinstance(data, dict) else None
    if not isinstance(types, dict):
        return {}
    known = {t.value for t in PropertyType if t is not PropertyType.UNKNOWN}
    found: dict[str, PropertyType] = {}
    for name, kind in types.items():
        if len(found) >= MAX_TYPES:
            break
        if isinstance(kind, str) and kind in known and name:
            found.setdefault(key_of(name), PropertyType(kind))
    return found


def read_types(root: Path) -> dict[str, PropertyType]:
    """The vault's declared types, read now (a change takes effect on the next call); ``{}`` when
    the file is missing, a link, too large or unreadable."""
    try:
        raw, _ = read_regular(root / TYPES_FILE, MAX_TYPES_BYTES)
    except (OSError, ReadRefused):
        return {}
    return parse_types(raw)


def _is_date(text: str) -> bool:
    if not _DATE_RE.fullmatch(text):
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def infer(value: Any) -> PropertyType | None:
    """The type Obsidian infers from one value; None for an empty value (it says nothing)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return PropertyType.CHECKBOX
    if isinstance(value, int | float):
        return PropertyType.NUMBER
    if isinstance(value, list):
        return PropertyType.MULTITEXT
    if isinstance(value, dict):
        return PropertyType.UNKNOWN
    text = str(value)
    if _is_date(text):
        return PropertyType.DATE
    m = _DATETIME_RE.fullmatch(text)
    if m is not None and _is_date(m.group(1)):
        return PropertyType.DATETIME
    return PropertyType.TEXT


def type_of(name: str, value: Any, declared: Mapping[str, PropertyType]) -> PropertyType:
    """A property's type in a note: built in, else declared, else inferred from this value."""
    key = key_of(name)
    kind = BUILT_IN.get(key) or declared.get(key) or infer(value)
    return kind if kind is not None else PropertyType.TEXT


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def coerce(name: str, kind: PropertyType, value: Any) -> Any:
    """``value`` in the form Obsidian writes for ``kind``: dates ``YYYY-MM-DD``, date and time
    ``YYYY-MM-DDTHH:MM[:SS]``, lists as lists of strings (tags without ``#``), numbers as numbers,
    checkboxes as booleans. An empty value (None) fits every type.

    Raises:
        PropertyValueError: the value does not fit the type.
    """
    if value is None or kind is PropertyType.UNKNOWN:
        return value

    def refuse(why: str = "") -> PropertyValueError:
        return PropertyValueError(f"property {name!r} is of type {kind.value}; {_shown(value)} does not fit it{why}")

    if kind in _LIST_TYPES:
        if isinstance(value, str) and kind is PropertyType.TAGS:
            items: list[Any] = value.replace(",", " ").split()  # as the index reads a tags string
        else:
            items = value if isinstance(value, list) else [value]
        out: list[str] = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, str | int | float) or (isinstance(item, float) and not math.isfinite(item)):
                raise refuse(" (a list of text is expected)")
            text = str(item)
            if kind is PropertyType.TAGS:
                text = text.strip().lstrip("#")
                if not text or any(c.isspace() for c in text):
                    raise refuse(" (a tag is one word, without spaces)")
            out.append(text)
        return out
    if kind is PropertyType.TEXT:
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        raise refuse(" (text is expected)")
    if kind is PropertyType.NUMBER:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise refuse(" (a finite number is expected)")
            return value
        if isinstance(value, str) and _NUMBER_RE.fullmatch(value.strip()):
            number = float(value)
            return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
        raise refuse(" (a number is expected)")
    if kind is PropertyType.CHECKBOX:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise refuse(" (true or false is expected)")
    if kind is PropertyType.DATE:
        if isinstance(value, dt.datetime):
            return value.date().isoformat()
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, str) and _is_date(value.strip()):
            return value.strip()
        raise refuse(" (a date YYYY-MM-DD is expected)")
    # DATETIME
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S" if value.second else "%Y-%m-%dT%H:%M")
    if isinstance(value, str):
        m = _DATETIME_RE.fullmatch(value.strip())
        if m is not None and _is_date(m.group(1)):
            clock = m.group(2)
            try:
                dt.time.fromisoformat(clock)
            except ValueError:
                raise refuse(" (a date and time YYYY-MM-DDTHH:MM is expected)") from None
            return f"{m.group(1)}T{clock}"
    raise refuse(" (a date and time YYYY-MM-DDTHH:MM is expected)")


class PropertySummary(NamedTuple):
    """One property across the vault: as first spelled, its type, and how many notes have it."""

    name: str
    type: PropertyType
    notes: int


def vault_types(frontmatters: Iterable[Mapping[str, Any] | None], declared: Mapping[str, PropertyType]) -> dict[str, PropertySummary]:
    """Every property of these notes by :func:`key_of` name: its type is built in, else declared,
    else the type inferred from most of its non-empty values (the first met wins a tie); a
    property that is empty everywhere is text, as Obsidian shows it."""
    spelled: dict[str, str] = {}
    counts: dict[str, int] = {}
    inferred: dict[str, dict[PropertyType, int]] = {}
    for data in frontmatters:
        for name, value in (data or {}).items():
            key = key_of(name)
            spelled.setdefault(key, name)
            counts[key] = counts.get(key, 0) + 1
            kind = infer(value)
            if kind is not None:
                votes = inferred.setdefault(key, {})
                votes[kind] = votes.get(kind, 0) + 1
    out: dict[str, PropertySummary] = {}
    for key, name in spelled.items():
        kind = BUILT_IN.get(key) or declared.get(key)
        if kind is None:
            votes = inferred.get(key, {})
            kind = max(votes, key=lambda k: votes[k]) if votes else PropertyType.TEXT
        out[key] = PropertySummary(name, kind, counts[key])
    return out


_LATEST: weakref.WeakKeyDictionary[object, tuple[int, dict[str, PropertyType], dict[str, PropertySummary]]] = weakref.WeakKeyDictionary()


def vault_types_of(
    owner: object, generation: int, frontmatters: Callable[[], Iterable[Mapping[str, Any] | None]], declared: dict[str, PropertyType]
) -> dict[str, PropertySummary]:
    """:func:`vault_types` of an index (``owner``) whose every note ``frontmatters`` gives, kept
    until its ``generation`` or the declared types change: a read of one note then costs no walk
    of the vault. Only for a caller who sees every note (the answer is shared)."""
    kept = _LATEST.get(owner)
    if kept is not None and kept[0] == generation and kept[1] == declared:
        return kept[2]
    found = vault_types(frontmatters(), declared)
    _LATEST[owner] = (generation, dict(declared), found)
    return found


def typed_properties(data: Mapping[str, Any] | None, vault: Mapping[str, PropertySummary]) -> dict[str, PropertyType]:
    """Each property of one note's frontmatter with the type the vault gives it (see
    :func:`vault_types`); a property the vault does not know is typed by its value here."""
    out: dict[str, PropertyType] = {}
    for name, value in (data or {}).items():
        known = vault.get(key_of(name))
        out[name] = known.type if known is not None else type_of(name, value, {})
    return out


def index_types(index: VaultIndex, root: Path, hidden: Callable[[str], bool] | None = None) -> dict[str, PropertySummary]:
    """The vault's properties and types as a caller sees them: ``hidden`` leaves out the notes
    private to it (their properties are neither named nor counted); types.json read now."""
    declared = read_types(root)
    if hidden is None:
        return vault_types_of(index, index.generation, lambda: [r.frontmatter for r in index.notes.values()], declared)
    return vault_types((r.frontmatter for p, r in index.notes.items() if not hidden(p)), declared)
