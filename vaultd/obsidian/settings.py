"""The settings of the vault's Obsidian that decide what vaultd writes and shows, read live.

Each is read from its own file under ``.obsidian/`` when an operation or a read needs it, keyed by
the file's status (inode, size, change time): a person changing a setting in the app is seen by the
next call, without a restart, and an unchanged file is parsed once. Reading is bounded
(:data:`MAX_SETTINGS_BYTES`), never follows a symlink to the file itself, and never writes.

Obsidian is tolerant of its own files, and so is this module: a file that is absent, unreadable,
not JSON, not an object, or a value of the wrong kind gives Obsidian's default for that setting,
never an error.

- ``app.json``: the link format (``useMarkdownLinks``, ``newLinkFormat``; see
  :mod:`vaultd.vault.app_config`, which the index layer's link rewriting already uses), the
  attachment folder and ``userIgnoreFilters`` ("Excluded files");
- ``daily-notes.json``: the daily note's folder, moment format and template;
- ``templates.json``: the templates folder and the formats of ``{{date}}`` and ``{{time}}``;
- ``zk-prefixer.json``: the unique note creator's folder, moment format and template;
- ``plugins/periodic-notes/data.json``: the Periodic Notes plugin's daily, weekly, monthly,
  quarterly and yearly notes; its daily notes take over from the core daily notes when the plugin
  is enabled with them on.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

from vaultd.fsio import ReadRefused, read_regular
from vaultd.vault import json_text
from vaultd.vault.app_config import LinkFormat, NewLinkFormat, link_format_of

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = [
    "LinkFormat",
    "NewLinkFormat",
    "Period",
    "VaultSettings",
    "excluded",
    "read_settings",
]

MAX_SETTINGS_BYTES: Final = 256 * 1024  #: Obsidian's own files are a few hundred bytes
MAX_IGNORE_FILTERS: Final = 256  #: more "Excluded files" entries than this are not read
MAX_FILTER_CHARS: Final = 1024
_CACHE_FILES: Final = 4096  #: parsed files kept; past it the cache starts again
_UNSAFE_REGEX: Final = re.compile(r"\\[1-9]|[(){}]|\\[pPkgN]")  #: groups, backreferences, {} quantifiers

APP: Final = ".obsidian/app.json"
DAILY: Final = ".obsidian/daily-notes.json"
TEMPLATES: Final = ".obsidian/templates.json"
UNIQUE: Final = ".obsidian/zk-prefixer.json"
PERIODIC: Final = ".obsidian/plugins/periodic-notes/data.json"
COMMUNITY: Final = ".obsidian/community-plugins.json"
#: A period as a caller names it -> the Periodic Notes section that configures its notes
PERIOD_NAMES: Final = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}


@dataclass(frozen=True, slots=True)
class Period:
    """A kind of dated note: where it goes, how it is named, what it starts from."""

    folder: str = ""
    format: str = "YYYY-MM-DD"
    template: str = ""  #: a vault path, ``.md`` optional, as Obsidian stores it; '' for none


@dataclass(frozen=True, slots=True)
class AppSettings:
    link: LinkFormat = LinkFormat()
    attachment_folder: str = "/"  #: ``/`` the vault root, ``./`` beside the note, else a folder
    ignore_filters: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TemplateSettings:
    folder: str = ""
    date_format: str = "YYYY-MM-DD"
    time_format: str = "HH:mm"


@dataclass(frozen=True, slots=True)
class VaultSettings:
    """Every setting vaultd honours, as the vault's Obsidian has them now."""

    app: AppSettings = AppSettings()
    daily: Period = Period()
    templates: TemplateSettings = TemplateSettings()
    unique: Period = Period(format="YYYYMMDDHHmm")
    #: Periodic Notes' weekly, monthly, quarterly and yearly notes (by those names), when the
    #: plugin is enabled and has them on
    periods: dict[str, Period] = field(default_factory=dict)
    daily_source: str = "daily-notes"  #: which settings gave ``daily``: daily-notes or periodic-notes

    def period(self, kind: str) -> Period | None:
        """The notes of one period (``day``, ``week``, ``month``, ``quarter``, ``year``); None
        when the vault's Obsidian keeps none of that period."""
        if kind == "day":
            return self.daily
        return self.periods.get(PERIOD_NAMES.get(kind, ""))

    def excluded(self, path: str) -> bool:
        """Whether ``path`` is one of Obsidian's "Excluded files"."""
        return excluded(self.app.ignore_filters, path)


# -- reading, keyed by the file's status ----------------------------------------------------------

_cache: dict[str, tuple[tuple[int, int, int, int], Any]] = {}
_lock = threading.Lock()

T = TypeVar("T")


