"""vaultd's own files inside a vault (P05): no write method creates, edits, moves or removes them.

The operation log is vaultd's record of who changed what: if a write could edit it, an agent could
strip the mark from its own lines, or change the header so vaultd stops appending. ``.vaultd/``
holds the lock, the journal and the proposals, and ``.git/`` the vault's history. So one rule,
applied to every path a plan touches (whatever the method, and for people too):

- the vault's log path (by :func:`~vaultd.policy.paths.path_key`, so ``Log.md`` or an NFD spelling
  names it too), whether or not the log exists yet: creating it would forge its first lines;
- any file whose bytes, before or after the write, start with the log's header line: vaultd reads
  such a file as a log wherever it is (a log left at an earlier log path, or a forged one);
- anything inside a ``.vaultd`` or ``.git`` folder, at any depth.

A person who keeps a note at the log's path is told the setting to change: the vault's log path.
"""

from __future__ import annotations

from typing import Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.policy.paths import path_key
from vaultd.vault.layout import LOG_HEADER, STATE_DIR, is_operation_log

#: Folders whose files are vaultd's or git's, compared casefolded at any depth.
OWNED_DIRS: Final = frozenset({STATE_DIR, ".git"})


def _log_message(rel: str, vault_id: str) -> str:
    return (
        f"{rel} is vault '{vault_id}''s operation log: only vaultd writes it, one line per operation "
        "(record an event with log_append, 'vaultctl log append'); no write method creates, edits, moves or removes it. "
        f"To keep a note at this path, give the vault another log path (the vault's log_path setting: "
        f"'vaultctl vault remove {vault_id}', then 'vaultctl vault add {vault_id} PATH --log-path vaultd-log.md')"
    )


def owned_path_issue(rel: str, before: bytes | None, after: bytes | None, *, log_rel: str, vault_id: str) -> Issue | None:
    """P05 when a change of ``rel`` (from ``before`` to ``after``) would write a file vaultd owns."""
    parts = rel.split("/")
    if any(part.casefold() in OWNED_DIRS for part in parts[:-1]) or parts[-1].casefold() in OWNED_DIRS:
        return Issue(
            code=IssueCode.P05,
            path=rel,
            message=f"{rel} is inside a folder vaultd or git keeps ({', '.join(sorted(OWNED_DIRS))}); no write method changes it",
        )
    if path_key(rel) == path_key(log_rel):
        return Issue(code=IssueCode.P05, path=rel, message=_log_message(rel, vault_id))
    if (before is not None and is_operation_log(before)) or (after is not None and is_operation_log(after)):
        header = LOG_HEADER.rstrip("\n")
        return Issue(
            code=IssueCode.P05,
            path=rel,
            message=f"{rel} starts with '{header}', the line that marks vaultd's operation log: only vaultd writes a log, "
            "and no note may start with that line",
        )
    return None
