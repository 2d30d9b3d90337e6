"""A ``vault.lint``'s answer made from a copy of the index: the same function in the daemon's
thread (a small vault) and in a lint worker process (:mod:`vaultd.lint.worker`), so where a lint
runs never changes what it answers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.methods.lint import MAX_FINDING_CHARS, LintFinding, LintLevel, LintResult
from vaultd import faults
from vaultd.lint.engine import run, verdict, with_fixes, with_hints
from vaultd.lint.gather import gather, text_reader
from vaultd.memory import collector_paused

if TYPE_CHECKING:
    import datetime as dt

    from protocol.methods.lint import LintCode
    from protocol.methods.vaults import VaultEntry
    from vaultd.lint.model import Deadline
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import IndexCopy


def _cut(text: str) -> str:
    return text if len(text) <= MAX_FINDING_CHARS else text[: MAX_FINDING_CHARS - 1] + "…"


def report(
    copy: IndexCopy,
    entry: VaultEntry,
    view: Visibility,
    when: dt.date,
    *,
    code: LintCode | None,
    note: str | None,
    limit: int,
    deadline: Deadline,
) -> LintResult:
    """The lint of ``copy`` as ``view`` sees it: every finding counted, the first ``limit`` listed
    (of ``note`` only when given), each with its hint and fix.

    Raises:
        LimitExceeded: LIMIT, the walk ran past ``deadline``.
    """
    with collector_paused():
        inp = gather(copy, entry, view, when, deadline=deadline)
        faults.point("lint-rules")
        found = run(inp, code)
        if note is not None:
            found = [f for f in found if f.note == note]
        listed = with_fixes(with_hints(found[:limit], inp), text_reader(Path(entry.path), inp.snap))
    counts = Counter(str(f.code) for f in found)
    return LintResult(
        vault=entry.id,
        as_of=when.isoformat(),
        verdict=verdict(found),
        checked=1 if note is not None else len(inp.snap.notes),
        errors=sum(1 for f in found if f.level is LintLevel.ERROR),
        warnings=sum(1 for f in found if f.level is LintLevel.WARN),
        fixable=sum(1 for f in found if f.fixable),
        counts={code: counts[code] for code in sorted(counts)},
        findings=[
            LintFinding(
                level=f.level, code=f.code, note=f.note, line=f.line, finding=_cut(f.message), fix=_cut(str(f.fix)) if f.fix else None
            )
            for f in listed
        ],
        truncated=len(found) > limit,
        unread_documents=inp.unread_documents,
    )
