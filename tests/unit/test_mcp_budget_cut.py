"""The shim's cutting of a result or an error to its byte budget (pure functions)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl.mcp.budget import HARD_CAP, MIN_BUDGET, _cut, call_budget, fit_error


def _encoded(body: Any) -> int:
    return len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())


@settings(max_examples=60, deadline=None)
@given(
    hits=st.lists(st.fixed_dictionaries({"path": st.text(min_size=1, max_size=40), "snippet": st.text(max_size=300)}), max_size=60),
    body_text=st.text(max_size=3000),
    room=st.integers(min_value=600, max_value=6000),
)
def test_a_cut_result_fits_and_counts_what_it_left_out(hits: list[dict[str, Any]], body_text: str, room: int) -> None:
    body: dict[str, Any] = {"hits": list(hits), "body": body_text, "total": len(hits)}
    before_hits, before_body = len(hits), len(body_text.encode())
    left_out = _cut(body, room)
    if left_out is None:  # nothing left to cut (every list and string small)
        return
    assert _encoded(body) <= room
    kept = body["hits"]
    assert kept == hits[: len(kept)], "a list keeps its first items, in order"
    if "$.hits" in left_out:
        assert left_out["$.hits"] == {"items": before_hits - len(kept), "of": before_hits}
    if "$.body" in left_out:
        assert body_text.startswith(body["body"])
        assert left_out["$.body"]["of"] == before_body
    assert body["total"] == before_hits, "numbers are never cut"


def test_an_error_keeps_its_code_and_counts_the_issues_it_cut() -> None:
    issues = [{"code": "V03", "message": f"link {i} would break", "path": f"n/{i}.md"} for i in range(500)]
    body = {"code": "VALIDATION", "message": "the delete breaks links", "issues": issues, "issues_omitted": 7, "candidates": []}
    cut = fit_error(dict(body), 4096)
    assert _encoded(cut) <= 4096 and cut["code"] == "VALIDATION" and cut["message"] == body["message"]
    assert cut["issues"] == issues[: len(cut["issues"])] and cut["issues"]
    assert cut["issues_omitted"] == 7 + 500 - len(cut["issues"])


def test_a_call_may_ask_for_a_budget_within_the_range() -> None:
    assert call_budget(None, 5000) == 5000
    assert call_budget({"io.vaultd/maxResultBytes": 9000}, 5000) == 9000
    assert call_budget({"io.vaultd/maxResultBytes": HARD_CAP + 1}, 5000) == HARD_CAP
    assert call_budget({"io.vaultd/maxResultBytes": HARD_CAP}, 5000) == HARD_CAP
    assert call_budget({"io.vaultd/maxResultBytes": MIN_BUDGET - 1}, 5000) == MIN_BUDGET
    assert call_budget({"io.vaultd/maxResultBytes": "lots"}, 5000) == 5000
    assert call_budget({"io.vaultd/maxResultBytes": True}, 5000) == 5000
