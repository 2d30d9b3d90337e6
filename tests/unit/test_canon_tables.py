"""Canonical tables, the pure parser and matcher: GFM tables found by their delimiter row, names
cleaned and split into aliases, whole-token matches with case ignored for Latin only, the ranking,
and every parsing bound at its edge (tables, rows, aliases, bytes of names)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from vaultd.policy import canon_tables as ct
from vaultd.policy.canon_tables import Budget, aliases, clean_key, fold, is_delimiter, matches, parse, split_cells

GLOSSARY = """# Glossary

Some prose | with a pipe that is no table.

| Name | Meaning |
|:-----|--------:|
| **PostgreSQL** (Postgres, PG) | the database |
| [[Redis]] | the cache |
| `k8s` / Kubernetes | the cluster |
| TCP/IP | one name, the slash unspaced |
| X | one character: never a name |
| Σύστημα | Greek keeps its case |
| Zürich Büro | Latin with accents |

After the table.
"""


def _matches(draft: str, rows: list[ct.Row]) -> list[ct.Match]:
    found, stopped = matches(draft, rows)
    assert not stopped
    return found


def _rows(text: str = GLOSSARY, column: str | None = "Name") -> list[ct.Row]:
    return parse("Glossary.md", text, column, Budget()).rows


def test_a_table_is_read_with_its_names_cleaned_and_split() -> None:
    rows = _rows()
    assert [r.keys for r in rows] == [
        ("PostgreSQL", "Postgres", "PG"),
        ("Redis",),
        ("k8s", "Kubernetes"),
        ("TCP/IP",),
        ("Σύστημα",),
        ("Zürich Büro",),
    ]
    assert rows[0].line == 7 and rows[0].text == "| **PostgreSQL** (Postgres, PG) | the database |"
    assert _rows(column="meaning")[0].keys == ("the database",)  # a header is found with case aside
    assert _rows(column=None)[1].keys == ("Redis",)  # no column named: the first
    assert parse("G.md", GLOSSARY, "Owner", Budget()).tables == 0


def test_matches_are_whole_tokens_latin_case_aside_longest_first() -> None:
    rows = _rows()
    found = _matches("We run postgresql and redis on K8S; tcp/ip.", rows)
    assert [(m.key, m.row.line) for m in found] == [("PostgreSQL", 7), ("TCP/IP", 10), ("Redis", 8), ("k8s", 9)]
    assert _matches("Redistribution and postgresqlx and xk8s", rows) == []  # inside a longer word: no match
    assert _matches("σύστημα", rows) == []  # Greek: the case must be the table's
    assert [m.key for m in _matches("Das ZÜRICH BÜRO", rows)] == ["Zürich Büro"]
    assert [m.key for m in _matches("Das Σύστημα", rows)] == ["Σύστημα"]
    assert _matches("X marks it", rows) == []  # one-character names are ignored
    many = "\n".join(f"| name{i} | row {i} |" for i in range(8))
    table = parse("T.md", f"| Name | What |\n| - | - |\n{many}\n", None, Budget()).rows
    found = _matches(" ".join(f"name{i}" for i in range(8)), table)
    assert len(found) == ct.MAX_MATCHES and [m.row.line for m in found] == [3, 4, 5, 6, 7]


def test_a_long_row_is_shown_within_its_bound() -> None:
    cell = "Thing " + "x" * 300
    (row,) = parse("T.md", f"| Name |\n|---|\n| {cell} |\n", None, Budget()).rows
    assert len(row.text) == ct.MAX_ROW_CHARS and row.text.endswith("…")
    (row,) = parse("T.md", f"| Name |\n|---|\n| {'y' * 196} |\n", None, Budget()).rows
    assert len(row.text) == ct.MAX_ROW_CHARS and not row.text.endswith("…")


def test_delimiter_rows_as_gfm_allows_them() -> None:
    for line in ("|-|-|", "|--|--|", "| :-: | - |", "---|:--", "| ---: |"):
        assert is_delimiter(line), line
    for line in ("| a | b |", "|  |  |", "| -a- |", "text", "| : |"):
        assert not is_delimiter(line), line


def _table(n_rows: int, keys_per_row: int = 1, key: str = "k") -> str:
    rows = "\n".join("| " + ", ".join(f"{key}{i}x{j}" for j in range(keys_per_row)) + " |" for i in range(n_rows))
    return f"| Name |\n|---|\n{rows}\n"


def test_the_row_bound_at_its_edge() -> None:
    budget = Budget()
    assert len(parse("T.md", _table(ct.MAX_ROWS), None, budget).rows) == ct.MAX_ROWS and budget.spent is None
    budget = Budget()
    assert len(parse("T.md", _table(ct.MAX_ROWS + 1), None, budget).rows) == ct.MAX_ROWS
    assert budget.spent == f"at most {ct.MAX_ROWS} rows are read"


def test_the_alias_bound_at_its_edge() -> None:
    budget = Budget()
    at = _table(ct.MAX_ALIASES // 8, 8, key="")  # short names: the bytes' bound is not the one reached
    assert len(parse("T.md", at, None, budget).rows) == ct.MAX_ALIASES // 8 and budget.spent is None and budget.aliases == 0
    budget = Budget()
    parse("T.md", at + "| zz |\n", None, budget)
    assert budget.spent == f"at most {ct.MAX_ALIASES} names are read"


def test_the_key_bytes_bound_at_its_edge() -> None:
    size = 1024  # each row's one name, in bytes
    n = ct.MAX_KEY_BYTES // size
    text = "| Name |\n|---|\n" + "".join(f"| {i:08d}{'k' * (size - 8)} |\n" for i in range(n))
    budget = Budget()
    assert len(parse("T.md", text, None, budget).rows) == n and budget.spent is None and budget.key_bytes == 0
    budget = Budget()
    parse("T.md", text + "| zz |\n", None, budget)
    assert budget.spent == f"at most {ct.MAX_KEY_BYTES // 1024} KiB of names are read"


def test_the_table_bound_at_its_edge() -> None:
    one = "| Name |\n|---|\n| thing |\n\n"
    budget = Budget()
    assert parse("T.md", one * ct.MAX_TABLES, None, budget).tables == ct.MAX_TABLES and budget.spent is None
    budget = Budget()
    assert parse("T.md", one * (ct.MAX_TABLES + 1), None, budget).tables == ct.MAX_TABLES
    assert budget.spent == f"at most {ct.MAX_TABLES} tables are read"


_NAME_CHARS = st.characters(exclude_categories=["Cs", "Cc"], exclude_characters="|\\[]`*_(),/\n\r")


@given(st.lists(st.text(_NAME_CHARS, min_size=2, max_size=12).filter(lambda s: len(s.strip()) > 1), min_size=1, max_size=6))
def test_a_cell_of_names_round_trips_through_aliases(names: list[str]) -> None:
    cleaned = list(dict.fromkeys(" ".join(n.split()) for n in names))
    cleaned = [n for n in cleaned if len(n) > 1]
    assert aliases(", ".join(names)) == cleaned


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\n\r"), max_size=8), min_size=1, max_size=6))
def test_cells_split_back_as_written(cells: list[str]) -> None:
    escaped = [c.replace("\\", "").replace("|", "\\|") for c in cells]
    line = "| " + " | ".join(escaped) + " |"
    assert split_cells(line) == [c.replace("\\|", "|").strip() for c in escaped]


@given(st.text(max_size=40), st.text(min_size=2, max_size=10))
def test_a_match_is_always_a_whole_token_of_the_draft(draft: str, key: str) -> None:
    key = clean_key(key)
    rows = [ct.Row(path="T.md", line=1, keys=(key,), text=key, order=0)] if len(key) > 1 else []
    found = _matches(draft, rows)
    folded, wanted = fold(draft), fold(key)
    expected = re.search(r"\w", wanted) is not None and any(
        folded.startswith(wanted, at)
        and not re.match(r"\w", folded[at - 1 : at] or " ")
        and not re.match(r"\w", folded[at + len(wanted) : at + len(wanted) + 1] or " ")
        for at in range(len(folded))
    )
    assert bool(found) == (expected and bool(rows))


@given(st.text(max_size=30))
def test_fold_changes_latin_case_only(text: str) -> None:
    folded = fold(text)
    assert fold(folded) == folded
    for a, b in zip(text, folded, strict=False):
        if a != b:
            assert a.isupper()


def test_the_matching_steps_bound_at_its_edge() -> None:
    """Names are looked for only where the draft holds their first word, and only so many places
    in all: a table of names sharing one common first word cannot make a match run long."""
    rows = parse("T.md", "| Name |\n|---|\n" + "".join(f"| the thing{i} |\n" for i in range(4)) + "| the end |\n", None, Budget()).rows
    draft = "the " * 9 + "the end"  # ten places hold 'the'; five names start with it
    found, stopped = matches(draft, rows, steps=50)
    assert not stopped and [m.key for m in found] == ["the end"]
    found, stopped = matches(draft, rows, steps=49)
    assert stopped and found == []  # the last name's places are past the bound: not tried
    assert matches("++ and --", parse("T.md", "| Name |\n|---|\n| ++ |\n", None, Budget()).rows) == ([], False)
