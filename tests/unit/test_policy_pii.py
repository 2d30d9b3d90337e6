"""PII screening (V07): defaults per vault kind, actions per category and surface, the allow list,
phone and email edges, NFKC, and policy validation (P03)."""

from __future__ import annotations

import pytest

from protocol.errors import Severity
from protocol.methods.vaults import Kind, PiiPattern, PiiPolicy, PiiSurfaces
from vaultd.policy import effective_action, pattern_problem, pii_findings, validate_pii_policy


def found(text: str, policy: object = "deny", kind: Kind = Kind.ORG, surface: str = "notes") -> list[str]:
    issues = pii_findings(text, policy, kind, surface)  # type: ignore[arg-type]
    return [i.message.split(": ", 1)[1].split(" (", 1)[0] for i in issues]


def test_defaults_allow_personal_and_deny_org() -> None:
    text = "write to bob@example.com"
    assert pii_findings(text, None, Kind.PERSONAL, "notes") == []
    issues = pii_findings(text, None, Kind.ORG, "notes", path="notes/a.md")
    assert [(i.code, i.severity, i.line, i.path) for i in issues] == [("V07", Severity.ERROR, 1, "notes/a.md")]
    assert "bob@example.com" not in str(issues)


def test_actions_per_category_and_surface() -> None:
    policy = PiiPolicy(email=PiiSurfaces(notes="allow", log="deny"), phone="warn")
    text = "bob@example.com\n+1 415 555 0100"
    notes = pii_findings(text, policy, Kind.PERSONAL, "notes")
    assert [(i.severity, i.line) for i in notes] == [(Severity.WARNING, 2)]
    log = pii_findings(text, policy, Kind.PERSONAL, "log")
    assert [(i.severity, i.line) for i in log] == [(Severity.ERROR, 1), (Severity.WARNING, 2)]


def test_omitted_cells_take_the_kind_default() -> None:
    policy = PiiPolicy(email=PiiSurfaces(log="allow"))
    assert effective_action(policy, Kind.ORG, "notes", "email") == "deny"
    assert effective_action(policy, Kind.PERSONAL, "notes", "email") == "allow"
    assert effective_action(policy, Kind.ORG, "log", "email") == "allow"
    assert effective_action(policy, Kind.ORG, "log", "phone") == "deny"
    assert effective_action("allow", Kind.ORG, "log", "phone") == "allow"


@pytest.mark.parametrize(
    "text",
    [
        "bob@example.com",
        "Mail: first.last+tag@mail.example.co.uk.",
        "<alice_1@sub.example.org>",
        "\uff42\uff4f\uff42\uff20\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\uff0e\uff43\uff4f\uff4d",  # full-width
    ],
)
def test_emails_found(text: str) -> None:
    assert found(text) == ["an email address"]


@pytest.mark.parametrize("text", ["icon@2x.png", "@alice said", "user@localhost", "a @ b.com", "email me"])
def test_not_emails(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "+82 10 1234 5678",
        "+1 (415) 555-0100",
        "+44 20 7946 0958",
        "+4915112345678",
        "0044 20 7946 0958",
        "010-1234-5678",
        "(555) 123-4567",
        "555.123.4567",
        "02 1234 5678",
        "call +33 1 23 45 67 89 now",
        "\uff0b\uff18\uff12 \uff11\uff10 \uff11\uff12\uff13\uff14 \uff15\uff16\uff17\uff18",  # full-width
    ],
)
def test_phones_found(text: str) -> None:
    assert found(text) == ["a phone number"]


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-05",
        "2024-01-05 12:30:00",
        "2024-01-05T12:30:00Z",
        "05/01/2024",
        "1990-2020",
        "2019-2020-2021",
        "version 10.0.19041.1234",
        "v1.2.3",
        "192.168.100.200",
        "3.14159265",
        "12345678901",  # a bare number: an id, not a phone
        "10 20 30 40 50",
        "978-3-16-148410-0",  # ISBN
        "555-1234",  # too short without a country code
        "page 12:30-13:45",
    ],
)
def test_not_phones(text: str) -> None:
    assert found(text) == []


def test_allow_list() -> None:
    policy = PiiPolicy(
        email="deny",
        phone="deny",
        allow=["Owner@Example.org", "@corp.example", "+82 10 0000 0000"],
    )
    assert found("owner@example.org", policy) == []
    assert found("other@example.org", policy) == ["an email address"]
    assert found("anyone@corp.example", policy) == []
    assert found("anyone@CORP.example", policy) == []
    assert found("010 0000 0000 is not the same digits", policy) == ["a phone number"]
    assert found("+82-10-0000-0000", policy) == []
    # several numbers run together are never exempt
    assert found("+82 10 0000 0000 82 10 0000 0000", policy) == ["a phone number"]


def test_named_patterns() -> None:
    policy = PiiPolicy(
        patterns=[
            PiiPattern(name="student-id", regex=r"S\d{6}", action=PiiSurfaces(notes="deny", log="allow")),
            PiiPattern(name="badge", regex=r"B-\d{4}", action="warn"),
        ],
        allow=["S000000"],
    )
    issues = pii_findings("S123456 and B-1234\nS000000", policy, Kind.PERSONAL, "notes")
    assert [(i.line, i.severity) for i in issues] == [(1, Severity.WARNING), (1, Severity.ERROR)]
    assert "pattern student-id" in str(issues) and "S123456" not in str(issues)
    assert [i.severity for i in pii_findings("S123456", policy, Kind.PERSONAL, "log")] == []


def test_pattern_named_like_a_category_does_not_collide() -> None:
    policy = PiiPolicy(email="allow", patterns=[PiiPattern(name="email", regex=r"X\d{3}")])
    assert found("a@b.com X123", policy, Kind.PERSONAL) == ["pattern email"]


def test_messages_never_echo_values() -> None:
    text = "bob@example.com +82 10 1234 5678"
    for issue in pii_findings(text, "deny", Kind.PERSONAL, "log"):
        assert "bob" not in str(issue) and "1234" not in str(issue)


@pytest.mark.parametrize(
    ("regex", "ok"),
    [
        (r"S\d{6}", True),
        (r"[A-Z]{2}-\d{3,5}", True),
        (r"(?:\d{3}-)+\d{4}", True),
        ("(", False),
        ("a" * 513, False),
        ("a" * 512, True),
        (r"(a+)+$", False),
        (r"(?:\w*)*x", False),
        (r"(a)\1", False),
        (r"x?", False),
        (r"", False),
    ],
)
def test_pattern_validation(regex: str, ok: bool) -> None:
    assert (pattern_problem(regex) is None) == ok


def test_validate_policy_names_the_field() -> None:
    policy = PiiPolicy(patterns=[PiiPattern(name="a", regex="S\\d+"), PiiPattern(name="a", regex="(x+)+")])
    issues = validate_pii_policy(policy)
    assert [(i.code, i.path) for i in issues] == [
        ("P03", "$.pii.patterns[1].name"),
        ("P03", "$.pii.patterns[1].regex"),
    ]
    assert validate_pii_policy("deny") == [] and validate_pii_policy(None) == []


def test_unusable_pattern_fails_closed() -> None:
    policy = PiiPolicy(patterns=[PiiPattern(name="bad", regex="(")])
    issues = pii_findings("anything", policy, Kind.PERSONAL, "notes")
    assert [(i.code, i.severity) for i in issues] == [("V07", Severity.ERROR)]
