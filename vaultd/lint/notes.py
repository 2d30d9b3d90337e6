"""Note rules: orphans (L04), notes no map reaches (L05), frontmatter (L06), stale dates (L08),
empty notes (L09), oversized notes (L10), and the typed profile's names, proofs and topics (L18-L20).

Dates are compared with the lint's ``as_of`` date only, never the clock, so a declared date gives
the same findings on any day. A review key (``review``, ``review_by``, ``next_review``,
``review_date``) holding a date before it has passed; a last-edited key (the vault's
``stamp_keys``, ``updated`` by default) more than :data:`STALE_DAYS` before it is stale.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from protocol.issue_codes import IssueCode
from protocol.limits import KiB, describe
from protocol.methods.lint import LintCode
from protocol.methods.vaults import SchemaProfile
from vaultd.graph.centrality import mocs
from vaultd.lint.model import Finding, LintInput
from vaultd.policy.schema import NoteType, schema_issues, topic_names
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from collections.abc import Iterator

STALE_DAYS = 365
REVIEW_KEYS = ("review", "review_by", "next_review", "review_date")
OVERSIZED_BYTES = 256 * KiB
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def orphans(inp: LintInput) -> set[str]:
    """Notes with no link to another note or file, and no link from another note."""
    snap = inp.snap
    found = set()
    for path in snap.notes:
        inp.deadline.tick()
        if snap.out.get(path) or snap.into.get(path):
            continue
        if any(a[4] or (a[1] is not None and a[1] != path) for a in snap.answers.get(path, [])):
            continue
        found.add(path)
    return found


def orphan_findings(inp: LintInput) -> Iterator[Finding]:
    for path in sorted(orphans(inp)):
        yield Finding(LintCode.L04, path, "no note links here, and it links to no other note or file")


def unreachable_findings(inp: LintInput) -> Iterator[Finding]:
    """Notes that no map of content or topic-map root reaches by links or parent properties.

    Without any map in the vault the rule has nothing to start from and reports nothing; orphans
    are L04's and are not reported twice.
    """
    snap = inp.snap
    roots = [p for p, _ in mocs(snap)]
    if not roots:
        return
    below: dict[str, list[str]] = {}
    for child, parents in snap.parents.items():
        for parent in parents:
            below.setdefault(parent, []).append(child)
    seen = set(roots)
    frontier = list(roots)
    while frontier:
        nxt = []
        for node in frontier:
            inp.deadline.tick()
            for other in (*snap.out.get(node, {}), *below.get(node, ())):
                if other not in seen:
                    seen.add(other)
                    nxt.append(other)
        frontier = nxt
    lonely = orphans(inp)
    for path in sorted(set(snap.notes) - seen - lonely):
        yield Finding(LintCode.L05, path, "no map of content or topic map reaches this note")


def frontmatter_findings(inp: LintInput) -> Iterator[Finding]:
    for path in sorted(inp.snap.notes):
        inp.deadline.tick()
        record = inp.snap.notes[path]
        for issue in record.issues:
            yield Finding(LintCode.L06, path, f"{issue.code}: {issue.message}", issue.line)
        if record.issues:
            continue  # the schema reads the parsed header; an unreadable one is reported above
        h1 = next((h.text for h in record.headings if h.level == 1), None)
        present = record.frontmatter is not None
        for problem in schema_issues(inp.schema, record.frontmatter, present, path, h1=h1, domains=inp.domains):
            text = f"{problem.code}: {problem.message}" if problem.code == IssueCode.V16 else problem.message
            yield Finding(LintCode.L06, path, text, problem.line)


def _date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        m = _DATE.match(value.strip())
        if m:
            try:
                return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                return None
    return None


def stale_findings(inp: LintInput) -> Iterator[Finding]:
    oldest = inp.as_of - dt.timedelta(days=STALE_DAYS)
    for path in sorted(inp.snap.notes):
        inp.deadline.tick()
        data = inp.snap.notes[path].frontmatter
        if not data:
            continue
        for key in REVIEW_KEYS:
            if key not in data:
                continue
            when = _date(data[key])
            if when is not None and when < inp.as_of:
                yield Finding(LintCode.L08, path, f"{key}: the review was due on {when.isoformat()} (as of {inp.as_of.isoformat()})")
        for key in inp.stamp_keys:
            if key not in data:
                continue
            when = _date(data[key])
            if when is not None and when < oldest:
                days = (inp.as_of - when).days
                yield Finding(LintCode.L08, path, f"{key}: last edited {when.isoformat()}, {days} days before {inp.as_of.isoformat()}")
                break


def empty_findings(inp: LintInput) -> Iterator[Finding]:
    for path in sorted(inp.snap.notes):
        inp.deadline.tick()
        record = inp.snap.notes[path]
        heading_words = sum(len(h.text.split()) for h in record.headings)
        if record.words - heading_words <= 0 and not record.links and not record.blocks:
            yield Finding(LintCode.L09, path, "the note has no text beyond its headings")


def size_findings(inp: LintInput) -> Iterator[Finding]:
    for path in sorted(inp.snap.notes):
        inp.deadline.tick()
        size = inp.snap.notes[path].size
        if size > OVERSIZED_BYTES:
            yield Finding(LintCode.L10, path, f"{size} bytes, over {describe(OVERSIZED_BYTES)}")
    for path, (code, reason) in sorted(inp.snap.skipped.items()):
        if code == IssueCode.S01:
            yield Finding(LintCode.L10, path, f"not indexed: {reason}")


_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _names_source(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return any(isinstance(item, str) and item.strip() for item in items)


def typed_findings(inp: LintInput) -> Iterator[Finding]:
    """The typed profile's own rules: kebab-case file names (L18), ``proven`` with no source (L19),
    topics that name no map of content (L20). An open vault's names and keys are its user's."""
    if inp.schema is not SchemaProfile.TYPED:
        return
    snap = inp.snap
    for path in sorted(snap.notes):
        inp.deadline.tick()
        record = snap.notes[path]
        stem = path.rpartition("/")[2].removesuffix(".md")
        if not _KEBAB.fullmatch(stem):
            yield Finding(LintCode.L18, path, f"the name {stem!r} is not lowercase ASCII kebab-case")
        data = record.frontmatter or {}
        if data.get("confidence") == "proven" and not _names_source(data.get("source")):
            yield Finding(LintCode.L19, path, "confidence: proven, but no source says what proves it")
        for name in topic_names(data.get("topics")):
            res = inp.resolve(name, path) if inp.resolve is not None else None
            target = res.path if res is not None and res.status is ResolutionStatus.RESOLVED else None
            named = snap.notes.get(target) if target is not None else None
            if named is None or (named.frontmatter or {}).get("type") != NoteType.MOC:
                yield Finding(LintCode.L20, path, f"topics: [[{name}]] names no map of content (a note of type moc)")
