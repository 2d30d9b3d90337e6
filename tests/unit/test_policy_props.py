"""The scanners never raise on arbitrary text, report only lines that exist, never carry the text
they matched, still see a secret whatever text precedes it, and finish on adversarial megabytes.

No time is asserted against the wall clock (a loaded CI machine would make that flaky): the
per-test timeout bounds a catastrophic case, and each adversarial input has its expected findings.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import Issue, Severity
from protocol.methods.vaults import Kind, PiiPattern, PiiPolicy
from vaultd.policy import check_new_path, deny_path_issue, pii_findings, scan_secrets, secret_issues
from vaultd.policy.paths import path_key

BITS = st.sampled_from(
    [
        "ghp_",
        "sk-",
        "sk-ant-",
        "AKIA",
        "eyJ",
        ".",
        "-",
        "_",
        "=",
        ":",
        " ",
        "\n",
        "\r",
        "@",
        "+",
        "password",
        "token",
        "api_key",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "0123456789",
        "abcdef",
        "AIza",
        "xoxb-",
        "glpat-",
        "\uff21",
        "\uff10",
        "\u00e9",
        "e\u0301",
        "\x00",
        "\ud7ff",
        '"',
        "'",
    ]
)
TEXT = st.lists(st.one_of(BITS, st.text(max_size=8)), max_size=80).map("".join)
POLICY = PiiPolicy(email="deny", phone="warn", patterns=[PiiPattern(name="sid", regex=r"S\d{6}")], allow=["@x.org"])
GITHUB_TOKEN = "ghp_" + "aB3" * 12
EMAIL = "ada@example.com"


def _line_count(text: str) -> int:
    return text.count("\n") + 1


def _assert_pii_issues(issues: list[Issue], text: str) -> None:
    lines = [issue.line or 0 for issue in issues]
    assert lines == sorted(lines)
    for issue in issues:
        assert issue.code == "V07" and issue.path is None
        assert issue.line is not None and 1 <= issue.line <= _line_count(text)
        assert issue.message.startswith(f"line {issue.line}: ")
        assert (issue.severity is Severity.ERROR) == ("PII policy deny" in issue.message), issue.message


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_scanners_never_raise_and_report_only_real_lines(text: str) -> None:
    findings = scan_secrets(text)
    assert findings == scan_secrets(text)  # deterministic
    assert len(set(findings)) == len(findings)
    assert [f.line for f in findings] == sorted(f.line for f in findings)
    assert all(1 <= f.line <= _line_count(text) for f in findings)
    issues = secret_issues(text, "a.md")
    assert [(i.code, i.path, i.line) for i in issues] == [("V06", "a.md", f.line) for f in findings]
    for kind in Kind:
        _assert_pii_issues(pii_findings(text, POLICY, kind, "notes"), text)
        _assert_pii_issues(pii_findings(text, None, kind, "log"), text)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_a_secret_on_its_own_line_is_found_whatever_precedes_it(text: str) -> None:
    last = _line_count(text) + 1
    assert any(f.line == last for f in scan_secrets(f"{text}\n{GITHUB_TOKEN}")), "the token was missed"
    denied = pii_findings(f"{text}\n{EMAIL}", POLICY, Kind.ORG, "notes")
    assert any(i.line == last and i.severity is Severity.ERROR for i in denied), "the email was missed"


def _judged_in_full(rel: str) -> bool:
    """False where one issue ends the judgement: an empty path, or one that is not Unicode."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return rel != ""


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_path_checks_never_raise_and_judge_only_the_path(rel: str) -> None:
    plain = check_new_path(rel, note=False)
    as_note = check_new_path(rel)
    assert all(i.code == "V04" and i.path == rel and i.message for i in plain + as_note)
    assert as_note[: len(plain)] == plain and len(as_note) - len(plain) <= 1  # only the .md rule added
    if _judged_in_full(rel) and not rel.endswith(".md"):
        assert len(as_note) == len(plain) + 1
    assert check_new_path(rel, lambda key: [rel]) == as_note  # the path itself is no collision
    colliding = check_new_path(rel, lambda key: [key])
    if not as_note and path_key(rel) != rel:
        assert len(colliding) == 1 and "collides" in colliding[0].message
    else:
        assert colliding == as_note
    assert deny_path_issue(rel, []) is None
    denied = deny_path_issue(rel, ["**/*.md", "a/**", rel or "x"])
    assert denied is None or (denied.code == "P02" and denied.path == rel)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_findings_never_carry_the_text(text: str) -> None:
    for issue in secret_issues(text, "a.md"):
        assert issue.message.startswith(f"line {issue.line}: looks like ")


MB = 1_000_000
ADVERSARIAL = {
    "one letter": "a" * MB,
    "one digit": "1" * MB,
    "digits and hyphens": "1-" * (MB // 2),
    "plus groups": "+1 " * (MB // 3),
    "jwt prefixes": ("eyJ" + "a" * 7 + "-") * (MB // 11),
    "jwt segments": "eyJaaaaaaaaa." * (MB // 13),
    "assignments": "password=" * (MB // 9),
    "key runs": "api_key___:" * (MB // 11),
    "long key": "k" * MB + "=x",
    "at signs": "a@" * (MB // 2),
    "dots": "a." * (MB // 2),
    "base64": ("token " + "A" * 600 + " ") * (MB // 607),
    "sk prefixes": "sk-" * (MB // 3),
    "pem prefixes": "-----BEGIN " * (MB // 11),
    "full-width": ("\uff21\uff2b\uff29\uff21" + "\uff22" * 16 + " ") * (MB // 21),
    "short lines": "password: x\n" * (MB // 12),
}
# What each adversarial input is: a few are secrets by their rules (an assignment to a password
# key, three JWT segments, an AWS key id once NFKC-folded); none holds PII.
EXPECTED_RULES = {
    "assignments": {"credential"},
    "key runs": {"credential"},
    "jwt segments": {"jwt"},
    "full-width": {"aws-access-key-id"},
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_megabyte(name: str) -> None:
    text = ADVERSARIAL[name]
    findings = scan_secrets(text)
    assert {f.rule.value for f in findings} == EXPECTED_RULES.get(name, set())
    assert all(1 <= f.line <= _line_count(text) for f in findings)
    assert pii_findings(text, POLICY, Kind.ORG, "notes") == []
