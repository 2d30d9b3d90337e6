"""Frontmatter schema profiles (V01) and the rule that old debt warns instead of blocking.

The ``open`` profile checks structure only: a header that exists must be a mapping.

The ``typed`` profile (decisions marked *vaultd* are this build's choice, documented here):

- ``type`` (required): one of :class:`NoteType`.
- ``title`` or the body's first H1 (required): ``title`` is a nonempty single-line string.
- ``description`` (required except on ``moc``): a nonempty single-line string of at most
  :data:`MAX_DESCRIPTION` characters.
- ``domain`` (optional; a missing domain is a lint matter, not a write error): a built-in domain
  (:data:`BUILTIN_DOMAINS`) or one the vault declares (V16; checked in the open profile too once
  the vault declares domains).
- ``status`` (optional): :data:`STATUSES`; ``superseded`` needs ``superseded_by``.
- ``confidence`` (optional): :data:`CONFIDENCES` (*vaultd*).
- ``created``, ``updated`` (optional): real calendar dates written ``YYYY-MM-DD``.
- ``topics``, ``tags``, ``aliases``, ``cssclasses``, the link relations (``supports``,
  ``contradicts``, ``extends``, ``applies-to``, ``context-for``) and ``supersedes``: a list of
  nonempty strings (``tags`` and ``aliases`` may also be one string, as editors write them).
- ``source``: a string or a list of strings; ``source_ref``, ``superseded_by``, ``promoted_from``,
  ``promoted_at``: strings.
- Reference notes only (refused on every other type): ``citekey`` (``[A-Za-z0-9_:-]{1,64}``,
  unique in the vault ignoring ASCII case), ``doi`` (``10.``, a 4-9 digit registrant, ``/``, a
  suffix without whitespace or control characters), ``arxiv_id`` (``YYMM.NNNN`` before 2015,
  ``YYMM.NNNNN`` from 2015, or ``archive/YYMMNNN``; optional ``vN``, N >= 1; month 01-12),
  ``authors`` (1-100 nonempty strings), ``year`` (integer 1000-2100), ``venue`` (1-200 characters).
- Decision notes only: ``decided_at`` (a date written ``YYYY-MM-DD``) and ``decided_by`` (a
  nonempty single-line string).
- Any other key is unknown and refused.

Messages start with the field path (``authors[2]: ...``) and never echo a field's value.
"""

from __future__ import annotations

import datetime
import enum
import re
from typing import TYPE_CHECKING, Any, Final

import msgspec

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.vaults import BUILTIN_DOMAINS as BUILTIN_DOMAINS_ORDER
from protocol.methods.vaults import SchemaProfile
from vaultd.sources.identifiers import valid_arxiv, valid_citekey, valid_doi
from vaultd.sources.ledger import LEDGER_KEYS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


class NoteType(enum.StrEnum):
    INSIGHT = "insight"
    DECISION = "decision"
    OBSERVATION = "observation"
    PERSON = "person"
    PROJECT = "project"
    METHOD = "method"
    MOC = "moc"  #: a map of content; needs no description
    REFERENCE = "reference"  #: the only type that may carry bibliographic identifiers


BUILTIN_DOMAINS: Final = frozenset(BUILTIN_DOMAINS_ORDER)
STATUSES: Final = ("draft", "active", "superseded", "archived")
CONFIDENCES: Final = ("speculative", "tentative", "likely", "proven")
MAX_DESCRIPTION: Final = 500
MAX_TITLE: Final = 300

_LIST_KEYS: Final = frozenset({"topics", "cssclasses", "supports", "contradicts", "extends", "applies-to", "context-for", "supersedes"})
_LIST_OR_STRING_KEYS: Final = frozenset({"tags", "aliases", "source"})
_STRING_KEYS: Final = frozenset({"source_ref", "superseded_by", "promoted_from", "promoted_at"})
_REFERENCE_KEYS: Final = frozenset({"citekey", "doi", "arxiv_id", "authors", "year", "venue"})
_DECISION_KEYS: Final = frozenset({"decided_at", "decided_by"})
_KNOWN_KEYS: Final = (
    frozenset({"type", "title", "description", "domain", "status", "confidence", "created", "updated"})
    | _LIST_KEYS
    | _LIST_OR_STRING_KEYS
    | _STRING_KEYS
    | _REFERENCE_KEYS
    | _DECISION_KEYS
)

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _v01(path: str, message: str) -> Issue:
    return Issue(code=IssueCode.V01, message=message, path=path)


