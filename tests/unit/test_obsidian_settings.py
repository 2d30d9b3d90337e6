"""Obsidian's settings as vaultd reads them: Obsidian's defaults for anything absent or unusable,
changes seen without a restart, bounds at their edge; Excluded files matched as Obsidian matches
them; templates rendered with the core plugins' variables; daily text placed under a heading."""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultd.obsidian.daily import DayError, add_text, daily_path, parse_heading, resolve_day
from vaultd.obsidian.moment import UnsupportedToken
from vaultd.obsidian.settings import MAX_SETTINGS_BYTES, NewLinkFormat, VaultSettings, excluded, read_settings
from vaultd.obsidian.templates import TemplateContext, render

if TYPE_CHECKING:
    from pathlib import Path


def _write(root: Path, rel: str, data: object | str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_no_obsidian_folder_gives_obsidians_defaults(tmp_path: Path) -> None:
    assert read_settings(tmp_path) == VaultSettings()
    s = read_settings(tmp_path)
    assert (s.daily.format, s.templates.date_format, s.templates.time_format, s.unique.format) == (
        "YYYY-MM-DD",
        "YYYY-MM-DD",
        "HH:mm",
        "YYYYMMDDHHmm",
    )


@pytest.mark.parametrize("junk", ["{ not json", "[]", "null", '{"folder": 3, "format": ["x"], "template": {}}', '{"format": "   "}'])
def test_junk_settings_fall_back_to_defaults(tmp_path: Path, junk: str) -> None:
    _write(tmp_path, ".obsidian/daily-notes.json", junk)
    _write(tmp_path, ".obsidian/app.json", junk)
    s = read_settings(tmp_path)
    assert s.daily == VaultSettings().daily and s.app == VaultSettings().app


def test_every_file_is_read_and_a_change_is_seen_at_once(tmp_path: Path) -> None:
    _write(
        tmp_path,
        ".obsidian/app.json",
        {"useMarkdownLinks": True, "newLinkFormat": "relative", "attachmentFolderPath": "./att", "userIgnoreFilters": ["Archive/", 3]},
    )
    _write(tmp_path, ".obsidian/daily-notes.json", {"folder": "/Journal/", "format": "YYYY-MM-DD dddd", "template": "Templates/Daily"})
    _write(tmp_path, ".obsidian/templates.json", {"folder": "Templates", "dateFormat": "DD.MM.YYYY", "timeFormat": "h:mm A"})
    _write(tmp_path, ".obsidian/zk-prefixer.json", {"folder": "Zettel", "format": "YYYYMMDDHHmmss", "template": "Templates/Zettel"})
    s = read_settings(tmp_path)
    assert s.app.link.markdown and s.app.link.new_link_format is NewLinkFormat.RELATIVE
    assert (s.app.attachment_folder, s.app.ignore_filters) == ("./att", ("Archive/",))
    assert (s.daily.folder, s.daily.format, s.daily.template) == ("Journal", "YYYY-MM-DD dddd", "Templates/Daily")
    assert (s.templates.folder, s.templates.date_format, s.templates.time_format) == ("Templates", "DD.MM.YYYY", "h:mm A")
    assert (s.unique.folder, s.unique.format, s.unique.template) == ("Zettel", "YYYYMMDDHHmmss", "Templates/Zettel")
    _write(tmp_path, ".obsidian/daily-notes.json", {"folder": "Days"})
    assert read_settings(tmp_path).daily.folder == "Days"


def test_periodic_notes_take_over_only_when_the_plugin_is_enabled(tmp_path: Path) -> None:
    _write(tmp_path, ".obsidian/daily-notes.json", {"folder": "Core"})
    _write(
        tmp_path,
        ".obsidian/plugins/periodic-notes/data.json",
        {"daily": {"enabled": True, "folder": "P", "format": ""}, "weekly": {"enabled": True}, "monthly": {"enabled": False}},
    )
    assert read_settings(tmp_path).daily.folder == "Core"
    _write(tmp_path, ".obsidian/community-plugins.json", ["periodic-notes"])
    s = read_settings(tmp_path)
    assert (s.daily.folder, s.daily.format, s.daily_source) == ("P", "YYYY-MM-DD", "periodic-notes")
    assert set(s.periods) == {"weekly"} and s.periods["weekly"].format == "gggg-[W]ww"


def test_a_settings_file_over_the_bound_is_not_read_and_one_at_it_is(tmp_path: Path) -> None:
    doc = json.dumps({"folder": "X"})
    _write(tmp_path, ".obsidian/daily-notes.json", doc + " " * (MAX_SETTINGS_BYTES - len(doc)))
    assert read_settings(tmp_path).daily.folder == "X"
    _write(tmp_path, ".obsidian/daily-notes.json", doc + " " * (MAX_SETTINGS_BYTES - len(doc) + 1))
    assert read_settings(tmp_path).daily.folder == ""


def test_a_symlinked_settings_file_is_not_followed(tmp_path: Path) -> None:
    _write(tmp_path, "elsewhere.json", {"folder": "Secret"})
    (tmp_path / ".obsidian").mkdir()
    os.symlink(tmp_path / "elsewhere.json", tmp_path / ".obsidian/daily-notes.json")
    assert read_settings(tmp_path).daily.folder == ""


@pytest.mark.parametrize(
    ("filters", "path", "hidden"),
    [
        (("Archive/",), "Archive/old.md", True),
        (("Archive/",), "Archived.md", False),
        (("Archive",), "Archived.md", True),  # Obsidian's filters are path prefixes
        (("/\\.excalidraw\\.md$/",), "draw/x.excalidraw.md", True),
        (("/\\.excalidraw\\.md$/",), "notes/x.md", False),
        (("/(a+)+$/",), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", False),  # outside the safe subset: not applied
        (("/[unclosed/",), "[unclosed", False),
        ((), "anything.md", False),
    ],
)
def test_excluded_files_match_as_obsidian_matches_them(filters: tuple[str, ...], path: str, hidden: bool) -> None:
    assert excluded(filters, path) is hidden


NOW = dt.datetime(2024, 12, 29, 9, 5)


def test_core_template_variables() -> None:
    ctx = TemplateContext(title="Idea", when=NOW, date_format="DD.MM.YYYY", time_format="h:mm A")
    text = "# {{title}}\n{{date}} {{time}} {{ date:YYYY }} {{time:HH}} {{DATE:gggg-[W]ww}} {{other}} {{date+1d:YYYY}}\n"
    assert render(text, ctx).text == "# Idea\n29.12.2024 9:05 AM 2024 09 2025-W01 {{other}} {{date+1d:YYYY}}\n"


def test_daily_template_variables_know_offsets_yesterday_and_tomorrow() -> None:
    ctx = TemplateContext(title="2024-12-29", when=NOW, date_format="YYYY-MM-DD", daily=True)
    text = "{{yesterday}} {{tomorrow}} {{date+1M:YYYY-MM-DD}} {{date-1y}} {{date+2w:MMM D}}"
    assert render(text, ctx).text == "2024-12-28 2024-12-30 2025-01-29 2023-12-29 Jan 12"
    assert render("{{date-1M:YYYY-MM-DD}}", TemplateContext(title="t", when=dt.datetime(2024, 3, 31), daily=True)).text == "2024-02-29"


def test_templater_is_left_as_written_and_said() -> None:
    done = render("<% tp.file.title %> {{title}}", TemplateContext(title="T", when=NOW))
    assert (done.text, done.templater) == ("<% tp.file.title %> T", True)
    assert render("{{title}}", TemplateContext(title="T", when=NOW)).templater is False


def test_a_template_date_with_an_unsupported_token_is_refused() -> None:
    with pytest.raises(UnsupportedToken):
        render("{{date:YYYY zz}}", TemplateContext(title="T", when=NOW))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, "2024-12-29"),
        ("today", "2024-12-29"),
        ("Yesterday", "2024-12-28"),
        ("tomorrow", "2024-12-30"),
        ("-1", "2024-12-28"),
        ("+2", "2024-12-31"),
        ("2020-02-29", "2020-02-29"),
        ("+36600", (NOW.date() + dt.timedelta(days=36600)).isoformat()),
    ],
)
def test_days(spec: str | None, expected: str) -> None:
    assert resolve_day(spec, NOW.date()).isoformat() == expected