def _load(root: Path, rel: str) -> Any:
    """The JSON in ``rel`` (any value), or None when absent, unreadable, over the bound or not JSON."""
    full = os.path.join(root, rel)
    try:
        st = os.lstat(full)
    except OSError:
        return None
    key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _lock:
        hit = _cache.get(full)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        data, _ = read_regular(full, MAX_SETTINGS_BYTES)
        doc: Any = json_text.load(data.decode("utf-8"))
    except (OSError, ReadRefused, ValueError):
        doc = None
    with _lock:
        if len(_cache) >= _CACHE_FILES:
            _cache.clear()
        _cache[full] = (key, doc)
    return doc


def _obj(doc: Any) -> dict[str, Any]:
    return doc if isinstance(doc, dict) else {}


def _str(doc: dict[str, Any], key: str, default: str) -> str:
    """A string setting; Obsidian treats a missing, blank or non-string value as its default."""
    value = doc.get(key)
    return value.strip() if isinstance(value, str) and value.strip() and len(value) <= MAX_FILTER_CHARS else default


def _folder(doc: dict[str, Any], key: str) -> str:
    return _str(doc, key, "").strip("/")


def _app(root: Path) -> AppSettings:
    raw = _load(root, APP)
    doc = _obj(raw)
    filters = doc.get("userIgnoreFilters")
    kept = (
        tuple(f for f in filters[:MAX_IGNORE_FILTERS] if isinstance(f, str) and 0 < len(f) <= MAX_FILTER_CHARS)
        if isinstance(filters, list)
        else ()
    )
    return AppSettings(link=link_format_of(raw), attachment_folder=_str(doc, "attachmentFolderPath", "/"), ignore_filters=kept)


def _period(doc: dict[str, Any], default_format: str) -> Period:
    return Period(folder=_folder(doc, "folder"), format=_str(doc, "format", default_format), template=_str(doc, "template", ""))


def _periodic(root: Path) -> dict[str, Period]:
    """Periodic Notes' notes that are on, when the plugin itself is enabled."""
    enabled = _load(root, COMMUNITY)
    if not isinstance(enabled, list) or "periodic-notes" not in enabled:
        return {}
    doc = _obj(_load(root, PERIODIC))
    defaults = {"daily": "YYYY-MM-DD", "weekly": "gggg-[W]ww", "monthly": "YYYY-MM", "quarterly": "YYYY-[Q]Q", "yearly": "YYYY"}
    found = {}
    for name, default in defaults.items():
        section = _obj(doc.get(name))
        if section.get("enabled") is True:
            found[name] = _period(section, default)
    return found


def read_settings(root: Path) -> VaultSettings:
    """The vault's settings now (each file re-read only when its status changed)."""
    templates = _obj(_load(root, TEMPLATES))
    periods = _periodic(root)
    daily = periods.pop("daily", None)
    return VaultSettings(
        app=_app(root),
        daily=daily or _period(_obj(_load(root, DAILY)), "YYYY-MM-DD"),
        templates=TemplateSettings(
            folder=_folder(templates, "folder"),
            date_format=_str(templates, "dateFormat", "YYYY-MM-DD"),
            time_format=_str(templates, "timeFormat", "HH:mm"),
        ),
        unique=_period(_obj(_load(root, UNIQUE)), "YYYYMMDDHHmm"),
        periods=periods,
        daily_source="periodic-notes" if daily is not None else "daily-notes",
    )


def read_link_format(root: Path) -> LinkFormat:
    """The vault's link format now."""
    return _app(root).link


# -- Excluded files -------------------------------------------------------------------------------


def _matcher(rule: str) -> Callable[[str], bool] | None:
    """One "Excluded files" entry as Obsidian reads it: ``/regex/`` searched in the path, anything
    else a prefix of the path. A regex outside the safe subset (groups, backreferences, ``{}``) or
    one that does not compile is not applied: it could make every listing exponential."""
    if len(rule) > 2 and rule.startswith("/") and rule.endswith("/"):
        pattern = rule[1:-1]
        if _UNSAFE_REGEX.search(pattern):
            return None
        try:
            rx = re.compile(pattern)
        except re.error:
            return None
        return lambda path: rx.search(path) is not None
    return lambda path: path.startswith(rule)


_matchers: dict[tuple[str, ...], list[Callable[[str], bool]]] = {}


def excluded(filters: tuple[str, ...], path: str) -> bool:
    """Whether ``path`` matches one of ``filters`` (``userIgnoreFilters``)."""
    if not filters:
        return False
    matchers = _matchers.get(filters)
    if matchers is None:
        matchers = [m for m in map(_matcher, filters) if m is not None]
        if len(_matchers) >= 64:
            _matchers.clear()
        _matchers[filters] = matchers
    return any(m(path) for m in matchers)
