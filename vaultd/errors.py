"""Daemon-side exceptions. One root; each class carries its stable :class:`ErrorCode`.

    VaultError
    ├── InvalidParams      INVALID_PARAMS
    │   └── NotInVault     a path that names something other than one entry below the vault root
    ├── NotFound           NOT_FOUND
    ├── Ambiguous          AMBIGUOUS (carries candidates)
    ├── Conflict           CONFLICT
    │   ├── NotAFolder     a file stands where a write needs a folder
    │   └── StaleProposal  a file a proposal read has changed since (issue G03)
    ├── StalePreview       STALE_PREVIEW
    ├── ValidationFailed   VALIDATION (carries issues)
    ├── PolicyRefused      POLICY
    ├── LimitExceeded      LIMIT
    ├── Locked             LOCKED
    ├── Unavailable        UNAVAILABLE
    │   └── KeyUnusable    the journal key cannot be trusted
    ├── ConfigError        VALIDATION (the registry refuses the entry, or config.json is unusable;
    │                      names the file, never its text)
    └── Internal           INTERNAL
        ├── GitFailed      a git command exited non-zero
        └── RollbackFailed an operation failed and so did its rollback

The subclasses under a class live beside the code that raises them and travel as their parent's
code: a client tells them apart by message and issues only. Every function that raises one says
so in a ``Raises:`` section naming the class and when (a test holds vaultd to that).

The dispatcher translates a ``VaultError`` into a JSON-RPC error once; nothing else builds
error replies; any other exception a handler lets escape becomes INTERNAL with a fixed message
and a logged traceback. ``vaultctl`` turns the code into an exit status
(:attr:`ErrorCode.exit_status`), the MCP shim passes it through in a tool error. Messages say
what happened and what to do next; issues name the rules (:class:`~protocol.issue_codes.IssueCode`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import ErrorCode, ErrorData, Issue
from protocol.limits import MAX_ERROR_ISSUES

if TYPE_CHECKING:
    from collections.abc import Iterable


class VaultError(Exception):
    """The root: every refusal or failure a handler means to report. Raised nowhere as itself;
    catch it where any refusal will do (a best-effort read, a doctor check) and raise a subclass,
    whose class-level ``code`` is what the caller sees. ``issues`` name the rules found (bounded
    on the wire by :meth:`to_data`), ``candidates`` the choices an AMBIGUOUS or CONFLICT leaves."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, *, issues: Iterable[Issue] = (), candidates: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.issues = list(issues)
        self.candidates = list(candidates)

    def to_data(self) -> ErrorData:
        """The error as it travels: its issues bounded here, once for every refusal, so one that
        finds an issue per backlink or per path never grows a reply without limit."""
        listed = self.issues[:MAX_ERROR_ISSUES]
        return ErrorData(
            code=self.code, message=self.message, issues=listed, issues_omitted=len(self.issues) - len(listed), candidates=self.candidates
        )


class InvalidParams(VaultError):
    """The call's arguments cannot be used as given, whatever the vault holds: a field out of its
    bounds or in a combination the method refuses, a path that is not vault-relative, a bad
    cursor, offset or pattern, or a confirm without the preview's fingerprint. Raised by handlers
    and planners before anything is read or written; fix the argument the message names (an
    issue's ``path`` like ``$.params.limit`` points at it) and call again. ``vaultctl`` exits 2."""

    code = ErrorCode.INVALID_PARAMS


class NotFound(VaultError):
    """What the call names does not exist for this caller: a vault id, a note, a section, a
    proposal, an operation to undo, a commit, a subscription. A note private to the caller's
    channel is NOT_FOUND too, as a missing one, so probing learns nothing. Raised by lookups in
    every layer; search or list again (``vaultctl search``, ``vaultctl vault list``) and retry
    with a name that is there."""

    code = ErrorCode.NOT_FOUND


class Ambiguous(VaultError):
    """A name matched more than one note (by title or alias), or a section name more than one H2
    heading. Raised by note lookup and by reads and appends by section; ``candidates`` lists the
    matches: call again with the path of the one meant."""

    code = ErrorCode.AMBIGUOUS


