"""Drive the real hook entry point (:func:`vaultctl.guard.run`) in this process, as a host would:
one JSON payload on stdin, the verdict in the exit status and the reason on stderr.

A subprocess per call costs a Python start-up; the adversarial round and the regression table
make hundreds of calls, so they run the same entry point here, with the environment a host
would give it (the test home's locations) set for the call.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from vaultctl.guard import run

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def _environ(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def judge(payload: Any, env: Mapping[str, str]) -> tuple[int, str]:
    """(exit status, stderr) of one hook call."""
    data = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
    stdin, stderr, stdout = sys.stdin, sys.stderr, sys.stdout
    err = io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    sys.stderr = err
    sys.stdout = io.StringIO()
    try:
        with _environ(env):
            code = run()
    finally:
        sys.stdin, sys.stderr, sys.stdout = stdin, stderr, stdout
    return code, err.getvalue()


def bash(command: str, cwd: str) -> dict[str, Any]:
    """A Claude Code PreToolUse payload for its Bash tool."""
    return {"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}


def edit(tool: str, path: str, cwd: str = "/") -> dict[str, Any]:
    """A Claude Code PreToolUse payload for one of its file tools."""
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {key: path, "content": "x"}}
