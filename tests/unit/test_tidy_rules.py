"""The migration rules of vault.tidy, one by one, as pure functions over a note's text: each changes
only the bytes it concerns, reports what it cannot be sure of, and finds nothing on a second run."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.issue_codes import IssueCode
from protocol.methods.tidy import TidyRule
from vaultd.policy.secrets import scan_secrets
from vaultd.tidy.model import MARKER, Work
from vaultd.tidy.redact import redact_line, redact_log
from vaultd.tidy.rules import tidy

TOKEN = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"  # a GitHub token's shape, made up
NOTES = {"other", "third", "home-moc"}


def run(text: str, *rules: TidyRule, typed: bool = True) -> Work:
    work = Work(path="n.md", text=text, typed=typed, resolves=lambda t: t in NOTES)
    tidy(work, rules or list(TidyRule))
    again = Work(path="n.md", text=work.text, typed=typed, resolves=lambda t: t in NOTES)
    tidy(again, rules or list(TidyRule))
    assert again.text == work.text, "a second run changes nothing"
    assert not again.changes
    return work


def codes(work: Work) -> set[str]:
    return {r.code for r in work.changes}


def test_escapes_are_re_emitted_plainly_and_other_keys_keep_their_bytes() -> None:
    text = '---\ntitle: "Caf\\u00e9"\nkeep:   "odd  spacing"   # a comment\nwrap: "one \\\n  two"\n---\n# Body\n'
    work = run(text, TidyRule.ESCAPES)
    assert work.text == '---\ntitle: Café\nkeep:   "odd  spacing"   # a comment\nwrap: one two\n---\n# Body\n'
    assert codes(work) == {IssueCode.T01}


def test_escapes_apply_in_an_open_vault_too() -> None:
    work = run('---\ntitle: "\\u00e9t\\u00e9"\n---\n', TidyRule.ESCAPES, typed=False)
    assert work.text == "---\ntitle: été\n---\n"


def test_enums_map_old_spellings_and_report_the_unknown() -> None:
    text = "---\ntype: Insight\nstatus: Active\nconfidence: possible | observed\n---\n# B\n"
    work = run(text, TidyRule.ENUMS)
    assert work.text == "---\ntype: insight\nstatus: active\nconfidence: speculative\n---\n# B\n"
    odd = run("---\nconfidence: gut feeling\nstatus: wip\n---\n", TidyRule.ENUMS)
    assert odd.text == "---\nconfidence: gut feeling\nstatus: wip\n---\n"
    assert {r.code for r in odd.reported} == {IssueCode.T02} and len(odd.reported) == 2


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("confirmed", "proven"),
        ("verified", "proven"),
        ("observed", "likely"),
        ("experimental", "tentative"),
        ("web_unverified", "speculative"),
    ],
)
def test_every_confidence_spelling(old: str, new: str) -> None:
    assert run(f"---\nconfidence: {old}\n---\n", TidyRule.ENUMS).text == f"---\nconfidence: {new}\n---\n"


def test_keys_rename_drop_and_move_links_and_paths() -> None:
    text = (
        "---\ntype: insight\ndate: 2024-01-02\n# kept comment\nalias: x\npriority: high\n"
        "related:\n  - '[[other]]'\n  - https://example.org/a\n---\n# B\n\nText.\n"
    )
    work = run(text, TidyRule.KEYS)
    assert work.text == (
        "---\ntype: insight\ncreated: 2024-01-02\n# kept comment\naliases: x\n"
        "source: https://example.org/a\n---\n# B\n\nText.\n\n## Relevant Notes\n\n- [[other]]\n"
    )
    assert codes(work) == {IssueCode.T03}


def test_keys_report_what_they_cannot_decide() -> None:
    text = "---\ntype: insight\ndate: 2024-01-02\ncreated: 2024-01-03\nmystery: 1\ndecided: 2024-01-01\n---\n"
    work = run(text, TidyRule.KEYS)
    assert work.text == text
    assert {r.what.split(":")[0] for r in work.reported} == {"date", "mystery", "decided"}


def test_keys_decided_dates_become_decided_at_on_a_decision() -> None:
    work = run("---\ntype: decision\ndecision_date: 2024-01-01\n---\n", TidyRule.KEYS)
    assert work.text == "---\ntype: decision\ndecided_at: 2024-01-01\n---\n"


def test_dropped_values_that_look_like_secrets_are_not_echoed() -> None:
    work = run(f"---\norigin: {TOKEN}\n---\n", TidyRule.KEYS)
    assert work.text == "---\n---\n"
    assert all(TOKEN not in str(r) for r in work.changes)
    assert any(MARKER in str(r) for r in work.changes)


def test_sources_lose_the_workspace_prefix_and_split() -> None:
    work = run('---\nsource: "work/a/x.md; work/b/y.md"\n---\n', TidyRule.SOURCES)
    assert work.text == "---\nsource:\n  - a/x.md\n  - b/y.md\n---\n"
    url = "---\nsource: https://example.org/a,b\n---\n"
    assert run(url, TidyRule.SOURCES).text == url  # a URL is never split


def test_topics_get_their_body_list_and_a_disagreeing_one_is_reported() -> None:
    work = run("---\ntopics:\n  - '[[home-moc]]'\n---\n# B\n\nText.\n", TidyRule.TOPICS)
    assert work.text.endswith("Text.\n\n## Topics\n\n- [[home-moc]]\n")
    other = "---\ntopics: ['[[home-moc]]']\n---\n# B\n\n## Topics\n\n- [[elsewhere]]\n"
    left = run(other, TidyRule.TOPICS)
    assert left.text == other
    assert [r.code for r in left.reported] == [IssueCode.T05]


def test_connections_fold_into_relevant_notes_before_topics() -> None:
    text = (
        "---\ntype: insight\n---\n# B\n\n## Relevant Notes\n\n- [[other]]\n\n## Connections (2024-01-02)\n\n"
        "- [[other]]\n- [[third]] (supports)\n\n```\n## Connections (in a fence)\n```\n\n## Topics\n\n- [[home-moc]]\n"
    )
    work = run(text, TidyRule.CONNECTIONS)
    assert work.text == (
        "---\ntype: insight\n---\n# B\n\n## Relevant Notes\n\n- [[other]]\n- [[third]] (supports)\n\n"
        "```\n## Connections (in a fence)\n```\n\n## Topics\n\n- [[home-moc]]\n"
    )
    assert [r.code for r in work.changes] == [IssueCode.T06]


def test_the_typed_rules_leave_an_open_vault_alone() -> None:
    text = "---\ndate: 2024-01-02\nconfidence: confirmed\nsource: work/a.md\ntopics: [x]\n---\n## Connections\n\n- [[other]]\n"
    assert run(text, typed=False).text == text


def test_secrets_in_body_and_frontmatter_are_redacted_and_never_named() -> None:
    text = f"---\ntitle: T\napi_token: {TOKEN}\n# comment {TOKEN}\n---\n# B\n\nkey = {TOKEN} end\n"
    work = run(text, TidyRule.SECRETS)
    assert TOKEN in work.text.split("---\n# B")[0]  # the comment is outside any value: reported, not guessed
    assert "api_token: " in work.text and f"api_token: {TOKEN}" not in work.text
    assert f"key = {MARKER} end\n" in work.text
    assert [r.code for r in work.reported] == [IssueCode.T07]
    assert all(TOKEN not in str(r) for r in [*work.changes, *work.reported])
    assert sorted(r.line for r in work.changes) == [3, 8]


def test_a_line_a_span_cannot_clear_is_redacted_whole() -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() and c.isascii() else c for c in TOKEN)  # fullwidth: only NFKC shows it
    assert redact_line(f"- note {wide}") == f"- {MARKER}"


def test_the_log_rule_touches_only_lines_with_secrets() -> None:
    text = f"# header\n2024-01-01 10:00  LINT  -  cli  —  fine\n2024-01-02 10:00  LINT  -  cli  —  {TOKEN}\r\n"
    after, lines = redact_log(text)
    assert lines == [3]
    assert after == f"# header\n2024-01-01 10:00  LINT  -  cli  —  fine\n2024-01-02 10:00  LINT  -  cli  —  {MARKER}\r\n"


@settings(max_examples=60, deadline=None)
@given(
    before=st.lists(st.text(alphabet=string.ascii_letters + " .,:-#", max_size=40), max_size=5),
    after=st.lists(st.text(alphabet=string.ascii_letters + " .,:-#", max_size=40), max_size=5),
    prefix=st.sampled_from(["", "token: ", "- ", "> ", "password = "]),
)
def test_redaction_leaves_no_secret_and_every_other_line_as_it_was(before: list[str], after: list[str], prefix: str) -> None:
    lines = [*before, f"{prefix}{TOKEN}", *after]
    text = "\n".join(lines) + "\n"
    work = Work(path="n.md", text=text, typed=False)
    tidy(work, [TidyRule.SECRETS])
    assert not scan_secrets(work.text)
    out = work.text.split("\n")
    assert len(out) == len(lines) + 1
    for i, line in enumerate(lines):
        if i != len(before) and not scan_secrets(line):
            assert out[i] == line
