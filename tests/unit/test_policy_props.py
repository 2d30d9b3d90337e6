"""The scanners never raise on arbitrary text, and stay linear on adversarial input.

Time is measured, not asserted against the wall clock (a loaded CI machine would make that flaky):
the per-test timeout bounds a catastrophic case, and ``-s`` prints the measurements.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.methods.vaults import Kind, PiiPattern, PiiPolicy
from vaultd.policy import check_new_path, deny_path_issue, pii_findings, scan_secrets, secret_issues

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
POLICY = PiiPolicy(
    email="deny", phone="warn", patterns=[PiiPattern(name="sid", regex=r"S\d{6}")], allow=["@x.org"]
)


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_scanners_never_raise(text: str) -> None:
    for finding in scan_secrets(text):
        assert finding.line >= 1
    secret_issues(text, "a.md")
    for kind in Kind:
        pii_findings(text, POLICY, kind, "notes")
        pii_findings(text, None, kind, "log")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_path_checks_never_raise(rel: str) -> None:
    check_new_path(rel, lambda key: [key])
    check_new_path(rel, note=False)
    deny_path_issue(rel, ["**/*.md", "a/**", rel or "x"])


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


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_megabyte(name: str) -> None:
    text = ADVERSARIAL[name]
    start = time.perf_counter()
    scan_secrets(text)
    middle = time.perf_counter()
    pii_findings(text, POLICY, Kind.ORG, "notes")
    end = time.perf_counter()
    print(f"{name}: secrets {middle - start:.2f}s, pii {end - middle:.2f}s for {len(text)} chars")
