"""What vaultd keeps inside a vault folder, and which folders are not notes.

A leaf (it imports only the contract's name for the state folder), so the scanner, the watcher, the journal and the code that takes a
vault can all name the same folders without importing one another.
"""

from __future__ import annotations

from typing import Final

from protocol.location import VAULT_STATE_DIR

STATE_DIR: Final = VAULT_STATE_DIR  #: the vault's state folder: the daemon's own, inside each vault (lock, journal, cookies)
JOURNAL_DIR: Final = f"{STATE_DIR}/journal"  #: vault-relative
LOCK_NAME: Final = "lock"  #: the vault lock, inside STATE_DIR
LOG_LOCK_NAME: Final = "log.lock"  #: serialises appends to the vault's operation log, inside STATE_DIR
GITIGNORE_NAME: Final = ".gitignore"  #: keeps STATE_DIR out of a vault that is a git repository
COOKIE_PREFIX: Final = "cookie-"  #: freshness markers the watcher reports back, inside STATE_DIR
#: The first line of vaultd's operation log (log.md, or the vault's log_path): what marks the
#: file as vaultd's record rather than a user's note.
LOG_HEADER: Final = "# vaultd operation log\n"
_LOG_HEADER_LINE: Final = LOG_HEADER.rstrip("\n").encode("utf-8")
#: How much of a file's start the appender and the index read to tell vaultd's log from a note
#: (the header, or for a log from before it, its first event line).
LOG_HEAD_BYTES: Final = 4096

#: Folders never indexed, watched or written into by a note operation, at any depth.
SKIPPED_DIRS: Final = frozenset({STATE_DIR, ".git", ".obsidian", ".trash"})

#: Obsidian's bookmarks: the one file inside a skipped folder that a write changes (a move or a
#: merge repoints the bookmarks of the note). Never created, never indexed; journaled like a note.
BOOKMARKS_FILE: Final = ".obsidian/bookmarks.json"


def is_operation_log(data: bytes) -> bool:
    """Whether ``data`` (a file's first bytes, or all of them) starts with the log's header line:
    the one test both the log's appender and the index use to tell vaultd's log from a note."""
    if not data.startswith(_LOG_HEADER_LINE):
        return False
    end = data.find(b"\n")
    return (data if end < 0 else data[:end]).rstrip(b"\r") == _LOG_HEADER_LINE
