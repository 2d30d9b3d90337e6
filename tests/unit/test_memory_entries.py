"""Memory entries read from a list or a memory file: one entry per top-level item, an index line
that points at a memory file beside it left to that file, and an id that is the entry's text's
whatever its line endings or Unicode form."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from hypothesis import example, given
from hypothesis import strategies as st

from vaultd.memory_import.entries import entry_id, read_entries, title_of

if TYPE_CHECKING:
    from pathlib import Path

TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=200)


@given(TEXT)
@example("0\r\n0")
def test_an_entrys_id_does_not_depend_on_line_endings_or_unicode_form(text: str) -> None:
    same = entry_id(text)
    # The same lines with each ending written LF, CRLF or CR. (Not ``text`` with its LFs made
    # CRLF: a text holding a lone CR before an LF would then hold CR CR LF, one more line.)
    lines = text.replace("\r\n", "\n").replace("\r", "\n")
    assert entry_id(lines) == same
    assert entry_id(lines.replace("\n", "\r\n")) == same
    assert entry_id(lines.replace("\n", "\r")) == same
    assert entry_id(unicodedata.normalize("NFD", text)) == entry_id(unicodedata.normalize("NFC", text))
    assert entry_id(f"\n  {text}  \n") == same
    assert same.startswith("mem-") and len(same) == 20


@given(TEXT)
def test_a_title_is_one_short_line(text: str) -> None:
    title = title_of(text)
    assert title and "\n" not in title and len(title) <= 80


def test_a_list_gives_one_entry_per_top_level_item(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(
        "# Index\n\n- [Use uv](tooling.md) — not pip\n- Deploys wait for Tuesday.\n  Ask in #ops.\n  - a nested point\n\nA paragraph.\n* Second\n"
    )
    (memory / "tooling.md").write_text("---\nname: Use uv\n---\nuv, never pip.\n")
    found = read_entries(sorted(memory.iterdir()), [])
    assert [(e.title, e.kind, e.text) for e in found.entries] == [
        ("Deploys wait for Tuesday", "claude-index", "Deploys wait for Tuesday.\nAsk in #ops.\n- a nested point"),
        ("Second", "claude-index", "Second"),
        ("Use uv", "claude-memory", "uv, never pip."),
    ]
    assert found.skipped == [] and not found.truncated


def test_an_index_line_whose_file_is_gone_is_an_entry_itself(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- [Use uv](tooling.md) — not pip\n")
    found = read_entries([tmp_path / "MEMORY.md"], [])
    assert [e.title for e in found.entries] == ["Use uv"]
