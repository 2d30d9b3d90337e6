"""PII screening (V07) under a vault's ``pii`` policy, and validation of that policy (P03).

The policy is the shorthand ``allow``/``deny`` (every category, every surface) or a
:class:`~protocol.methods.vaults.PiiPolicy` that sets an action per category and optionally per
surface (``notes``, ``log``). An omitted category or surface takes the vault default: ``allow``
for personal vaults, ``deny`` for org vaults. Actions: ``allow`` is not screened, ``warn`` gives a
V07 warning, ``deny`` a V07 error.

Categories:

- **email**: ``local@domain.tld`` (the last label is 2+ letters and not a file extension, so
  ``icon@2x.png`` is no address).
- **phone**: a run of digits with spaces, dots, hyphens, slashes or parentheses between them.
  International (``+`` or ``00``) numbers need 7 to 15 digits. Others need 9 to 15 digits, at least
  one separator, a last group of 3+ digits, and no dots unless grouped 3-3-4; ISO dates
  (``2024-01-05``), years (``1990-2020``), times and version numbers (``1.2.3``) never count. A
  ``+`` run of more than 15 digits is several numbers run together: it counts and is never exempt.
- **patterns**: the vault's named regexes, each with its own action.

The allow list exempts a match everywhere: an exact address (case-insensitive), an ``@domain``
suffix, a phone number standing alone compared by its digits, or an exact pattern match. Screening
covers the text as written and its NFKC form. Messages name the category and line, never the value.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final, Literal

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.vaults import Kind, PiiAction, PiiPolicy, PiiRule, PiiSetting, PiiSurfaces

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

Surface = Literal["notes", "log"]

MAX_PATTERN_CHARS: Final = 512

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}"
    r"\.([A-Za-z]{2,63})(?![A-Za-z0-9-])"
)
_FILE_TLDS: Final = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "pdf", "md", "heic", "avif"})
# Every repetition consumes exactly one digit, so the run is found in linear time.
_PHONE = re.compile(r"(?<![0-9A-Za-z+.\-/])(\+|\b00)?[ ]?\(?[0-9](?:[ .\-/()]{1,3}[0-9]|[0-9]){0,40}(?![0-9A-Za-z:])")
_GROUPS = re.compile(r"[0-9]+")
_DATE = re.compile(r"(?<![0-9])[0-9]{4}[-./ ][0-9]{1,2}[-./ ][0-9]{1,2}(?![0-9])|(?<![0-9])[0-9]{1,2}[-./][0-9]{1,2}[-./][0-9]{4}(?![0-9])")


@dataclass(frozen=True)
class _Match:
    category: str  #: "email", "phone" or "pattern <name>"
    what: str  #: how the message names it
    value: str
    line: int
    exemptable: bool = True


def _phone_kind(candidate: str) -> bool | None:
    """True: a phone; False: a phone that is never exempt; None: not a phone."""
    digits = "".join(_GROUPS.findall(candidate))
    groups = _GROUPS.findall(candidate)
    plus = candidate.startswith("+")
    if plus or candidate.startswith("00"):
        if len(digits) > 15:
            return False if plus else None
        return True if len(digits) >= 7 and len(groups) >= 1 else None
    if not 9 <= len(digits) <= 15 or len(groups) < 2 or len(groups[-1]) < 3:
        return None
    if _DATE.search(candidate):
        return None
    if "." in candidate and [len(g) for g in groups] != [3, 3, 4]:
        return None
    if all(len(g) == 4 and g[:2] in ("19", "20") for g in groups):
        return None
    return True


def _base_matches(text: str, first_line: int, starts: list[int]) -> Iterator[_Match]:
    from bisect import bisect_right

    def line_of(offset: int) -> int:
        return first_line + bisect_right(starts, offset - 1)

    for m in _EMAIL.finditer(text):
        if m.group(1).lower() not in _FILE_TLDS:
            yield _Match("email", "an email address", m.group(0), line_of(m.start()))
    for m in _PHONE.finditer(text):
        value = m.group(0).strip()
        kind = _phone_kind(value)
        if kind is not None:
            yield _Match("phone", "a phone number", value, line_of(m.start()), exemptable=kind)


@lru_cache(maxsize=256)
def compile_pattern(regex: str) -> re.Pattern[str] | None:
    """A vault pattern compiled once, or None when :func:`pattern_problem` refuses it."""
    return None if pattern_problem(regex) is not None else re.compile(regex)


def _nested_unbounded(parsed: object, inside: bool = False) -> bool:
    import re._parser as sre  # type: ignore[import-not-found,import-untyped,unused-ignore]

    for op, arg in parsed:  # type: ignore[attr-defined]
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            _lo, hi, sub = arg
            unbounded = hi == sre.MAXREPEAT or hi > 1000
            if unbounded and inside:
                return True
            if _nested_unbounded(sub, inside or unbounded):
                return True
        elif op is sre.SUBPATTERN:
            if _nested_unbounded(arg[-1], inside):
                return True
        elif op is sre.BRANCH:
            if any(_nested_unbounded(alt, inside) for alt in arg[1]):
                return True
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            if _nested_unbounded(arg[1], inside):
                return True
        elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            return True  # backreferences can be exponential
    return False


def pattern_problem(regex: str) -> str | None:
    """Why a vault PII pattern is refused, or None when it is usable.

    Refused: over :data:`MAX_PATTERN_CHARS` characters, not compilable, matching the empty
    string, backreferences, or an unbounded repetition inside another (``(a+)+``), which can take
    exponential time on a crafted note.
    """
    if len(regex) > MAX_PATTERN_CHARS:
        return f"is over {MAX_PATTERN_CHARS} characters"
    try:
        compiled = re.compile(regex)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"does not compile ({type(exc).__name__})"
    import re._parser as sre  # type: ignore[import-not-found,import-untyped,unused-ignore]

    try:
        if _nested_unbounded(sre.parse(regex)):
            return "nests an unbounded repetition or uses a backreference, which can take exponential time"
    except (re.error, RecursionError):
        return "cannot be analysed"
    if compiled.fullmatch("") is not None:
        return "matches the empty string"
    return None


def validate_pii_policy(policy: PiiSetting | None) -> list[Issue]:
    """P03 issues for a vault's PII policy: each unusable pattern and duplicate pattern name."""
    if not isinstance(policy, PiiPolicy):
        return []
    issues: list[Issue] = []
    names: set[str] = set()
    for i, pattern in enumerate(policy.patterns):
        where = f"$.pii.patterns[{i}]"
        if pattern.name in names:
            issues.append(Issue(code=IssueCode.P03, message=f"pattern name {pattern.name!r} is repeated", path=f"{where}.name"))
        names.add(pattern.name)
        problem = pattern_problem(pattern.regex)
        if problem is not None:
            issues.append(
                Issue(
                    code=IssueCode.P03,
                    message=f"pattern {pattern.name!r} {problem}; fix its regex",
                    path=f"{where}.regex",
                )
            )
    return issues


