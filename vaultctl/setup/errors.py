"""Why host setup refuses: one root, a stable code per refusal, a message that says what to do.

::

    SetupError                       code varies by subclass
    ├── UsageError                   INVALID_PARAMS  unknown host, relative command, bad option
    ├── MalformedConfig              VALIDATION      bad JSON or TOML, JSONC, wrong shapes
    ├── CannotEditFaithfully         VALIDATION      the edit would reformat bytes it must not touch
    ├── UnsafeFile                   POLICY          a link, a FIFO, a folder, hard links, no access
    ├── FileTooLarge                 LIMIT           over MAX_FILE_BYTES
    ├── EntryChanged                 CONFLICT        the entry is no longer the one setup wrote
    ├── FileChanged                  CONFLICT        the file changed while setup was editing it
    ├── NoRecord                    NOT_FOUND       nothing recorded to undo
    ├── FolderNotFound               NOT_FOUND       a project folder that does not exist
    └── DiskError                    INTERNAL        an unexpected OS error while reading or writing

Messages name the file but never quote its contents: host files hold other servers' API tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pathlib import Path


class SetupError(Exception):
    """Root of every setup refusal; ``code`` is stable, ``message`` is for people.

    ``manual`` is set when setup refuses to edit a host file itself: the text to add by hand
    (only vaultd's own entry, never anything read from the file), for the CLI to print.
    """

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.manual: str | None = None


class UsageError(SetupError):
    code = ErrorCode.INVALID_PARAMS


class MalformedConfig(SetupError):
    code = ErrorCode.VALIDATION


class CannotEditFaithfully(SetupError):
    code = ErrorCode.VALIDATION


class UnsafeFile(SetupError):
    code = ErrorCode.POLICY


class FileTooLarge(SetupError):
    code = ErrorCode.LIMIT


class EntryChanged(SetupError):
    code = ErrorCode.CONFLICT


class FileChanged(SetupError):
    code = ErrorCode.CONFLICT


class NoRecord(SetupError):
    code = ErrorCode.NOT_FOUND


class FolderNotFound(SetupError):
    code = ErrorCode.NOT_FOUND


class DiskError(SetupError):
    code = ErrorCode.INTERNAL
