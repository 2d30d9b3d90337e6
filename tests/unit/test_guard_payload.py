"""Hook payloads of Claude Code, Codex and Gemini CLI, in the shapes their hook references give,
read as the event and the paths the tool would write."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl.guard.payload import Dialect, Event, read_hook

ENV = {"HOME": "/home/u"}


def _tool(event: str, tool: str, tool_input: Any, cwd: str = "/work") -> dict[str, Any]:
    return {"session_id": "s", "transcript_path": "/t", "cwd": cwd, "hook_event_name": event, "tool_name": tool, "tool_input": tool_input}


PATCH = """*** Begin Patch
*** Add File: notes/new.md
+# New
*** Update File: /v/Alpha.md
@@
-old
+new
*** Update File: a.md
*** Move to: archive/a.md
*** Delete File: gone.md
*** End Patch
"""

CASES: list[tuple[dict[str, Any], Dialect, list[str], list[str]]] = [
    (_tool("PreToolUse", "Edit", {"file_path": "/v/Alpha.md", "old_string": "a", "new_string": "b"}), Dialect.CLAUDE, ["/v/Alpha.md"], []),
    (_tool("PreToolUse", "Write", {"file_path": "/v/New.md", "content": "x"}), Dialect.CLAUDE, ["/v/New.md"], []),
    (_tool("PreToolUse", "MultiEdit", {"file_path": "rel/x.md", "edits": []}), Dialect.CLAUDE, ["/work/rel/x.md"], []),
    (_tool("PreToolUse", "NotebookEdit", {"notebook_path": "/v/n.ipynb", "new_source": ""}), Dialect.CLAUDE, ["/v/n.ipynb"], []),
    (_tool("PreToolUse", "Bash", {"command": "sed -i s/a/b/ /v/x.md", "description": "edit"}), Dialect.CLAUDE, ["/v/x.md"], []),
    (_tool("PreToolUse", "Bash", {"command": "vaultctl proposals apply p1"}), Dialect.CLAUDE, [], ["proposals apply"]),
    (_tool("PreToolUse", "Read", {"file_path": "/v/Alpha.md"}), Dialect.CLAUDE, [], []),
    (
        _tool("PreToolUse", "apply_patch", {"command": PATCH}),
        Dialect.CLAUDE,
        ["/work/notes/new.md", "/v/Alpha.md", "/work/a.md", "/work/archive/a.md", "/work/gone.md"],
        [],
    ),
    (_tool("PreToolUse", "Bash", {"command": ["bash", "-lc", "rm /v/a.md"]}), Dialect.CLAUDE, ["/v/a.md"], []),
    (_tool("PreToolUse", "Bash", {"command": ["rm", "/v/b c.md"]}), Dialect.CLAUDE, ["/v/b c.md"], []),
    (_tool("BeforeTool", "write_file", {"file_path": "/v/w.md", "content": "x"}), Dialect.GEMINI, ["/v/w.md"], []),
    (_tool("BeforeTool", "replace", {"file_path": "r.md", "old_string": "a", "new_string": "b"}), Dialect.GEMINI, ["/work/r.md"], []),
    (_tool("BeforeTool", "run_shell_command", {"command": "touch x.md", "dir_path": "/v"}), Dialect.GEMINI, ["/v/x.md"], []),
    (_tool("BeforeTool", "read_file", {"file_path": "/v/a.md"}), Dialect.GEMINI, [], []),
]


@pytest.mark.parametrize(("payload", "dialect", "paths", "commands"), CASES, ids=[f"{c[0]['tool_name']}-{n}" for n, c in enumerate(CASES)])
def test_a_tool_payload_names_what_it_writes(payload: dict[str, Any], dialect: Dialect, paths: list[str], commands: list[str]) -> None:
    hook = read_hook(payload, ENV)
    assert hook.event is Event.TOOL and hook.dialect is dialect
    assert hook.call is not None and hook.call.tool == payload["tool_name"]
    if hook.call.tool in ("Bash", "run_shell_command"):
        assert set(paths) <= set(hook.call.paths)  # a shell command names every word's path
    else:
        assert hook.call.paths == paths
    assert hook.call.vaultctl == commands


def test_session_start_and_other_events() -> None:
    assert read_hook({"hook_event_name": "SessionStart", "source": "startup", "cwd": "/w"}, ENV).event is Event.SESSION_START
    assert read_hook({"hook_event_name": "PostToolUse", "tool_name": "Edit"}, ENV).event is Event.OTHER
    assert read_hook([1, 2], ENV).event is Event.OTHER
    assert read_hook({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": "junk"}, ENV).call is not None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(
    event=st.sampled_from(["PreToolUse", "BeforeTool", "SessionStart", "Stop"]),
    tool=st.sampled_from(["Edit", "Write", "Bash", "apply_patch", "write_file", "run_shell_command", "Other"]) | st.text(max_size=10),
    tool_input=JSON,
    cwd=JSON,
)
def test_any_payload_is_read_without_failing(event: str, tool: str, tool_input: Any, cwd: Any) -> None:
    hook = read_hook({"hook_event_name": event, "tool_name": tool, "tool_input": tool_input, "cwd": cwd}, ENV)
    if hook.call is not None:
        assert all(isinstance(p, str) and p.startswith("/") for p in hook.call.paths)