class Conflict(VaultError):
    """The world moved between reading and writing: a note changed since the caller read it (its
    sha differs), a file changed while an operation was applied, a fix no longer finds its text,
    a branch moved during a sync, or something stands in the way (a symlink, a file where a folder
    goes, a full trash, a vault without git history). Raised by the transaction engine, the
    operation context, undo, revert and sync; nothing was written. Read again, then retry;
    ``candidates`` names the files that moved. ``vaultctl`` exits 75 (EX_TEMPFAIL)."""

    code = ErrorCode.CONFLICT


class StalePreview(VaultError):
    """A confirm's fingerprint no longer matches what planning the same call gives now: the vault
    (or the registry, for ``vault.*`` changes) changed since the preview, or the arguments differ.
    Raised by the two-step runners only; nothing was written. Preview again, review, and confirm
    with the new fingerprint. ``vaultctl`` exits 75 (EX_TEMPFAIL)."""

    code = ErrorCode.STALE_PREVIEW


class ValidationFailed(VaultError):
    """The change is well formed but would break a rule of the vault: a link left broken, a name
    taken, unsafe or clashing, frontmatter that does not fit its schema, a note merged into itself,
    an edit that finds no text. Raised by planners and by validation after planning, before
    anything is written; ``issues`` carry the rules (V-codes, with the note and line). Change the
    request, or the notes it names, as the first issue says."""

    code = ErrorCode.VALIDATION


class PolicyRefused(VaultError):
    """The vault's policy, not the request, says no: the write channel, deny paths, a path private
    to the CLI, an agent asking for what only a person may do, a journal not written by this
    daemon, a remote that is not the registered one. Raised by the policy screen every operation
    passes, the agent gate and git sync; ``issues`` carry the P-, G- or R-code. Retrying the same
    call will not help: a person changes the policy, or does the thing from the CLI."""

    code = ErrorCode.POLICY


class LimitExceeded(VaultError):
    """A size or count bound from :mod:`protocol.limits` (or a bound of one module) would be passed:
    a note, a reply, an operation's files or bytes, a capture, a proposal, subscriptions, git's
    output. Raised before the bound is crossed, so nothing was read past it or written; the
    message names the bound. Ask for less (page, split the change) and retry."""

    code = ErrorCode.LIMIT


class Locked(VaultError):
    """Another process holds a lock the call needs. No call raises it today: a vault whose lock
    another daemon holds is served as state ``locked`` and its calls are UNAVAILABLE, naming the
    holder. Kept so the code's meaning is fixed: stop the other holder, then retry."""

    code = ErrorCode.LOCKED


class Unavailable(VaultError):
    """The daemon cannot serve this now, though the call is fine: the vault is missing, locked by
    another process, still indexing or failed; an index was damaged and is being rebuilt; git or
    the console could not start or timed out; a journal could not be written. Raised by the vault
    runtime, the caches and the git and console runners; nothing was changed. Wait and retry, or
    see ``vaultctl doctor`` and ``vaultctl status`` when it persists. ``vaultctl`` exits 69."""

    code = ErrorCode.UNAVAILABLE


class ConfigError(VaultError):
    """The registry (``config.json``) refuses the change or cannot be used: a duplicate id or path,
    a vault nested in another or holding the home, a file that does not parse. Raised by the
    registry when it loads or saves. Not INVALID_PARAMS: the request may be well formed, and what
    is wrong is the registry's state or the config file itself, which no change of arguments
    fixes; remove or move the clashing vault, or repair the file the message names."""

    code = ErrorCode.VALIDATION


class Internal(VaultError):
    """A bug of vaultd's, or a tool behaving outside its contract (git storing a blob under another
    id, a frontmatter edit that does not read back as meant): nothing more is done. Raised where
    vaultd checks its own work; the dispatcher also answers INTERNAL for any exception a handler
    lets escape. Retrying rarely helps: see the daemon's log and report it. ``vaultctl`` exits 70."""

    code = ErrorCode.INTERNAL
