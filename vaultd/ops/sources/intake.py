"""Reading what a capture asks for, and who may ask for what.

- ``text`` and ``data``: sent in the call by any caller, bounded before decoding.
- ``vault_path``: a file inside the vault, by any caller, reached through descriptors without
  following a symlink anywhere on its way; never the daemon's own folder, git's, Obsidian's
  settings or the trash, and for an agent never a private or denied path (a private one is
  "not found", as private notes are).
- ``path``: any regular file the caller names, for a person only (``cli``, ``editor``). The
  daemon runs as that person, who can read the file anyway; an agent on the ``mcp`` channel
  could otherwise have the daemon copy ``~/.ssh/id_rsa`` into a vault it reads, so its call is
  refused before anything is opened (P20).

Nothing read is ever written back, moved or deleted: the input stays as it was.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_CAPTURE_BYTES, MAX_INLINE_CAPTURE_BYTES, describe
from protocol.methods.common import Channel
from vaultd.errors import Conflict, InvalidParams, LimitExceeded, NotFound, PolicyRefused
from vaultd.fsio import ReadRefused, Refusal, read_regular
from vaultd.policy import deny_path_issue
from vaultd.txn.dirfd import VaultRoot
from vaultd.vault.layout import SKIPPED_DIRS

if TYPE_CHECKING:
    from protocol.methods.sources import CaptureItem
    from vaultd.ops import OpContext

AGENT_PATHS = (
    "agents capture only files inside the vault (vault_path) or content they send (text, data); "
    "a file outside the vault is read only for a person: ask your user to run 'vaultctl capture FILE'"
)


@dataclass(frozen=True, slots=True)
class Intake:
    data: bytes
    name: str | None  #: a file name, for the media type and the raw copy's extension
    origin: str | None  #: where it came from unless the caller says otherwise


def one_input(item: CaptureItem) -> str:
    """Which of a capture item's exclusive inputs it gives; the schema cannot say 'exactly one of'.

    Raises:
        InvalidParams: INVALID_PARAMS, none or several are given.
    """
    given = [k for k in ("path", "vault_path", "text", "data", "url") if getattr(item, k) is not None]
    if len(given) != 1:
        raise InvalidParams(
            f"each capture item needs exactly one of path, vault_path, text, data or url (got {', '.join(given) or 'none'})"
        )
    return given[0]


def take(ctx: OpContext, item: CaptureItem) -> Intake:
    """The bytes an item names (not a URL item), read once.

    Raises:
        PolicyRefused: (POLICY, P20) an agent named a path outside the vault, or a reserved, denied folder.
        NotFound: the file is not there (or is private to the caller).
        InvalidParams: a symlink, not a regular file, not absolute, or undecodable base64.
        LimitExceeded: over the capture bound.
    """
    kind = one_input(item)
    if kind == "text":
        assert item.text is not None
        data = item.text.encode("utf-8")
        _inline_bound(data)
        return Intake(data, item.name or "capture.txt", None)
    if kind == "data":
        assert item.data is not None
        try:
            data = base64.b64decode(item.data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidParams("data is not valid base64") from exc
        _inline_bound(data)
        return Intake(data, item.name, None)
    if kind == "vault_path":
        assert item.vault_path is not None
        return _vault_file(ctx, item.vault_path, item.name)
    assert item.path is not None
    return _outside_file(ctx, item.path, item.name)


def _inline_bound(data: bytes) -> None:
    """Content sent in the call is bounded tighter than a file: it travels in one frame.

    Raises:
        LimitExceeded: LIMIT, it is over ``MAX_INLINE_CAPTURE_BYTES``.
    """
    if len(data) > MAX_INLINE_CAPTURE_BYTES:
        raise LimitExceeded(
            f"content sent in the call is {len(data)} bytes; at most {describe(MAX_INLINE_CAPTURE_BYTES)} (capture a file by path instead)"
        )


def _p20(message: str) -> PolicyRefused:
    return PolicyRefused(f"refused: {message}", issues=[Issue(code=IssueCode.P20, message=message)])


def _vault_file(ctx: OpContext, rel: str, name: str | None) -> Intake:
    """A file of the vault to capture, read as the caller may see it; vaultd's and Obsidian's own
    folders never.

    Raises:
        InvalidParams: INVALID_PARAMS, the path is not plain vault-relative, or the file cannot be
            read as one.
        NotFound: NOT_FOUND, no such file, or one private to the caller.
        LimitExceeded: LIMIT, the file is over ``MAX_CAPTURE_BYTES``.
        PolicyRefused: POLICY (P20), the file is in vaultd's or Obsidian's folders (for anyone), or
            deny_paths keeps it from agents.
    """
    rel = rel.strip("/")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\x00" in rel:
        raise InvalidParams("vault_path must be a plain vault-relative path (no '..', no empty part)")
    if any(p in SKIPPED_DIRS for p in parts):
        raise _p20("the vault's .vaultd, .git, .obsidian and .trash folders are never captured")
    if ctx.visibility.hidden(rel):
        raise NotFound(f"no such file in the vault: {rel}")  # as for a missing one: nothing to learn by probing
    if ctx.channel == Channel.MCP and deny_path_issue(rel, ctx.entry.deny_paths) is not None:
        raise _p20("the vault's deny_paths keep this file from agents")
    try:
        with VaultRoot(ctx.root) as vroot:
            current = vroot.read_file(rel, MAX_CAPTURE_BYTES)
    except LimitExceeded as exc:
        raise LimitExceeded(f"{rel} is over the {describe(MAX_CAPTURE_BYTES)} capture bound") from exc
    except Conflict as exc:
        raise InvalidParams(f"{rel}: {exc.message}") from exc
    if current is None:
        raise NotFound(f"no such file in the vault: {rel}")
    return Intake(current.data, name or parts[-1], rel)


def _outside_file(ctx: OpContext, path: str, name: str | None) -> Intake:
    """A file outside the vault, for a person only: its bytes read through no link.

    Raises:
        InvalidParams: INVALID_PARAMS, the path is relative, a symlink, not a regular file, or
            unreadable.
        NotFound: NOT_FOUND, no such file.
        LimitExceeded: LIMIT, the file is over ``MAX_CAPTURE_BYTES``.
        PolicyRefused: POLICY (P20), an agent asked for a file outside the vault.
    """
    if ctx.channel == Channel.MCP:
        raise _p20(AGENT_PATHS)
    if not os.path.isabs(path):
        raise InvalidParams("path must be absolute (vaultctl makes it so); use vault_path for a file inside the vault")
    try:
        data, _ = read_regular(path, MAX_CAPTURE_BYTES)
    except FileNotFoundError as exc:
        raise NotFound(f"no such file: {path}") from exc
    except ReadRefused as exc:
        if exc.refusal is Refusal.LINK:
            raise InvalidParams(f"{path} is a symbolic link; capture the file it points to") from exc
        if exc.refusal is Refusal.NOT_REGULAR:
            raise InvalidParams(f"{path} is not a regular file") from exc
        raise LimitExceeded(f"{path} is over the {describe(MAX_CAPTURE_BYTES)} capture bound") from exc
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror or exc}") from exc
    return Intake(data, name or os.path.basename(path), path)
