"""Screening of note paths (V06, V07): a name is stored like text, so it is screened like text.

A path ends up in file names, the index, journals, the event log and every listing, and its stem
is the note's title wherever the note has none of its own. So a new path and the title derived
from it meet the same secret rules as a note's lines, and the vault's PII policy on the ``notes``
surface. The issues never carry the path: it is the very text that must not be echoed.

A name is not prose: ``-``, ``_``, ``.`` and spaces join its words (a slug, a copy's ``-2``, a
``backup_`` prefix), so each component is also screened from every word on, and a token is one
whatever the name adds after it (:func:`~vaultd.policy.secrets.scan_name_secrets`). The runner
applies this screen to every path any plan creates, right before the engine writes anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from vaultd.policy.pii import pii_findings
from vaultd.policy.secrets import scan_name_secrets

if TYPE_CHECKING:
    from protocol.methods.vaults import Kind, PiiSetting


SEPARATORS = frozenset("-_. ")  #: what joins words in a file name: a token may start right after one
MAX_WORD_STARTS = 64  #: per path component: a name is at most 255 bytes, so this bounds the work


def _stem(rel: str) -> str:
    name = rel.rpartition("/")[2]
    return name[:-3] if name.lower().endswith(".md") else name


def _word_starts(rel: str) -> list[str]:
    """Each path component from every word on: a name joins words with ``-`` or ``_`` (a slug, a
    copy's prefix), which in text would make a token part of a longer word (``old-glpat-...``);
    in a name it is a word of its own, so each is screened as if it started the line."""
    out: list[str] = []
    for part in rel.split("/"):
        starts = [i + 1 for i, ch in enumerate(part[:-1]) if ch in SEPARATORS][:MAX_WORD_STARTS]
        out += [part[i:] for i in starts]
    return out


def path_screen_issues(rel: str, pii: PiiSetting | None, kind: Kind) -> list[Issue]:
    """V06 errors for a secret in ``rel`` or its derived title; V07 per the vault's PII policy.

    Every issue has ``path=None`` and a message naming only the rule.
    """
    # The path and its stem on separate lines: the stem alone is what becomes a title, and a
    # token that the folder separator would join to its neighbours still stands out there.
    text = f"{rel}\n{_stem(rel)}"
    rules = sorted({f.rule for f in scan_name_secrets("\n".join([text, *_word_starts(rel)]))}, key=lambda r: r.value)
    issues = [
        Issue(
            code=IssueCode.V06,
            message=f"the note path looks like {rule.description} (rule {rule.value}); choose a name without it — secrets are never stored",
        )
        for rule in rules
    ]
    seen: set[tuple[str, Severity]] = set()
    for found in pii_findings(text, pii, kind, "notes"):
        if (found.message, found.severity) in seen:
            continue
        seen.add((found.message, found.severity))
        issues.append(
            Issue(code=found.code, severity=found.severity, path=None, message=f"the note path: {found.message.split(': ', 1)[-1]}")
        )
    return issues
