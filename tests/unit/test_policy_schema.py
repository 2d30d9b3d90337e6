"""Schema profiles (V01) and old debt turning into warnings."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.errors import Issue, Severity
from protocol.methods.vaults import SchemaProfile
from vaultd.policy import NoteType, new_issues_only, schema_issues

TYPED = SchemaProfile.TYPED
P = "notes/a.md"


def good(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"type": "insight", "title": "A", "description": "One line."}
    data.update(extra)
    return data


def msgs(data: dict[str, Any] | None, present: bool = True, **kw: Any) -> list[str]:
    issues = schema_issues(TYPED, data, present, P, **kw)
    assert all(i.code == "V01" and i.path == P for i in issues)
    return [i.message for i in issues]


def test_open_profile_checks_only_the_mapping() -> None:
    assert schema_issues(SchemaProfile.OPEN, {"anything": [1, {"x": None}]}, True, P) == []
    assert schema_issues(SchemaProfile.OPEN, None, False, P) == []
    issues = schema_issues(SchemaProfile.OPEN, None, True, P)
    assert [(i.code, i.message) for i in issues] == [("V01", "the frontmatter must be a mapping of keys to values")]


def test_typed_minimal_notes_pass() -> None:
    for t in NoteType:
        assert msgs(good(type=t.value)) == [], t
    assert msgs({"type": "moc", "title": "Map"}) == []
    assert msgs({"type": "insight", "description": "d"}, h1="Heading") == []


def test_typed_needs_frontmatter_type_title_description() -> None:
    assert msgs(None, present=False) == ["the note needs frontmatter: a typed vault requires at least type and description"]
    assert [m.split(":")[0] for m in msgs({})] == ["type", "title", "description"]
    assert msgs(good(type="essay"))[0].startswith("type: must be one of insight")
    assert msgs(good(title=""))[0].startswith("title:")
    assert msgs(good(description="two\nlines"))[0].startswith("description:")
    assert msgs(good(description="x" * 500)) == []
    assert msgs(good(description="x" * 501))[0].startswith("description:")


def test_domains() -> None:
    assert msgs(good(domain="research")) == []
    assert msgs(good(domain="ai-practice")) == []
    # A domain outside the vault's set has its own code, V16 (no longer one of V01's messages).
    issues = schema_issues(TYPED, good(domain="finance"), True, P)
    assert [(i.code, i.path) for i in issues] == [("V16", P)] and issues[0].message.startswith("domain:")
    assert msgs(good(domain="finance"), domains={"finance"}) == []
    assert msgs(good()) == []  # a missing domain is lint, not a write error
    # The open profile checks domains only once the vault declares some.
    assert schema_issues(SchemaProfile.OPEN, {"domain": "anything"}, True, P) == []
    assert [i.code for i in schema_issues(SchemaProfile.OPEN, {"domain": "anything"}, True, P, domains={"finance"})] == ["V16"]
    assert schema_issues(SchemaProfile.OPEN, {"domain": "finance"}, True, P, domains={"finance"}) == []


@pytest.mark.parametrize(
    ("key", "value", "ok"),
    [
        ("status", "active", True),
        ("status", "draft", True),
        ("status", "archived", True),
        ("status", "Active", False),
        ("confidence", "proven", True),
        ("confidence", "likely", True),
        ("confidence", "certain", False),
        ("created", "2024-02-29", True),
        ("created", "2023-02-29", False),
        ("updated", "2024-1-5", False),
        ("updated", "2024-01-05T10:00:00", False),
        ("updated", 20240105, False),
        ("topics", ["[[Map]]", "Other"], True),
        ("topics", "[[Map]]", False),
        ("topics", ["ok", ""], False),
        ("tags", "one", True),
        ("tags", ["a", "b"], True),
        ("tags", [1], False),
        ("aliases", ["A"], True),
        ("source", "https://example.org", True),
        ("source", ["a", "b"], True),
        ("superseded_by", "[[B]]", True),
        ("superseded_by", ["[[B]]"], False),
        ("favourite_colour", "blue", False),
    ],
)
def test_field_rules(key: str, value: Any, ok: bool) -> None:
    issues = msgs(good(**{key: value}))
    assert (issues == []) == ok, issues
    if not ok:
        assert issues[0].startswith(key)
        if isinstance(value, str) and len(value) >= 4:
            assert value not in issues[0]  # values are never echoed


def test_superseded_needs_superseded_by() -> None:
    assert msgs(good(status="superseded")) == ["superseded_by: is required when status is superseded"]
    assert msgs(good(status="superseded", superseded_by="[[B]]")) == []


def ref(**extra: Any) -> dict[str, Any]:
    return good(type="reference", **extra)


@pytest.mark.parametrize(
    ("key", "value", "ok"),
    [
        ("citekey", "smith2020:deep_learning-1", True),
        ("citekey", "x" * 64, True),
        ("citekey", "x" * 65, False),
        ("citekey", "has space", False),
        ("doi", "10.1234/example", True),
        ("doi", "10.123456789/x.y(z)", True),
        ("doi", "10.123/x", False),
        ("doi", "10.1234567890/x", False),
        ("doi", "10.1234/", False),
        ("doi", "10.1234/a b", False),
        ("arxiv_id", "2502.04321", True),
        ("arxiv_id", "2502.04321v2", True),
        ("arxiv_id", "1412.6980", True),
        ("arxiv_id", "1412.69801", False),
        ("arxiv_id", "1501.0001", False),
        ("arxiv_id", "2513.04321", False),
        ("arxiv_id", "2502.04321v0", False),
        ("arxiv_id", "hep-th/9901001", True),
        ("arxiv_id", "math.GT/0309136v1", True),
        ("arxiv_id", "hep-th/9913001", False),
        ("authors", ["A. Author"], True),
        ("authors", ["a"] * 100, True),
        ("authors", ["a"] * 101, False),
        ("authors", [], False),
        ("authors", ["ok", " "], False),
        ("authors", "A. Author", False),
        ("year", 2020, True),
        ("year", 1000, True),
        ("year", 2100, True),
        ("year", 999, False),
        ("year", 2101, False),
        ("year", "2020", False),
        ("year", True, False),
        ("venue", "v" * 200, True),
        ("venue", "v" * 201, False),
        ("venue", "", False),
    ],
)
def test_reference_identifiers(key: str, value: Any, ok: bool) -> None:
    issues = msgs(ref(**{key: value}))
    assert (issues == []) == ok, issues


def test_reference_keys_refused_on_other_types() -> None:
    assert msgs(good(doi="10.1234/x")) == ["doi: is allowed on reference notes only"]


def test_citekey_unique_ignoring_case() -> None:
    owners = {"smith2020": ["notes/a.md", "notes/b.md"]}
    issues = msgs(ref(citekey="Smith2020"), citekey_owners=lambda k: owners.get(k, []))
    assert issues == ["citekey: already used by 'notes/b.md' (ignoring case); choose another"]


def issue(code: str, message: str, line: int | None = None, severity: Severity = Severity.ERROR) -> Issue:
    return Issue(code=code, message=message, line=line, severity=severity)


def test_new_issues_only_downgrades_old_debt() -> None:
    before = [issue("V01", "status: must be one of x", 3), issue("V06", "line 4: secret")]
    after = [
        issue("V01", "status: must be one of x", 9),  # moved, same debt
        issue("V01", "domain: must be one of y"),  # new
        issue("V06", "line 4: secret"),  # never downgraded
        issue("V03", "dead link", severity=Severity.WARNING),
    ]
    errors, warnings = new_issues_only(before, after)
    assert [(i.code, i.message) for i in errors] == [
        ("V01", "domain: must be one of y"),
        ("V06", "line 4: secret"),
    ]
    assert [(i.code, i.severity, i.line) for i in warnings] == [
        ("V01", Severity.WARNING, 9),
        ("V03", Severity.WARNING, None),
    ]


def test_new_issues_only_on_create_keeps_everything_as_errors() -> None:
    errors, warnings = new_issues_only([], [issue("V01", "type: is required")])
    assert len(errors) == 1 and warnings == []