def _one_line(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != "" and "\n" not in value and "\r" not in value


def _string_list(key: str, value: Any, path: str) -> list[Issue]:
    if not isinstance(value, list):
        return [_v01(path, f"{key}: must be a list of strings")]
    return [_v01(path, f"{key}[{i}]: must be a nonempty string") for i, item in enumerate(value) if not _one_line(item)]


def _reference_issues(data: dict[str, Any], path: str, citekey_owners: Callable[[str], list[str]] | None) -> list[Issue]:
    issues: list[Issue] = []
    if "citekey" in data:
        key = data["citekey"]
        if not valid_citekey(key):
            issues.append(_v01(path, "citekey: must be 1-64 of A-Z a-z 0-9 _ : -"))
        elif citekey_owners is not None:
            for other in sorted(set(citekey_owners(key.lower()))):
                if other != path:
                    issues.append(_v01(path, f"citekey: already used by {other!r} (ignoring case); choose another"))
    if "doi" in data and not valid_doi(data["doi"]):
        issues.append(_v01(path, "doi: must be 10.<4-9 digit registrant>/<suffix without spaces>"))
    if "arxiv_id" in data and not valid_arxiv(data["arxiv_id"]):
        issues.append(
            _v01(
                path,
                "arxiv_id: must be YYMM.NNNN (before 2015), YYMM.NNNNN or archive/YYMMNNN, optionally vN",
            )
        )
    if "authors" in data:
        authors = data["authors"]
        if not isinstance(authors, list) or not 1 <= len(authors) <= 100:
            issues.append(_v01(path, "authors: must be a list of 1 to 100 names"))
        else:
            issues += [
                _v01(path, f"authors[{i}]: must be a nonempty string")
                for i, name in enumerate(authors)
                if not (isinstance(name, str) and name.strip())
            ]
    if "year" in data:
        year = data["year"]
        if isinstance(year, bool) or not isinstance(year, int) or not 1000 <= year <= 2100:
            issues.append(_v01(path, "year: must be an integer from 1000 to 2100"))
    if "venue" in data:
        venue = data["venue"]
        if not isinstance(venue, str) or not 1 <= len(venue) <= 200:
            issues.append(_v01(path, "venue: must be a string of 1 to 200 characters"))
    return issues


def _typed_issues(
    data: dict[str, Any],
    path: str,
    h1: str | None,
    domains: frozenset[str],
    citekey_owners: Callable[[str], list[str]] | None,
) -> list[Issue]:
    issues: list[Issue] = []
    # A ledger note (source or claim) carries the ledger's keys too; their rules are the ledger's (V20-V23).
    known = _KNOWN_KEYS | LEDGER_KEYS if "ledger" in data else _KNOWN_KEYS
    unknown = sorted(k for k in data if k not in known)
    issues += [_v01(path, f"{k}: is not a key of the typed schema; remove or rename it") for k in unknown]
    note_type = data.get("type")
    if note_type is None:
        issues.append(_v01(path, f"type: is required, one of {', '.join(NoteType)}"))
    elif note_type not in set(NoteType):
        issues.append(_v01(path, f"type: must be one of {', '.join(NoteType)}"))
    if "title" in data:
        title = data["title"]
        if not _one_line(title) or len(title) > MAX_TITLE:
            issues.append(_v01(path, f"title: must be a nonempty single line of at most {MAX_TITLE} characters"))
    elif not (h1 and h1.strip()):
        issues.append(_v01(path, "title: is required when the note has no H1 heading; add either"))
    if "description" in data:
        desc = data["description"]
        if not _one_line(desc) or len(desc) > MAX_DESCRIPTION:
            issues.append(
                _v01(
                    path,
                    f"description: must be a nonempty single line of at most {MAX_DESCRIPTION} characters",
                )
            )
    elif note_type != NoteType.MOC:
        issues.append(_v01(path, "description: is required; say in one line what the note holds"))
    issues += domain_issues(data, path, domains)
    if "status" in data:
        if data["status"] not in STATUSES:
            issues.append(_v01(path, f"status: must be one of {', '.join(STATUSES)}"))
        elif data["status"] == "superseded" and "superseded_by" not in data:
            issues.append(_v01(path, "superseded_by: is required when status is superseded"))
    if "confidence" in data and data["confidence"] not in CONFIDENCES:
        issues.append(_v01(path, f"confidence: must be one of {', '.join(CONFIDENCES)}"))
    for key in ("created", "updated"):
        if key in data and not _valid_date(data[key]):
            issues.append(_v01(path, f"{key}: must be a calendar date written YYYY-MM-DD"))
    for key in sorted(_LIST_KEYS & data.keys()):
        issues += _string_list(key, data[key], path)
    for key in sorted(_LIST_OR_STRING_KEYS & data.keys()):
        if not _one_line(data[key]):
            issues += _string_list(key, data[key], path)
    for key in sorted(_STRING_KEYS & data.keys()):
        if not _one_line(data[key]):
            issues.append(_v01(path, f"{key}: must be a nonempty single-line string"))
    if note_type == NoteType.DECISION:
        if "decided_at" in data and not _valid_date(data["decided_at"]):
            issues.append(_v01(path, "decided_at: must be a calendar date written YYYY-MM-DD"))
        if "decided_by" in data and not _one_line(data["decided_by"]):
            issues.append(_v01(path, "decided_by: must be a nonempty single-line string"))
    else:
        issues += [_v01(path, f"{k}: is allowed on decision notes only") for k in sorted(_DECISION_KEYS & data.keys())]
    present_refs = sorted(_REFERENCE_KEYS & data.keys())
    if note_type == NoteType.REFERENCE:
        issues += _reference_issues(data, path, citekey_owners)
    else:
        issues += [_v01(path, f"{k}: is allowed on reference notes only") for k in present_refs]
    return issues


_WIKI_VALUE = re.compile(r"^\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]$")


def topic_names(value: Any) -> list[str]:
    """The maps a ``topics`` value names, each once: an item is a ``[[link]]`` or a bare name."""
    names: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, str) or not item.strip():
            continue
        wiki = _WIKI_VALUE.match(item.strip())
        name = wiki.group(1).strip() if wiki else item.strip()
        if name not in names:
            names.append(name)
    return names