@pytest.mark.parametrize("spec", ["someday", "2023-02-29", "+36601", "-1d", "1 day"])
def test_bad_days(spec: str) -> None:
    with pytest.raises(DayError):
        resolve_day(spec, NOW.date())


def test_daily_paths() -> None:
    day = NOW.date()
    assert daily_path("Journal/", "YYYY-MM-DD dddd", day) == "Journal/2024-12-29 Sunday.md"
    assert daily_path("", "YYYY/MM/YYYY-MM-DD", day) == "2024/12/2024-12-29.md"
    with pytest.raises(DayError):
        daily_path("", "[]", day)


def test_headings() -> None:
    assert parse_heading("## Log") == (2, "Log")
    assert parse_heading("Log") == (2, "Log")
    assert parse_heading("### Done ###") == (3, "Done")
    for bad in ("##", "## a\n## b", "#######x"):
        with pytest.raises(DayError):
            parse_heading(bad)


line = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n#`~-<>[]"), min_size=1, max_size=20).filter(str.strip)


@given(st.lists(line, max_size=4), st.lists(line, min_size=1, max_size=4), line)
def test_appending_under_a_heading_keeps_every_other_line_and_lands_in_its_section(
    before: list[str], entries: list[str], addition: str
) -> None:
    text = "# Day\n\n" + "".join(f"{b}\n\n" for b in before) + "## Log\n\n" + "".join(f"- {e}\n" for e in entries) + "\n## Later\n\nkeep\n"
    out = add_text(text, f"- {addition}", under="## Log", at_start=False)
    assert out == text.replace(f"- {entries[-1]}\n\n## Later", f"- {entries[-1]}\n- {addition}\n\n## Later")
    first = add_text(text, f"- {addition}", under="## Log", at_start=True)
    assert first == text.replace("## Log\n\n", f"## Log\n\n- {addition}\n", 1)
