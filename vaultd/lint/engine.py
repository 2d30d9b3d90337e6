"""Running every rule, and the order findings are reported in: errors first, then by code, note
and line, so the same vault and date always give the same list."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from protocol.methods.lint import LintCode, LintLevel
from protocol.methods.service import Level
from vaultd.lint import files, links, names, notes, roles, topic_map

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vaultd.lint.links import TextOf
    from vaultd.lint.model import Finding, LintInput


def run(inp: LintInput, code: LintCode | None = None) -> list[Finding]:
    """Every finding of the vault (of one rule when ``code`` is given), in report order.

    Fixable findings carry their ``repair`` but no ``fix`` yet: :func:`with_fixes` makes the fixes
    of the findings that need them from the notes' text.

    Raises:
        LimitExceeded: LIMIT, the walk ran past ``inp.deadline``.
    """

    def wanted(*codes: LintCode) -> bool:
        inp.deadline.check()  # asked before each rule: the walk stops between rules too
        return code is None or code in codes

    found: list[Finding] = []
    if wanted(LintCode.L01, LintCode.L02, LintCode.L03, LintCode.L13):
        found += links.link_findings(inp)
    if wanted(LintCode.L04):
        found += notes.orphan_findings(inp)
    if wanted(LintCode.L05):
        found += notes.unreachable_findings(inp)
    if wanted(LintCode.L06):
        found += notes.frontmatter_findings(inp)
    if wanted(LintCode.L07):
        found += names.clash_findings(inp)
    if wanted(LintCode.L08):
        found += notes.stale_findings(inp)
    if wanted(LintCode.L09):
        found += notes.empty_findings(inp)
    if wanted(LintCode.L10):
        found += notes.size_findings(inp)
    if wanted(LintCode.L11):
        found += names.tag_findings(inp)
    if wanted(LintCode.L12, LintCode.L14, LintCode.L15):
        documented, referenced = files.document_findings(inp)
        found += documented
        if wanted(LintCode.L12) and not inp.unread_documents:  # an unread canvas may embed any of them
            found += files.unused_attachment_findings(inp, referenced)
    if wanted(LintCode.L16):
        found += topic_map.cycle_findings(inp)
    if wanted(LintCode.L17):
        found += topic_map.misnamed_findings(inp)
    if wanted(LintCode.L18, LintCode.L19, LintCode.L20):
        found += notes.typed_findings(inp)
    if code is not None:
        found = [f for f in found if f.code is code]
    return ordered(roles.by_role(found, inp.roles))


#: Distinct dead-link texts looked up per answer. A fuzzy lookup over 10,000 titles costs a few
#: milliseconds; 200 of them doubled a lint's time. ``vaultctl links NOTE`` gives every hint of a note.
MAX_HINTS = 20


def with_hints(listed: Iterable[Finding], inp: LintInput) -> list[Finding]:
    """The listed findings, each dead link with the title it likely meant (a hint only, never a fix).

    Run on the findings a caller is shown, not on all of them: the lookup is fuzzy and costly."""
    memo: dict[str, str | None] = {}
    out: list[Finding] = []
    for finding in listed:
        if finding.hint is not None and (finding.hint in memo or len(memo) < MAX_HINTS):
            if finding.hint not in memo:
                memo[finding.hint] = inp.suggest(finding.hint)
            title = memo[finding.hint]
            if title:
                finding = replace(finding, message=f"{finding.message}; did you mean [[{title}]]?")
        out.append(finding)
    return out


def with_fixes(found: Iterable[Finding], text_of: TextOf) -> list[Finding]:
    """The findings, each fixable one with its fix made from its note's text as indexed."""
    return [links.make_fix(f, text_of) if f.repair is not None else f for f in found]


def ordered(found: Iterable[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (f.level is not LintLevel.ERROR, f.code, f.note, f.line or 0, f.message))


def verdict(found: Iterable[Finding]) -> Level:
    levels = {f.level for f in found}
    if LintLevel.ERROR in levels:
        return Level.FAIL
    return Level.WARN if LintLevel.WARN in levels else Level.OK
