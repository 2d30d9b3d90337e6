"""Unified diffs of a plan's files, for the person who reviews a proposal; never a secret's text."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from protocol.methods.proposals import MAX_DIFF_BYTES, FileDiff
from vaultd.tidy.redact import redact_lines

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vaultd.txn.plan import Change


def _lines(data: bytes | None) -> list[str] | None:
    """The file's lines, each secret in them shown as the redaction marker: a proposal is kept
    and shown, and a secret the change removes (a tidy's redaction) must not live on in its diff."""
    if data is None:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return redact_lines(text)[0].splitlines(keepends=True)


def file_diff(change: Change) -> FileDiff:
    """The change as a unified diff (empty for bytes that are not UTF-8), cut at the bound."""
    before, after = _lines(change.before), _lines(change.after)
    text = ""
    if before is not None and after is not None:
        old = "/dev/null" if change.before is None else f"a/{change.path}"
        new = "/dev/null" if change.after is None else f"b/{change.path}"
        text = "".join(_terminated(difflib.unified_diff(before, after, old, new)))
    data = text.encode("utf-8")
    truncated = len(data) > MAX_DIFF_BYTES
    if truncated:
        text = data[:MAX_DIFF_BYTES].decode("utf-8", errors="ignore")
    return FileDiff(
        path=change.path,
        action=str(change.action),
        before_sha=change.before_sha,
        after_sha=change.after_sha,
        diff=text,
        truncated=truncated,
    )


def _terminated(lines: Iterable[str]) -> list[str]:
    """Each diff line ends in a newline, with git's marker where the file's last line has none."""
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return out
