"""Secret screening (V06): each rule at its edge, no value ever echoed, NFKC evasion caught.

Test tokens are assembled at run time so this file holds nothing a secret scanner would flag.
"""

from __future__ import annotations

import hashlib

import pytest

from protocol.methods.vaults import Kind
from vaultd.policy import SecretRule, path_screen_issues, scan_secret_lines, scan_secrets, secret_issues

R = SecretRule
B62 = "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI2kM4oP6rS8uW0yZ2"  # mixed case and digits


def rules(text: str) -> set[SecretRule]:
    return {f.rule for f in scan_secrets(text)}


POSITIVE = [
    (R.PRIVATE_KEY, "-----BEGIN " + "RSA PRIVATE KEY-----"),
    (R.PRIVATE_KEY, "-----BEGIN " + "OPENSSH PRIVATE KEY-----"),
    (R.PRIVATE_KEY, "-----BEGIN " + "PRIVATE KEY-----"),
    (R.PRIVATE_KEY, "-----BEGIN " + "PGP PRIVATE KEY BLOCK-----"),
    (R.AWS_ACCESS_KEY_ID, "key id " + "AKIA" + "IOSFODNN7EXAMPL1"),
    (R.AWS_ACCESS_KEY_ID, "ASIA" + "Z" * 16),
    (R.AWS_SECRET_KEY, "aws_secret_access_key = " + B62[:40].replace("M", "/")),
    (R.GITHUB_TOKEN, "ghp_" + B62[:36]),
    (R.GITHUB_TOKEN, "gho_" + B62[:36]),
    (R.GITHUB_TOKEN, "ghu_" + B62[:36]),
    (R.GITHUB_TOKEN, "ghs_" + B62[:36]),
    (R.GITHUB_TOKEN, "ghr_" + B62[:36]),
    (R.GITHUB_TOKEN, "github_pat_" + B62[:22] + "_" + B62[:30]),
    (R.GITLAB_TOKEN, "glpat-" + B62[:20]),
    (R.SLACK_TOKEN, "xoxb-" + "1234567890-" + B62[:12]),
    (R.SLACK_TOKEN, "xoxp-" + B62[:10]),
    (R.STRIPE_KEY, "sk_live_" + B62[:24]),
    (R.STRIPE_KEY, "rk_live_" + B62[:24]),
    (R.GOOGLE_API_KEY, "AIza" + B62[:35]),
    (R.ANTHROPIC_KEY, "sk-ant-" + "api03-" + B62[:40]),
    (R.OPENAI_KEY, "sk-" + B62[:48]),
    (R.OPENAI_KEY, "sk-proj-" + B62[:40]),
    (R.JWT, "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + B62[:43]),
    (R.CREDENTIAL, "password: " + "hunter22"),
    (R.CREDENTIAL, "DB_PASSWORD=" + "correcthorse"),
    (R.CREDENTIAL, 'API_KEY="' + "abc-1234-def" + '"'),
    (R.CREDENTIAL, "token = " + "t0k3n-value"),
    (R.CREDENTIAL, '"client_secret": "' + "s3cr3t value" + '"'),
    (R.CREDENTIAL, "**Password**: " + "P@ssw0rd!"),
    (R.HIGH_ENTROPY, "Authorization: Bearer " + B62[:40]),
    (R.HIGH_ENTROPY, "the deploy key is " + B62[:36]),
]


@pytest.mark.parametrize(("rule", "text"), POSITIVE)
def test_rule_fires(rule: SecretRule, text: str) -> None:
    assert rule in rules("intro\n" + text + "\noutro")
    assert scan_secrets("intro\n" + text + "\noutro")[0].line == 2


@pytest.mark.parametrize(("rule", "text"), POSITIVE)
def test_issue_never_carries_the_value(rule: SecretRule, text: str) -> None:
    issues = secret_issues(text, "notes/a.md")
    assert issues and all(i.code == "V06" for i in issues)
    value = text.split(" ", 1)[-1].split("=", 1)[-1].strip('"* ')
    for issue in issues:
        assert value not in str(issue)
        assert value[:12] not in str(issue)
        assert f"(rule {rule.value})" in issue.message or rule in {R.CREDENTIAL, R.HIGH_ENTROPY}


NEGATIVE = [
    "AKIA" + "Z" * 15,  # one short
    "XAKIA" + "Z" * 16,  # glued to a word
    "ghp_" + B62[:35],  # one short
    "glpat-" + B62[:19],
    "xoxb-" + "short",
    "sk_test_" + B62[:24],  # test keys are not live credentials
    "AIza" + B62[:34],
    "sk-learn-compatible-estimators-for-time-series",  # a slug, not a key
    "task-" + B62[:40],  # sk- inside a word
    "eyJhbGciOiJIUzI1NiJ9.short",  # two segments
    "password: " + "hunter2",  # 7 characters
    "password: <your-password>",
    "password: ${DB_PASSWORD}",
    "password: {{ vault_password }}",
    "password: $DB_PASSWORD",
    "password: xxxxxxxx",
    "password: ********",
    "password: changeme123",
    "password: example-password",
    "token: tokenization",  # prose, no digit or symbol
    "token_count: 12345678",  # a count
    "tokenizer: bert-base-uncased-v2",  # key word inside a longer word
    "author: JohnSmith2020",
    "secretary: Jane-Doe-1",
    "The password is stored in the team vault.",
    "sha256: " + hashlib.sha256(b"x").hexdigest(),
    hashlib.sha256(b"y").hexdigest(),  # a bare digest
    "commit " + hashlib.sha1(b"z").hexdigest(),
    "token digest " + hashlib.sha256(b"w").hexdigest(),  # hex on a hash line
    "api key docs: " + "A" * 40,  # low entropy
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_rule_stays_quiet(text: str) -> None:
    assert scan_secrets(text) == []


def test_password_length_edge() -> None:
    assert scan_secrets("password: " + "a" * 7) == []
    assert [f.rule for f in scan_secrets("password: " + "a" * 6 + "b1")] == [R.CREDENTIAL]
    assert [f.rule for f in scan_secrets("password: " + "abcdefgh")] == [R.CREDENTIAL]


def test_bare_hex_digest_is_not_flagged_but_keyed_random_hex_is() -> None:
    digest = hashlib.sha256(b"note").hexdigest()
    assert scan_secrets(f"Checksum {digest} recorded.\n{digest}\n") == []
    assert [f.rule for f in scan_secrets(f"api_key {digest}")] == [R.HIGH_ENTROPY]


def test_fullwidth_evasion_is_caught() -> None:
    token = "ghp_" + B62[:36]
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in token)
    assert wide != token
    found = scan_secrets("ok\n" + wide)
    assert [(f.rule, f.line) for f in found] == [(R.GITHUB_TOKEN, 2)]
    assert token not in str(secret_issues(wide)) and wide not in str(secret_issues(wide))


def test_each_rule_and_line_reported_once() -> None:
    token = "ghp_" + B62[:36]
    found = scan_secrets(f"{token} {token}\n\n{token}")
    assert [(f.rule, f.line) for f in found] == [(R.GITHUB_TOKEN, 1), (R.GITHUB_TOKEN, 3)]


def test_specific_rule_hides_generic_ones_on_its_line() -> None:
    found = scan_secrets("GITHUB_TOKEN=ghp_" + B62[:36])
    assert [f.rule for f in found] == [R.GITHUB_TOKEN]


def test_message_shape() -> None:
    issue = secret_issues("a\n" * 11 + "ghp_" + B62[:36], "notes/x.md")[0]
    assert issue.message == ("line 12: looks like a GitHub token (rule github-token); remove it — secrets are never stored")
    assert (issue.path, issue.line) == ("notes/x.md", 12)


def test_line_scan_keeps_original_line_numbers() -> None:
    found = scan_secret_lines([(7, "fine"), (40, "xoxb-" + B62[:12])])
    assert [(f.rule, f.line) for f in found] == [(R.SLACK_TOKEN, 40)]


def test_crlf_lines() -> None:
    assert [f.line for f in scan_secrets("a\r\nb\r\npassword: " + "s3cretpass\r\n")] == [3]


# -- a token's edges are its own characters' edges ---------------------------------------------

JOINED = [
    (rule, token, shape)
    for rule, token, joiners in [
        (R.GITHUB_TOKEN, "ghp_" + B62[:36], "-_"),
        (R.STRIPE_KEY, "sk_live_" + B62[:24], "-_"),
        (R.SLACK_TOKEN, "xoxb-" + B62[:12], "_"),  # '-' belongs to a Slack token
    ]
    for shape in ["{t}-2", "{t}_old", "old_{t}", "x-{t}", "x_{t}_y"]
    if all(c in joiners for c in shape.replace("{t}", "").strip("2oldxy"))
]


@pytest.mark.parametrize(("rule", "token", "shape"), JOINED)
def test_a_token_joined_by_a_character_it_cannot_hold_is_still_found(rule: SecretRule, token: str, shape: str) -> None:
    """'-' cannot be part of a GitHub or Stripe token, '_' not of a Slack one: beside it the token is whole."""
    assert rule in rules(shape.format(t=token))


@pytest.mark.parametrize(
    ("rule", "token"),
    [
        (R.GOOGLE_API_KEY, "AIza" + B62[:35]),
        (R.GITLAB_TOKEN, "glpat-" + B62[:20]),
        (R.ANTHROPIC_KEY, "sk-ant-" + B62[:24]),
        (R.GITHUB_TOKEN, "ghp_" + B62[:36]),
        (R.AWS_ACCESS_KEY_ID, "AKIA" + "Z" * 16),
    ],
)
@pytest.mark.parametrize("shape", ["notes/{t}-copy.md", "notes/old-{t}-2.md", "{t}_v2/note.md", "a/backup_{t}.md", "a/{t}.md"])
def test_a_name_holding_a_token_is_screened_whatever_the_name_adds(rule: SecretRule, token: str, shape: str) -> None:
    """A slug joins words with '-': in a name, what follows or precedes a token is the name's own."""
    issues = path_screen_issues(shape.format(t=token), None, Kind.PERSONAL)
    assert [i.code for i in issues] == ["V06"] and rule.value in issues[0].message and token not in issues[0].message


@pytest.mark.parametrize(
    "name", ["notes/my-long-project-notes-2024.md", "sk-lists/groceries.md", "daily/2024-01-02.md", "a/task-Review_Plan.md"]
)
def test_ordinary_names_pass_the_name_screen(name: str) -> None:
    assert path_screen_issues(name, None, Kind.PERSONAL) == []