def _default(kind: Kind) -> PiiAction:
    return "deny" if kind is Kind.ORG else "allow"


def _cell(rule: PiiRule | None, kind: Kind, surface: Surface) -> PiiAction:
    if rule is None:
        return _default(kind)
    if isinstance(rule, PiiSurfaces):
        value: PiiAction | None = getattr(rule, surface)
        return value if value is not None else _default(kind)
    return rule


def effective_action(policy: PiiSetting | None, kind: Kind, surface: Surface, category: str) -> PiiAction:
    """The action for ``email``, ``phone`` or a pattern name on a surface (defaults filled in)."""
    if policy is None:
        return _default(kind)
    if isinstance(policy, str):
        return policy
    if category == "email":
        return _cell(policy.email, kind, surface)
    if category == "phone":
        return _cell(policy.phone, kind, surface)
    for pattern in policy.patterns:
        if pattern.name == category:
            return _cell(pattern.action, kind, surface)
    return _default(kind)


class _AllowList:
    def __init__(self, entries: Iterable[str]) -> None:
        self.exact: set[str] = set()
        self.domains: set[str] = set()
        self.digits: set[str] = set()
        self.raw: set[str] = set()
        for entry in entries:
            entry = entry.strip()
            self.raw.add(entry)
            if entry.startswith("@"):
                self.domains.add(entry.lower())
            elif "@" in entry:
                self.exact.add(entry.lower())
            elif re.fullmatch(r"\+?[0-9 .\-/()]+", entry):
                digits = re.sub(r"[^0-9]", "", entry)
                if 7 <= len(digits) <= 15:
                    self.digits.add(digits)

    def allows(self, m: _Match) -> bool:
        if not m.exemptable:
            return False
        if m.category == "email":
            low = m.value.lower()
            return low in self.exact or any(low.endswith(d) for d in self.domains)
        if m.category == "phone":
            return re.sub(r"[^0-9]", "", m.value) in self.digits
        return m.value in self.raw


