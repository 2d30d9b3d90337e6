"""The canonical rows a promotion's new note mentions (V19), and why a canonical table told nothing (V26).

Read from the vault the note is promoted into, each table note within the note bound and all of
them within :data:`MAX_CANON_READ_BYTES`, then parsed and matched by :mod:`vaultd.policy.canon_tables`.
The answer is advice in the receipt's warnings: it never refuses, and a preview's fingerprint does
not bind it (:func:`fingerprinted`), so a table edited between preview and confirm changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_NOTE_BYTES, MiB, describe
from vaultd.errors import LimitExceeded, VaultError
from vaultd.policy import canon_tables
from vaultd.txn.engine import read_current

if TYPE_CHECKING:
    from protocol.methods.vaults import VaultEntry
    from vaultd.ops._context import OpContext

MAX_CANON_READ_BYTES = 8 * MiB  #: every canonical table note of one match, read together


def fingerprinted(entry: VaultEntry) -> VaultEntry:
    """The entry as a preview's fingerprint binds it: canonical tables are advice, left out."""
    return msgspec.structs.replace(entry, canon_tables=[])


def _warning(path: str | None, message: str) -> Issue:
    return Issue(code=IssueCode.V26, severity=Severity.WARNING, path=path, message=f"canonical tables: {message}")


def canon_issues(ctx: OpContext, draft: str) -> list[Issue]:
    """The canonical rows ``draft`` mentions (V19, at most five) and, for each table that could not
    be read or holds no table, a warning naming the cause (V26)."""
    tables = ctx.entry.canon_tables
    if not tables:
        return []
    budget = canon_tables.Budget()
    left = MAX_CANON_READ_BYTES
    rows: list[canon_tables.Row] = []
    warnings: list[Issue] = []
    for table in tables:
        if budget.spent is not None:
            break
        path = table.note
        if ctx.visibility.hidden(path):  # never named to a caller who may not see it
            warnings.append(_warning(None, "a table note private to this channel is not read"))
            continue
        limit = min(MAX_NOTE_BYTES, left)
        try:
            raw = read_current(ctx.root, path, limit)
        except VaultError as exc:
            why = (
                f"over the {describe(MAX_NOTE_BYTES)} note bound"
                if limit == MAX_NOTE_BYTES
                else f"the {describe(MAX_CANON_READ_BYTES)} read for every canonical table is spent"
            )
            cause = why if isinstance(exc, LimitExceeded) else exc.message
            warnings.append(_warning(path, f"{path} not read ({cause}); name a smaller note in 'vaultctl vault set --canon-table'"))
            continue
        if raw is None:
            warnings.append(_warning(path, f"{path} not read (no such note); fix or drop it with 'vaultctl vault set --canon-table'"))
            continue
        left -= len(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(_warning(path, f"{path} not read (it is not UTF-8 text)"))
            continue
        parsed = canon_tables.parse(path, text, table.column, budget, start=len(rows))
        rows += parsed.rows
        if parsed.tables == 0 and budget.spent is None:
            which = f"with a '{table.column}' column" if table.column else ""
            warnings.append(
                _warning(
                    path,
                    f"{path} has no recognizable Markdown table {which}".rstrip()
                    + " (a header row, then a delimiter row of hyphens such as |---|---|, then the rows)",
                )
            )
    if budget.spent is not None:
        warnings.append(_warning(None, f"{budget.spent}; the rest is not matched"))
    matched, stopped = canon_tables.matches(draft, rows)
    if stopped:
        steps = canon_tables.MAX_MATCH_STEPS
        warnings.append(_warning(None, f"matching stopped after {steps} places in the note; the rows listed are those found before"))
    found = [
        Issue(
            code=IssueCode.V19,
            severity=Severity.WARNING,
            path=m.row.path,
            line=m.row.line,
            message=f"mentions '{m.key}', a canonical name: {m.row.text}",
        )
        for m in matched
    ]
    return found + warnings
