"""The two ledgers as notes: what a source note and a claim note hold, read from frontmatter.

A ledger note is an ordinary note whose frontmatter has ``ledger: source`` or ``ledger: claim``;
Obsidian shows it, links reach it, and every write to it is validated like any note, plus the
ledger rules (:mod:`vaultd.sources.rules`). Reading is lenient: a malformed field reads as absent
here and is reported by validation, so a hand-edited ledger never breaks a listing.

Source note keys: ``source_kind``, ``sha256``, ``size``, ``media_type``, ``captured``, ``origin``,
``origins`` (further origins of the same bytes), ``raw`` (a link to the raw copy), ``authority``,
``independence``, ``review``, ``state``, ``synthetic``, ``pages``, ``expires``, ``runner``
(plans), ``doc_*`` (what the format's metadata says).
Claim note keys: ``claim``, ``page``, ``state``, ``confidence``, ``risk``, ``support``,
``contradictions``, ``assessment``.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods.sources import Authority, ClaimState, Confidence, Review, Risk, SourceKind, SourceState
from vaultd.sources.origins import independence_key

LEDGER: Final = "ledger"
SOURCE: Final = "source"
CLAIM: Final = "claim"

SOURCE_KEYS: Final = frozenset(
    {
        "source_kind",
        "sha256",
        "size",
        "media_type",
        "captured",
        "origin",
        "origins",
        "raw",
        "authority",
        "independence",
        "review",
        "state",
        "synthetic",
        "pages",
        "expires",
        "runner",
        "doc_title",
        "doc_author",
        "doc_pages",
        "doc_created",
        "doc_language",
        "doc_size",
    }
)
CLAIM_KEYS: Final = frozenset({"claim", "page", "state", "risk", "support", "contradictions", "assessment"})
#: Keys the typed schema accepts on a note that declares ``ledger`` (beside its own keys).
LEDGER_KEYS: Final = frozenset({LEDGER}) | SOURCE_KEYS | CLAIM_KEYS

_SHA: Final = re.compile(r"[0-9a-f]{64}")
_WIKI: Final = re.compile(r"^\s*!?\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]\s*$")
MAX_LIST: Final = 64
MAX_SLUG_CHARS: Final = 80


def slug(title: str) -> str:
    """A ledger note's file name from its title (a source's, a claim's): letters and digits kept, the rest one '-'."""
    text = unicodedata.normalize("NFC", title)
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-_")
    return text[:MAX_SLUG_CHARS].strip("-_") or "source"


def ledger_kind(data: dict[str, Any] | None) -> str | None:
    """``source``, ``claim``, or None for any other note."""
    if not data:
        return None
    kind = data.get(LEDGER)
    return kind if kind in (SOURCE, CLAIM) else None


def link_target(value: object) -> str | None:
    """The target of ``[[target]]`` (or a bare name) as a ledger field writes it."""
    if not isinstance(value, str) or not value.strip():
        return None
    m = _WIKI.match(value)
    return m.group(1).strip() if m else value.strip()


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _strings(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()][:MAX_LIST]
    return []


def _date(value: object) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


@dataclass(frozen=True, slots=True)
class SourceEntry:
    """One source note, read leniently."""

    path: str
    title: str
    kind: str | None
    state: str
    sha256: str | None
    size: int | None
    origin: str | None
    raw: str | None  #: the raw copy's link target as written
    independence: str
    authority: str | None
    review: str | None
    synthetic: bool
    media_type: str | None
    captured: str | None
    expires: dt.date | None
    pages: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: str, title: str, data: dict[str, Any]) -> SourceEntry:
        sha = _text(data, "sha256")
        sha = sha.lower() if sha and _SHA.fullmatch(sha.lower()) else None
        origin = _text(data, "origin")
        size = data.get("size")
        return cls(
            path=path,
            title=title,
            kind=_text(data, "source_kind"),
            state=_text(data, "state") or SourceState.ACTIVE.value,
            sha256=sha,
            size=size if isinstance(size, int) and not isinstance(size, bool) else None,
            origin=origin,
            raw=link_target(data.get("raw")),
            independence=independence_key(_text(data, "independence"), origin, sha),
            authority=_text(data, "authority"),
            review=_text(data, "review"),
            synthetic=data.get("synthetic") is True,
            media_type=_text(data, "media_type"),
            captured=str(data["captured"]) if isinstance(data.get("captured"), (str, dt.date)) else None,
            expires=_date(data.get("expires")),
            pages=_strings(data, "pages"),
        )

    def active_on(self, today: dt.date) -> bool:
        """Usable as support on ``today``: active, not synthetic, not expired."""
        return self.state == SourceState.ACTIVE.value and not self.synthetic and (self.expires is None or self.expires >= today)