def _matches(text: str, first_line: int, patterns: list[tuple[str, re.Pattern[str]]]) -> Iterator[_Match]:
    starts = [m.start() for m in re.finditer("\n", text)]
    yield from _base_matches(text, first_line, starts)
    from bisect import bisect_right

    for name, compiled in patterns:
        for m in compiled.finditer(text):
            if m.end() > m.start():
                line = first_line + bisect_right(starts, m.start() - 1)
                yield _Match(f"pattern:{name}", f"pattern {name}", m.group(0), line)


def pii_line_findings(
    lines: Iterable[tuple[int, str]],
    policy: PiiSetting | None,
    kind: Kind,
    surface: Surface,
    *,
    path: str | None = None,
) -> list[Issue]:
    """:func:`pii_findings` over chosen ``(line number, text)`` pairs, such as the added lines."""
    actions = {c: effective_action(policy, kind, surface, c) for c in ("email", "phone")}
    patterns: list[tuple[str, re.Pattern[str]]] = []
    allow = _AllowList(policy.allow if isinstance(policy, PiiPolicy) else [])
    if isinstance(policy, PiiPolicy):
        for pattern in policy.patterns:
            action = _cell(pattern.action, kind, surface)
            compiled = compile_pattern(pattern.regex)
            if action == "allow":
                continue
            actions[f"pattern:{pattern.name}"] = action
            if compiled is None:  # validation refuses such a policy; fail closed if it slipped through
                return [
                    Issue(
                        code=IssueCode.V07,
                        message=f"pattern {pattern.name} cannot be used; fix the vault's PII policy",
                        path=path,
                    )
                ]
            patterns.append((pattern.name, compiled))
    if all(a == "allow" for a in actions.values()):
        return []
    pairs = list(lines)
    numbers = [n for n, _ in pairs]
    texts = [t for _, t in pairs]
    found: dict[tuple[str, int], _Match] = {}

    def collect(text: str, number_of: list[int]) -> None:
        for m in _matches(text, 1, patterns):
            if actions.get(m.category, "allow") != "allow" and not allow.allows(m):
                line = number_of[m.line - 1]
                found.setdefault((m.category, line), _Match(m.category, m.what, "", line))

    collect("\n".join(texts), numbers)
    for number, text in pairs:
        if not text.isascii():
            nfkc = unicodedata.normalize("NFKC", text)
            if nfkc != text:
                collect(nfkc.replace("\n", " "), [number])
    issues: list[Issue] = []
    for (category, line), m in sorted(found.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        action = actions[category]
        severity = Severity.ERROR if action == "deny" else Severity.WARNING
        verdict = "remove it or add it to the vault's PII allow list" if action == "deny" else "allowed with a warning"
        issues.append(
            Issue(
                code=IssueCode.V07,
                message=f"line {line}: {m.what} (PII policy {action} on {surface}); {verdict}",
                severity=severity,
                path=path,
                line=line,
            )
        )
    return issues


def pii_findings(
    text: str,
    policy: PiiSetting | None,
    kind: Kind,
    surface: Surface,
    *,
    path: str | None = None,
) -> list[Issue]:
    """V07 issues for PII in ``text``: errors for deny cells, warnings for warn cells, none for allow."""
    return pii_line_findings(enumerate(text.split("\n"), start=1), policy, kind, surface, path=path)
