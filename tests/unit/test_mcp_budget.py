"""What ``tools/list`` costs an agent's context stays inside its budget, per toolset and per tool.

The figures come from the shim's own definitions (:mod:`benchmarks.mcp_tokens`), so a method added
to the table with a long summary or wordy field descriptions fails here, not in an agent's session.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.mcp_tokens import BUDGETS, estimate_tokens, listing, measure

PER_TOOL = 900  #: tokens one tool may cost; the largest (source_capture, with its item Struct) is about 600


@pytest.mark.parametrize("toolset", sorted(BUDGETS))
def test_the_toolset_fits_its_budget(toolset: str) -> None:
    figures = measure(toolset)
    assert figures["tokens"] <= BUDGETS[toolset], figures


def test_no_one_tool_takes_more_than_its_share() -> None:
    heavy = {t["name"]: n for t in listing("all") if (n := estimate_tokens(json.dumps(t, separators=(",", ":")))) > PER_TOOL}
    assert not heavy, heavy


def test_the_estimate_counts_words_numbers_and_punctuation() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("note") == 1
    assert estimate_tokens("frontmatter") == 2  # 11 letters: two pieces
    assert estimate_tokens("2097152") == 3
    assert estimate_tokens('{"a":"b"}') == estimate_tokens('{"') + 1 + estimate_tokens('":"') + 1 + estimate_tokens('"}')