@dataclass(frozen=True, slots=True)
class ClaimEntry:
    """One claim note, read leniently."""

    path: str
    claim: str
    page: str | None  #: the page link's target as written
    state: str
    confidence: str | None
    risk: str
    assessment: str | None
    support: list[str]
    contradictions: list[str]

    @classmethod
    def read(cls, path: str, title: str, data: dict[str, Any]) -> ClaimEntry:
        return cls(
            path=path,
            claim=_text(data, "claim") or title,
            page=link_target(data.get("page")),
            state=_text(data, "state") or ClaimState.PROPOSED.value,
            confidence=_text(data, "confidence"),
            risk=_text(data, "risk") or Risk.LOW.value,
            assessment=_text(data, "assessment"),
            support=_strings(data, "support"),
            contradictions=_strings(data, "contradictions"),
        )


def _v20(path: str, message: str) -> Issue:
    return Issue(code=IssueCode.V20, message=message, path=path)


def _enum_issue(data: dict[str, Any], key: str, allowed: type[Any], path: str) -> list[Issue]:
    if key in data and data[key] not in {m.value for m in allowed}:
        return [_v20(path, f"{key}: must be one of {', '.join(m.value for m in allowed)}")]
    return []


def _list_issue(data: dict[str, Any], key: str, path: str) -> list[Issue]:
    value = data.get(key)
    if key in data and not (isinstance(value, list) and len(value) <= MAX_LIST and all(isinstance(v, str) and v.strip() for v in value)):
        return [_v20(path, f"{key}: must be a list of at most {MAX_LIST} links or names")]
    return []


def field_issues(data: dict[str, Any], path: str) -> list[Issue]:
    """V20 for a ledger note's fields that do not have their shape; messages never echo a value."""
    kind = data.get(LEDGER)
    if kind not in (SOURCE, CLAIM):
        return [_v20(path, "ledger: must be source or claim")]
    issues: list[Issue] = []
    if kind == SOURCE:
        issues += _enum_issue(data, "source_kind", SourceKind, path)
        issues += _enum_issue(data, "state", SourceState, path)
        issues += _enum_issue(data, "authority", Authority, path)
        issues += _enum_issue(data, "review", Review, path)
        if "sha256" in data and not (isinstance(data["sha256"], str) and _SHA.fullmatch(data["sha256"])):
            issues.append(_v20(path, "sha256: must be 64 lowercase hexadecimal digits"))
        if "size" in data and (isinstance(data["size"], bool) or not isinstance(data["size"], int) or data["size"] < 0):
            issues.append(_v20(path, "size: must be a whole number of bytes"))
        if "synthetic" in data and not isinstance(data["synthetic"], bool):
            issues.append(_v20(path, "synthetic: must be true or false"))
        for key in ("captured", "expires"):
            if key in data and _date(data[key]) is None:
                issues.append(_v20(path, f"{key}: must be a date written YYYY-MM-DD"))
        issues += _list_issue(data, "pages", path) + _list_issue(data, "origins", path)
    else:
        if not isinstance(data.get("claim"), str) or not data["claim"].strip() or "\n" in data["claim"]:
            issues.append(_v20(path, "claim: is required: the statement, in one line"))
        if link_target(data.get("page")) is None:
            issues.append(_v20(path, "page: is required: a link to the note the claim is about"))
        issues += _enum_issue(data, "state", ClaimState, path)
        issues += _enum_issue(data, "risk", Risk, path)
        issues += _enum_issue(data, "confidence", Confidence, path)
        issues += _list_issue(data, "support", path) + _list_issue(data, "contradictions", path)
    return issues
