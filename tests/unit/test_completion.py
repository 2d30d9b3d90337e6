"""Completion without a daemon: splitting a typed line, walking the real command tree, and the
daemon's name table (note names, folders, a shared name as its paths) as a pure function."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl import command_tree
from vaultctl.cli import app
from vaultctl.completion.engine import complete, split_line
from vaultd.vault.completion import build_table
from vaultd.vault.completion import complete as complete_names
from vaultd.vault.link_targets import name_key

ROOT: Any = command_tree.build(app)


@pytest.mark.parametrize(
    ("line", "words", "incomplete"),
    [
        ("vaultctl ", [], ""),
        ("vaultctl se", [], "se"),
        ("vaultctl show Alpha\\ P", ["show"], "Alpha P"),
        ('vaultctl show "Alpha P', ["show"], "Alpha P"),
        ("vaultctl show 'Alpha P", ["show"], "Alpha P"),
        ("vaultctl show 'Alpha Plan' ", ["show", "Alpha Plan"], ""),
        ("vaultctl search --vault=sa", ["search"], "--vault=sa"),
        ("vaultctl show Alpha\\", ["show"], "Alpha"),
    ],
)
def test_a_typed_line_splits_as_the_shell_splits_it(line: str, words: list[str], incomplete: str) -> None:
    assert split_line(line) == (words, incomplete)


def _values(line: str, shell: str = "bash") -> tuple[str, list[str]]:
    kind, items = complete(ROOT, line, shell)
    return kind, [value for value, _ in items]


def test_commands_subcommands_and_options_complete_from_the_tree() -> None:
    assert _values("vaultctl se") == ("plain", ["setup", "search", "set", "sessions"])
    assert _values("vaultctl log ")[1] == ["tail", "grep", "append"]
    assert "--no-pager" in _values("vaultctl show --no")[1]
    assert _values("vaultctl --co") == ("plain", ["--color"])
    assert "__complete" not in _values("vaultctl ")[1]


def test_enum_values_complete_for_options_and_arguments() -> None:
    assert _values("vaultctl --color ")[1] == ["auto", "always", "never"]
    assert _values("vaultctl vault add x /tmp --kind ")[1] == ["personal", "org"]
    assert _values("vaultctl completion ")[1] == ["bash", "zsh", "fish"]
    assert _values("vaultctl log tail --type IN")[1] == ["INGEST"]


def test_an_option_value_after_equals_is_completed_for_each_shell() -> None:
    assert _values("vaultctl --color=a")[1] == ["auto", "always"]  # bash replaces what follows '='
    for shell in ("zsh", "fish"):  # zsh and fish the whole word
        assert _values("vaultctl --color=a", shell)[1] == ["--color=auto", "--color=always"]


def test_files_and_folders_are_left_to_the_shell() -> None:
    assert _values("vaultctl new x --body ")[0] == "file"
    assert _values("vaultctl patch x --edits ")[0] == "file"
    assert _values("vaultctl vault add notes ")[0] == "dir"


def test_help_completes_command_words() -> None:
    assert _values("vaultctl help lo")[1] == ["log"]
    assert _values("vaultctl help log g")[1] == ["grep"]
    assert _values("vaultctl help nope ")[1] == []


def test_free_text_gets_nothing_and_a_value_is_taken_by_its_option() -> None:
    assert _values("vaultctl search ") == ("plain", [])  # a query is the user's to write
    assert _values("vaultctl search x --limit ") == ("plain", [])
    assert _values("vaultctl search --limit 5 ")[1] == []  # 5 went to --limit; the query is next
    assert _values("vaultctl show x -- --")[1] == []  # after --, a word is an argument


PATHS = [
    "README.md",
    "projects/alpha/Alpha Plan.md",
    "projects/alpha/Meeting Notes.md",
    "projects/beta/Meeting Notes.md",
    "projects/Straße.md",
    "people/Ada Lovelace.md",
    "private/Secret Plan.md",
]


def _never(_path: str) -> bool:
    return False


def test_names_complete_case_insensitively_and_a_shared_name_as_its_paths() -> None:
    table = build_table(1, PATHS)
    assert complete_names(table, "alp", 50, _never) == (["Alpha Plan"], False)
    assert complete_names(table, "MEET", 50, _never) == (["projects/alpha/Meeting Notes.md", "projects/beta/Meeting Notes.md"], False)
    assert complete_names(table, "p", 50, _never)[0] == ["people/", "private/", "projects/"]
    assert complete_names(table, "projects/", 50, _never)[0] == ["projects/alpha/", "projects/beta/", "projects/Straße.md"]
    assert complete_names(table, "PROJECTS/STRASSE", 50, _never)[0] == ["projects/Straße.md"]
    assert complete_names(table, "", 2, _never) == (["Ada Lovelace", "Alpha Plan"], True)


def test_hidden_notes_are_never_offered_nor_their_folders() -> None:
    table = build_table(1, PATHS)

    def hidden(path: str) -> bool:
        return path.startswith("private/")

    assert complete_names(table, "", 50, hidden)[0] == [
        "Ada Lovelace",
        "Alpha Plan",
        "projects/alpha/Meeting Notes.md",
        "projects/beta/Meeting Notes.md",
        "people/",
        "projects/",
        "README",
        "Straße",
    ]
    assert complete_names(table, "private/", 50, hidden)[0] == []


def _stem(path: str) -> str:
    return name_key(path.rpartition("/")[2].removesuffix(".md"))


SEGMENT = st.text(alphabet=st.sampled_from(list("abAB ßé해")), min_size=1, max_size=5)


@given(
    st.lists(st.lists(SEGMENT, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md"), max_size=30, unique=True),
    st.text(alphabet=st.sampled_from(list("abAB/ßs해")), max_size=4),
)
@settings(max_examples=200, deadline=None)
def test_every_name_offered_starts_with_the_prefix_and_names_what_exists(paths: list[str], prefix: str) -> None:
    table = build_table(1, paths)
    names, truncated = complete_names(table, prefix, 1000, _never)
    assert not truncated and len(names) == len(set(names))
    folded = name_key(prefix)
    for name in names:
        if "/" in prefix:
            assert name_key(name).startswith(folded)
        elif name.endswith("/"):
            assert name_key(name).startswith(folded) and "/" not in name[:-1]  # a top-level folder
        else:
            assert _stem(name).startswith(folded)
        if name.endswith("/"):
            assert any(p.startswith(name) for p in paths)
        elif name in paths:  # a note by path: in a folder, or one of notes sharing a name
            assert "/" in prefix or sum(1 for p in paths if _stem(p) == _stem(name)) > 1
        else:
            assert sum(1 for p in paths if _stem(p) == name_key(name)) == 1