def is_schema_key(key: str, data: dict[str, Any]) -> bool:
    """Whether the typed schema knows ``key`` (on some note type) in a header holding ``data``."""
    return key in _KNOWN_KEYS or ("ledger" in data and key in LEDGER_KEYS)


def domain_issues(data: dict[str, Any], path: str, domains: frozenset[str]) -> list[Issue]:
    """V16 when the note names a domain outside the built-ins and ``domains`` (a missing one is lint's)."""
    if "domain" not in data or data["domain"] in BUILTIN_DOMAINS | domains:
        return []
    allowed = ", ".join(sorted(BUILTIN_DOMAINS | domains))
    declared = "" if domains else "; the vault declares none of its own"
    return [Issue(code=IssueCode.V16, message=f"domain: must be one of {allowed}{declared}", path=path)]


def _valid_date(value: Any) -> bool:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def schema_issues(
    profile: SchemaProfile,
    data: dict[str, Any] | None,
    present: bool,
    path: str,
    *,
    h1: str | None = None,
    domains: Iterable[str] = (),
    citekey_owners: Callable[[str], list[str]] | None = None,
) -> list[Issue]:
    """V01 issues for a note's frontmatter under the vault's schema profile.

    Args:
        profile: the vault's ``schema`` setting.
        data: the parsed header (None when absent or not a mapping).
        present: whether the note has a header block at all.
        path: the note's vault-relative path, put on every issue.
        h1: the text of the note's first H1, which stands in for ``title``.
        domains: the domains the vault declares on top of the built-ins.
        citekey_owners: the paths whose citekey, lowercased, equals the given lowercased key.
    """
    if present and data is None:
        return [_v01(path, "the frontmatter must be a mapping of keys to values")]
    if profile is SchemaProfile.OPEN:
        # Declaring domains opts an open vault into checking them; without, it checks no key.
        return domain_issues(data, path, frozenset(domains)) if domains and data is not None else []
    if data is None:
        return [_v01(path, "the note needs frontmatter: a typed vault requires at least type and description")]
    return _typed_issues(data, path, h1, frozenset(domains), citekey_owners)


ALWAYS_BLOCKING: Final = frozenset({IssueCode.V04, IssueCode.V06, IssueCode.V07})  #: path safety, secrets and PII never become debt


def new_issues_only(
    before: list[Issue],
    after: list[Issue],
    *,
    always_blocking: frozenset[str] = ALWAYS_BLOCKING,
) -> tuple[list[Issue], list[Issue]]:
    """Split ``after`` into (errors, warnings), turning old debt into warnings.

    An error in ``after`` whose code and message were already in ``before`` (lines ignored) is debt
    the write did not add: it warns and never blocks. New errors stay errors; warnings and info
    stay warnings. Codes in ``always_blocking`` are never downgraded.
    """
    old = {(i.code, i.message) for i in before}
    errors: list[Issue] = []
    warnings: list[Issue] = []
    for issue in after:
        if issue.severity is not Severity.ERROR:
            warnings.append(issue)
        elif (issue.code, issue.message) in old and issue.code not in always_blocking:
            warnings.append(msgspec.structs.replace(issue, severity=Severity.WARNING))
        else:
            errors.append(issue)
    return errors, warnings
