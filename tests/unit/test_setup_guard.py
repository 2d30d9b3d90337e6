"""The guard's hooks in host files: appended after the user's own, taken out byte for byte.

Splices first (arrays and the ``hooks`` object, on fixed and generated documents), then the
guard's setup through ``run`` as ``vaultctl setup HOST`` calls it, in a temporary HOME.
"""

from __future__ import annotations

import json
import shlex
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.errors import ErrorCode
from vaultctl.setup import (
    GUARD_NAME,
    HOSTS,
    Action,
    EntryChanged,
    MalformedConfig,
    Mode,
    NoRecord,
    Status,
    UnsafeFile,
    guard_command,
    run,
    setup_all,
)
from vaultctl.setup.guard import is_guard_hook
from vaultctl.setup.guardcheck import guard_row
from vaultctl.setup.hooksfile import Created, HooksDocument
from vaultctl.setup.hosts import launch_env
from vaultctl.setup.jsontext import JsonText, remove_element

if TYPE_CHECKING:
    from collections.abc import Iterator

COMMAND = "/opt/vaultd/bin/vaultctl"
OTHER_COMMAND = "/usr/local/bin/vaultctl"
GUARD_HOSTS = ["claude", "codex", "gemini"]
MINE = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/home/me/bin/audit.sh"}]}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    values = {"HOME": str(home), "VAULTD_HOME": str(tmp_path / "vaultd-home")}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


def hooks_path(host: str, env: dict[str, str]) -> Path:
    spec = HOSTS[host].guard
    assert spec is not None
    return spec.path(env)


def groups_for(host: str, env: dict[str, str], command: str = COMMAND) -> dict[str, dict[str, Any]]:
    spec = HOSTS[host].guard
    assert spec is not None
    return spec.groups(guard_command(command, launch_env(env)))


def write(path: Path, text: str | bytes) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(raw)
    return raw


def load(path: Path) -> Any:
    return json.loads(path.read_bytes().decode("utf-8-sig"))


def records(env: dict[str, str]) -> list[str]:
    folder = Path(env["VAULTD_HOME"]) / "setup"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# -- array splices ---------------------------------------------------------------------------------

ARRAYS = {
    "empty": "[]",
    "empty-spaced": "[ ]",
    "empty-lines": "[\n    ]",
    "one-inline": "[1]",
    "two-inline": '[1, "two"]',
    "two-tight": '[1,"two"]',
    "one-pretty": '[\n      {\n        "a": 1\n      }\n    ]',
    "two-pretty": "[\n      1,\n      2\n    ]",
    "crlf": "[\r\n      1\r\n    ]",
    "objects-inline": '[{"matcher": "x", "hooks": []}]',
}


@pytest.mark.parametrize("variant", sorted(ARRAYS))
def test_append_then_remove_an_element_gives_back_the_bytes(variant: str) -> None:
    text = '{\n  "k": ' + ARRAYS[variant] + ',\n  "z": 0\n}\n'
    if "\r\n" in ARRAYS[variant]:
        text = text.replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    doc = JsonText(text, Path("t.json"))
    arr = doc.array_at(doc.top.members[0].value_start)
    value = {"matcher": "m", "hooks": [{"type": "command", "command": "c"}]}
    splice, spacing = doc.append_element(arr, value)
    after = splice.apply(text)
    data = json.loads(after)
    assert data["k"] == [*json.loads(text)["k"], value] and data["z"] == 0
    if "\r\n" in text:
        assert "\n" not in after.replace("\r\n", ""), "inserted lines use the file's CRLF"
    again = JsonText(after, Path("t.json"))
    arr = again.array_at(again.top.members[0].value_start)
    assert remove_element(arr, arr.elements[-1], spacing).apply(after) == text


def test_a_pretty_element_is_indented_like_its_neighbours() -> None:
    text = (
        '{\n    "hooks": {\n        "PreToolUse": [\n            {\n                "matcher": "Bash"\n            }\n        ]\n    }\n}\n'
    )
    doc = HooksDocument(text, Path("s.json"))
    after = doc.add("PreToolUse", {"matcher": "X", "hooks": []}).splice.apply(text)
    assert after == (
        '{\n    "hooks": {\n        "PreToolUse": [\n            {\n                "matcher": "Bash"\n            },\n'
        '            {\n                "matcher": "X",\n                "hooks": []\n            }\n        ]\n    }\n}\n'
    )


# -- the hooks object -----------------------------------------------------------------------------

HOOKS_VARIANTS = {
    "no-hooks": '{\n  "model": "x"\n}\n',
    "empty-top": "{}",
    "empty-hooks": '{\n  "hooks": {}\n}\n',
    "other-event": '{\n  "hooks": {\n    "Stop": [\n      {"hooks": [{"type": "command", "command": "s"}]}\n    ]\n  }\n}\n',
    "empty-array": '{"hooks": {"PreToolUse": [], "SessionStart": [ ]}}',
    "mine-first": json.dumps({"hooks": {"PreToolUse": [MINE], "SessionStart": [MINE]}}, indent=4),
    "compact": json.dumps({"a": 1, "hooks": {"PreToolUse": [MINE]}}, separators=(",", ":")),
    "tabs": '{\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{"matcher": "Bash", "hooks": []}\n\t\t]\n\t}\n}',
}


@pytest.mark.parametrize("variant", sorted(HOOKS_VARIANTS))
def test_add_two_events_then_remove_in_reverse(variant: str) -> None:
    text = HOOKS_VARIANTS[variant]
    before = json.loads(text)
    ours: dict[str, dict[str, Any]] = {
        "PreToolUse": {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "g"}]},
        "SessionStart": {"hooks": []},
    }
    steps: list[tuple[str, Created, str | None]] = []
    current = text
    for event, group in ours.items():
        added = HooksDocument(current, Path("s.json")).add(event, group)
        steps.append((event, added.created, added.spacing))
        current = added.splice.apply(current)
    data = json.loads(current)
    for event, group in ours.items():
        assert data["hooks"][event] == [*before.get("hooks", {}).get(event, []), group]
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    for event, created, spacing in reversed(steps):
        current = HooksDocument(current, Path("s.json")).remove(event, ours[event], created, spacing).apply(current)
    assert current == text


def test_what_setup_created_is_kept_when_the_user_added_to_it() -> None:
    """Undo of a created array that now holds a group of the user's takes out only setup's."""
    text = '{\n  "a": 1\n}\n'
    ours = {"hooks": [{"type": "command", "command": "g"}]}
    added = HooksDocument(text, Path("s.json")).add("PreToolUse", ours)
    assert added.created is Created.HOOKS
    after = added.splice.apply(text)
    data = json.loads(after)
    data["hooks"]["PreToolUse"].append(MINE)
    data["hooks"]["Stop"] = [MINE]
    edited = json.dumps(data, indent=2) + "\n"
    undone = HooksDocument(edited, Path("s.json")).remove("PreToolUse", ours, added.created, added.spacing).apply(edited)
    assert json.loads(undone) == {"a": 1, "hooks": {"PreToolUse": [MINE], "Stop": [MINE]}}


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ('{"hooks": [1]}', "not an object"),
        ('{"hooks": {"PreToolUse": {"matcher": "x"}}}', "not an array"),
        ('{"hooks": {}, "hooks": {}}', "more than once"),
        ('{"hooks": {"PreToolUse": [], "PreToolUse": []}}', "more than once"),
    ],
)
def test_hooks_of_the_wrong_shape_are_refused(text: str, what: str) -> None:
    with pytest.raises(MalformedConfig) as info:
        HooksDocument(text, Path("s.json")).add("PreToolUse", MINE)
    assert what in info.value.message


# -- generated documents ---------------------------------------------------------------------------

_keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
_scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.text(max_size=12)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3), max_leaves=8)
_user_group = st.fixed_dictionaries(
    {"hooks": st.lists(st.fixed_dictionaries({"type": st.just("command"), "command": st.text(max_size=20)}), max_size=2)},
    optional={"matcher": st.text(max_size=10), "sequential": st.booleans()},
)
_events = st.sampled_from(["PreToolUse", "BeforeTool", "SessionStart", "Stop", "AfterTool"])


@st.composite
def _documents(draw: st.DrawFn, mcp: bool) -> str:
    doc: dict[str, Any] = draw(st.dictionaries(_keys.filter(lambda k: k not in ("hooks", "mcpServers")), _values, max_size=4))
    hooks = draw(st.none() | st.dictionaries(_events, st.lists(_user_group | _scalars, max_size=3), max_size=4))
    extra: list[tuple[str, Any]] = []
    if hooks is not None:
        extra.append(("hooks", hooks))
    if mcp and draw(st.booleans()):
        extra.append(("mcpServers", draw(st.dictionaries(_keys.filter(lambda k: k != "vaultd"), st.just({"command": "x"}), max_size=2))))
    items = list(doc.items())
    for pair in extra:
        items.insert(draw(st.integers(0, len(items))), pair)
    indent = draw(st.none() | st.integers(0, 4) | st.sampled_from(["\t", " \t"]))
    item_sep = draw(st.sampled_from([",", ", ", " , "]))
    text = json.dumps(
        dict(items),
        indent=indent,
        separators=(item_sep.rstrip() if indent is not None else item_sep, draw(st.sampled_from([":", ": ", " : "]))),
        ensure_ascii=draw(st.booleans()),
    )
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text + draw(st.sampled_from(["", "\n", "\r\n"]))


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), host=st.sampled_from(GUARD_HOSTS))
def test_generated_files_apply_then_undo_give_back_the_bytes(data: st.DataObject, host: str, scratch: Path) -> None:
    text = data.draw(_documents(mcp=host == "gemini"))
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        env = {"HOME": f"{folder}/home", "VAULTD_HOME": f"{folder}/vaultd"}
        path = hooks_path(host, env)
        original = write(path, text)
        before = json.loads(text)
        plan = run(host, Mode.APPLY, COMMAND, env=env)
        assert plan.guard is not None and plan.guard.applied
        after = load(path)
        ours = groups_for(host, env)
        for event, group in ours.items():
            assert after["hooks"][event] == [*(before.get("hooks") or {}).get(event, []), group], "appended after the user's own"
        others = {k for k in before if k not in ("hooks", "mcpServers")}
        assert {k: after[k] for k in others} == {k: before[k] for k in others}
        again = run(host, Mode.APPLY, COMMAND, env=env)
        assert again.action is Action.NONE and again.guard is not None and again.guard.action is Action.NONE
        run(host, Mode.UNDO, "", env=env)
        assert path.read_bytes() == original
        assert records(env) == []


# -- the guard's setup, host by host ---------------------------------------------------------------


@pytest.mark.parametrize("host", GUARD_HOSTS)
def test_absent_file_dry_run_apply_again_undo(host: str, env: dict[str, str]) -> None:
    path = hooks_path(host, env)
    shared = host == "gemini"  # one settings.json: the entry creates it, the hooks go into it
    plan = run(host, Mode.PLAN, COMMAND)
    assert plan.guard is not None and not plan.guard.applied
    assert plan.guard.action is (Action.ADD if shared else Action.CREATE_FILE)
    assert plan.guard.diff.startswith(f"--- {path}" if shared else "--- /dev/null")
    assert not path.exists() and records(env) == []

    applied = run(host, Mode.APPLY, COMMAND)
    assert applied.guard is not None and applied.guard.applied and applied.guard.record is not None
    assert load(path)["hooks"] == {event: [group] for event, group in groups_for(host, env).items()}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert applied.guard.after == groups_for(host, env)
    first = path.read_bytes(), path.stat().st_mtime_ns

    again = run(host, Mode.APPLY, COMMAND)
    assert again.guard is not None and again.guard.action is Action.NONE and not again.guard.applied
    assert (path.read_bytes(), path.stat().st_mtime_ns) == first

    undone = run(host, Mode.UNDO, "")
    assert undone.guard is not None and undone.guard.action is (Action.REMOVE if shared else Action.DELETE_FILE)
    assert undone.action is Action.DELETE_FILE
    assert not path.exists() and records(env) == []


def test_each_host_gets_its_own_file_events_and_matchers(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    assert hooks_path("claude", env) == home / ".claude" / "settings.json"
    assert hooks_path("codex", env) == home / ".codex" / "hooks.json"
    assert hooks_path("gemini", env) == home / ".gemini" / "settings.json"
    assert groups_for("claude", {"HOME": "/h"}) == {
        "PreToolUse": {"matcher": "Edit|Write|MultiEdit|NotebookEdit|Bash", "hooks": [{"type": "command", "command": f"{COMMAND} guard"}]},
        "SessionStart": {"hooks": [{"type": "command", "command": f"{COMMAND} guard"}]},
        # The session record's hooks: a prompt's one-line summary, and the reminder at Stop.
        "UserPromptSubmit": {"hooks": [{"type": "command", "command": f"{COMMAND} guard"}]},
        "Stop": {"hooks": [{"type": "command", "command": f"{COMMAND} guard"}]},
    }
    assert groups_for("codex", {"HOME": "/h"})["PreToolUse"]["matcher"] == "Bash|apply_patch"
    gemini = groups_for("gemini", {"HOME": "/h"})
    assert sorted(gemini) == ["BeforeTool", "SessionStart"]
    assert gemini["BeforeTool"]["matcher"] == "write_file|replace|run_shell_command"
    assert gemini["SessionStart"]["hooks"] == [{"type": "command", "command": f"{COMMAND} guard", "name": GUARD_NAME}]


def test_claude_config_dir_and_codex_home_are_honoured(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    claude = run("claude", Mode.APPLY, COMMAND)
    codex = run("codex", Mode.APPLY, COMMAND)
    assert claude.guard is not None and claude.guard.path == tmp_path / "cc" / "settings.json"
    assert codex.guard is not None and codex.guard.path == tmp_path / "cx" / "hooks.json"
    assert not (Path(env["HOME"]) / ".claude").exists() and not (Path(env["HOME"]) / ".codex").exists()


@pytest.mark.parametrize("host", GUARD_HOSTS)
def test_the_users_hooks_stay_first_and_undo_is_byte_identical(host: str, env: dict[str, str]) -> None:
    path = hooks_path(host, env)
    events = list(groups_for(host, env))
    text = (
        '{\r\n  "theme": "dark",\r\n  "hooks": {\r\n    "' + events[0] + '": [\r\n      ' + json.dumps(MINE) + "\r\n    ]\r\n  }\r\n}\r\n"
    )
    original = write(path, text)
    run(host, Mode.APPLY, COMMAND)
    data = load(path)
    assert data["hooks"][events[0]] == [MINE, groups_for(host, env)[events[0]]]
    assert data["hooks"][events[1]] == [groups_for(host, env)[events[1]]]
    assert b"\n" not in path.read_bytes().replace(b"\r\n", b""), "CRLF kept"
    run(host, Mode.UNDO, "")
    assert path.read_bytes() == original


def test_undo_keeps_a_group_the_user_added_after_ours(env: dict[str, str]) -> None:
    path = hooks_path("claude", env)
    write(path, '{\n  "hooks": {\n    "PreToolUse": [\n      {"matcher": "Read", "hooks": []}\n    ]\n  }\n}\n')
    run("claude", Mode.APPLY, COMMAND)
    data = load(path)
    data["hooks"]["PreToolUse"].append(MINE)
    data["hooks"]["SessionStart"].insert(0, MINE)
    write(path, json.dumps(data, indent=2) + "\n")
    plan = run("claude", Mode.UNDO, "")
    assert plan.guard is not None and plan.guard.action is Action.REMOVE
    assert load(path) == {"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": []}, MINE], "SessionStart": [MINE]}}


def test_a_group_the_user_changed_is_not_removed(env: dict[str, str]) -> None:
    path = hooks_path("claude", env)
    write(path, "{}\n")
    run("claude", Mode.APPLY, COMMAND, sandbox=False)  # the entry's and the hooks' records only
    edited = write(path, path.read_text().replace("Edit|Write|MultiEdit|NotebookEdit|Bash", "Edit|Write"))
    with pytest.raises(EntryChanged) as info:
        run("claude", Mode.UNDO, "")
    assert info.value.code is ErrorCode.CONFLICT and "PreToolUse" in info.value.message
    assert path.read_bytes() == edited
    assert len(records(env)) == 2, "both records stay for a later decision"
    assert (Path(env["HOME"]) / ".claude.json").exists(), "the entry was not undone either"
    with pytest.raises(EntryChanged):
        run("claude", Mode.APPLY, COMMAND)  # and apply adds no second group beside the edited one
    assert path.read_bytes() == edited


def test_groups_removed_by_hand_are_not_an_error(env: dict[str, str]) -> None:
    path = hooks_path("codex", env)
    write(path, '{"hooks": {"Stop": []}}')
    run("codex", Mode.APPLY, COMMAND)
    data = load(path)
    del data["hooks"]["SessionStart"]
    write(path, json.dumps(data))
    partly = run("codex", Mode.UNDO, "")
    assert partly.guard is not None and partly.guard.action is Action.REMOVE
    assert load(path) == {"hooks": {"Stop": []}}

    run("codex", Mode.APPLY, COMMAND)
    by_hand = write(path, '{"hooks": {"Stop": []}}')
    gone = run("codex", Mode.UNDO, "")
    assert gone.guard is not None and gone.guard.action is Action.NONE and gone.guard.notes
    assert path.read_bytes() == by_hand and records(env) == []


@pytest.mark.parametrize("host", GUARD_HOSTS)
def test_a_moved_vaultctl_updates_the_group_in_place_and_undo_still_restores(host: str, env: dict[str, str]) -> None:
    path = hooks_path(host, env)
    original = write(path, '{\n  "hooks": {\n    "SessionStart": [' + json.dumps(MINE) + "]\n  }\n}\n")
    run(host, Mode.APPLY, COMMAND)
    moved = run(host, Mode.APPLY, OTHER_COMMAND)
    assert moved.guard is not None and moved.guard.action is Action.REPLACE
    assert moved.guard.before == groups_for(host, env) and moved.guard.after == groups_for(host, env, OTHER_COMMAND)
    data = load(path)
    assert all(data["hooks"][e][-1] == g for e, g in groups_for(host, env, OTHER_COMMAND).items())
    assert sum(len(v) for v in data["hooks"].values()) == 1 + len(groups_for(host, env)), "updated, not added a second time"
    run(host, Mode.UNDO, "")
    assert path.read_bytes() == original


def test_a_users_own_copy_of_the_group_is_left_alone(env: dict[str, str]) -> None:
    path = hooks_path("claude", env)
    write(path, json.dumps({"hooks": {event: [group] for event, group in groups_for("claude", env).items()}}))
    plan = run("claude", Mode.APPLY, COMMAND)
    assert plan.guard is not None and plan.guard.action is Action.NONE
    assert all("guard" not in name for name in records(env))


@pytest.mark.parametrize(
    "text",
    [
        '{\n  // mine\n  "hooks": {}\n}',
        '{"hooks": {"PreToolUse": [],}}',
        "",
        '{"hooks": {}, "hooks": {}}',
        '{"hooks": {"PreToolUse": "not a list"}}',
    ],
    ids=["comment", "trailing-comma", "empty", "duplicate", "wrong-shape"],
)
def test_a_file_setup_cannot_edit_is_refused_with_the_groups_to_add_by_hand(text: str, env: dict[str, str]) -> None:
    path = hooks_path("claude", env)
    original = write(path, text)
    with pytest.raises(MalformedConfig) as info:
        run("claude", Mode.APPLY, COMMAND)
    assert "--no-guard" in info.value.message
    assert info.value.manual is not None
    assert json.loads(info.value.manual) == {"hooks": {e: [g] for e, g in groups_for("claude", env).items()}}
    assert path.read_bytes() == original
    assert not (Path(env["HOME"]) / ".claude.json").exists(), "the entry is not written when the guard is refused"
    assert records(env) == []
    plan = run("claude", Mode.APPLY, COMMAND, guard=False, sandbox=False)  # the sandbox's rules go in the same file
    assert plan.applied and plan.guard is None and path.read_bytes() == original


def test_no_guard_leaves_the_hooks_alone(env: dict[str, str]) -> None:
    plan = run("codex", Mode.APPLY, COMMAND, guard=False)
    assert plan.applied and plan.guard is None
    assert not hooks_path("codex", env).exists()
    assert records(env) == [n for n in records(env) if "guard" not in n]


@pytest.mark.parametrize("host", ["cursor", "windsurf"])
def test_hosts_without_a_guard_hook_say_so(host: str, env: dict[str, str]) -> None:
    plan = run(host, Mode.APPLY, COMMAND)
    assert plan.guard is None
    assert any(n.startswith("No guard hook:") and "docs/agents.md" in n for n in plan.notes), plan.notes
    assert not any(n.startswith("No guard hook") for n in run(host, Mode.APPLY, COMMAND, guard=False).notes)


def test_gemini_one_file_two_changes_in_either_order(env: dict[str, str]) -> None:
    path = hooks_path("gemini", env)
    original = write(path, '{\n  "theme": "x"\n}\n')
    run("gemini", Mode.APPLY, COMMAND, guard=False, sandbox=False)
    run("gemini", Mode.APPLY, COMMAND, sandbox=False)  # tools.sandbox too where docker is on PATH: left out here
    assert sorted(load(path)) == ["hooks", "mcpServers", "theme"]
    assert len(records(env)) == 2 and any("guard" in n for n in records(env))
    run("gemini", Mode.UNDO, "")
    assert path.read_bytes() == original and records(env) == []
    path.unlink()
    run("gemini", Mode.APPLY, COMMAND, sandbox=False)
    undone = run("gemini", Mode.UNDO, "")
    assert undone.action is Action.DELETE_FILE and not path.exists()


def test_non_default_locations_go_in_front_of_the_command_quoted_for_a_shell(tmp_path: Path, env: dict[str, str]) -> None:
    custom = {**env, "VAULTD_HOME": str(tmp_path / "my home"), "VAULTD_SOCKET": str(tmp_path / "s'ock" / "v.sock")}
    spaced = str(tmp_path / "bin dir" / "vaultctl")
    plan = run("claude", Mode.APPLY, spaced, env=custom)
    assert plan.guard is not None
    command = load(hooks_path("claude", custom))["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert shlex.split(command) == [
        f"VAULTD_HOME={custom['VAULTD_HOME']}",
        f"VAULTD_SOCKET={custom['VAULTD_SOCKET']}",
        spaced,
        "guard",
    ]
    assert is_guard_hook({"command": command})
    assert not is_guard_hook({"command": f"{shlex.quote(spaced)} mcp"})


def test_a_project_file_runs_vaultctl_from_path(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    original = write(project / ".claude" / "settings.json", '{\n  "permissions": {"allow": []}\n}\n')
    plan = run("claude", Mode.APPLY, COMMAND, project=project)
    assert plan.guard is not None and plan.guard.path == project / ".claude" / "settings.json"
    hooks = load(project / ".claude" / "settings.json")["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "vaultctl guard"
    assert str(tmp_path) not in (project / ".claude" / "settings.json").read_text()
    assert any("shared through the project's repository" in n for n in plan.guard.notes)
    assert not hooks_path("claude", env).exists()
    run("claude", Mode.UNDO, "", project=project)
    assert (project / ".claude" / "settings.json").read_bytes() == original


def test_host_settings_that_keep_hooks_from_running_are_named(env: dict[str, str]) -> None:
    write(hooks_path("claude", env), '{"disableAllHooks": true}')
    claude = run("claude", Mode.PLAN, COMMAND)
    assert claude.guard is not None and any("disableAllHooks" in n for n in claude.guard.notes)
    write(hooks_path("gemini", env), json.dumps({"hooksConfig": {"enabled": False, "disabled": [GUARD_NAME]}}))
    gemini = run("gemini", Mode.PLAN, COMMAND)
    assert gemini.guard is not None
    assert any("hooksConfig.enabled" in n for n in gemini.guard.notes)
    assert any("hooksConfig.disabled" in n for n in gemini.guard.notes)
    write(Path(env["HOME"]) / ".codex" / "config.toml", "[features]\nhooks = false\n\n[hooks]\n")
    codex = run("codex", Mode.PLAN, COMMAND)
    assert codex.guard is not None
    assert any("hooks = false" in n for n in codex.guard.notes)
    assert any("/hooks" in n and "trust" in n for n in codex.guard.notes), "a new Codex hook runs only once trusted"
    assert any("loads those and hooks.json both" in n for n in codex.guard.notes)


def test_setup_all_undo_takes_out_the_hooks_too(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    for folder in (".codex", ".gemini", ".cursor"):
        (home / folder).mkdir()
    applied = {o.host: o for o in setup_all(Mode.APPLY, COMMAND, sandbox=False)}  # the entries' and hooks' records
    assert applied["codex"].plan is not None and applied["codex"].plan.guard is not None
    assert applied["cursor"].plan is not None and applied["cursor"].plan.guard is None
    assert len(records(env)) == 5
    undone = {o.host: o for o in setup_all(Mode.UNDO, COMMAND)}
    assert all(undone[h].status is Status.DONE for h in ("codex", "gemini", "cursor"))
    assert records(env) == []
    assert sorted(p.name for p in home.iterdir()) == [".codex", ".cursor", ".gemini"]
    assert all(not any(home.joinpath(f).iterdir()) for f in (".codex", ".cursor", ".gemini"))


def test_undo_with_nothing_recorded(env: dict[str, str]) -> None:
    with pytest.raises(NoRecord):
        run("claude", Mode.UNDO, "")


def test_a_guard_record_alone_is_undone(env: dict[str, str]) -> None:
    run("codex", Mode.APPLY, COMMAND)
    entry = Path(env["HOME"]) / ".codex" / "config.toml"
    entry.unlink()  # removed by hand, then its record too
    for name in records(env):
        if "guard" not in name:
            (Path(env["VAULTD_HOME"]) / "setup" / name).unlink()
    plan = run("codex", Mode.UNDO, "")
    assert plan.action is Action.NONE and plan.guard is not None and plan.guard.action is Action.DELETE_FILE
    assert records(env) == []


# -- doctor's guard rows ---------------------------------------------------------------------------


def test_doctor_says_whether_the_guard_is_installed(env: dict[str, str], tmp_path: Path) -> None:
    real = tmp_path / "bin" / "vaultctl"
    write(real, "#!/bin/sh\n")
    real.chmod(0o755)
    assert guard_row("claude", env, has_entry=False) is None
    level, check, finding = guard_row("claude", env, has_entry=True) or ("", "", "")
    assert (level, check) == ("warn", "guard:claude") and "vaultctl setup claude --apply" in finding
    run("claude", Mode.APPLY, str(real))
    assert guard_row("claude", env, has_entry=True) == (
        "ok",
        "guard:claude",
        f"{hooks_path('claude', env)}: guard hook on PreToolUse, SessionStart, UserPromptSubmit, Stop",
    )
    data = load(hooks_path("claude", env))
    del data["hooks"]["SessionStart"]
    write(hooks_path("claude", env), json.dumps(data))
    row = guard_row("claude", env, has_entry=True)
    assert row is not None and row[0] == "warn" and "not on SessionStart" in row[2]
    run("codex", Mode.APPLY, str(real))
    row = guard_row("codex", env, has_entry=True)
    assert row is not None and row[0] == "ok" and "/hooks" in row[2]
    write(hooks_path("gemini", env), json.dumps({"hooksConfig": {"enabled": False}}))
    run("gemini", Mode.APPLY, str(real))
    row = guard_row("gemini", env, has_entry=True)
    assert row is not None and row[0] == "warn" and "hooksConfig.enabled" in row[2]
    row = guard_row("cursor", env, has_entry=True)
    assert row is not None and row[0] == "ok" and "no guard hook for Cursor" in row[2]
    assert guard_row("windsurf", env, has_entry=False) is None
    real.unlink()
    row = guard_row("codex", env, has_entry=False)
    assert row is not None and row[0] == "fail" and "cannot start" in row[2]


@pytest.mark.parametrize("host", GUARD_HOSTS)
def test_a_created_file_is_deleted_by_undo_after_vaultctl_moved(host: str, env: dict[str, str]) -> None:
    """Regression: with the entry and the hooks in one created file (Gemini CLI), re-applying with a
    moved vaultctl left undo a file holding `{}` instead of deleting the file setup created."""
    path = hooks_path(host, env)
    run(host, Mode.APPLY, COMMAND)
    run(host, Mode.APPLY, OTHER_COMMAND)
    run(host, Mode.UNDO, "")
    assert not path.exists()
    entry = HOSTS[host].config_path(env)
    assert not entry.exists() and records(env) == []


def test_a_bom_is_kept(env: dict[str, str]) -> None:
    path = hooks_path("gemini", env)
    original = write(path, '\ufeff{\n  "hooks": {\n    "BeforeTool": []\n  }\n}\n')
    run("gemini", Mode.APPLY, COMMAND)
    assert path.read_bytes().startswith("\ufeff".encode())
    assert load(path)["hooks"]["BeforeTool"] == [groups_for("gemini", env)["BeforeTool"]]
    run("gemini", Mode.UNDO, "")
    assert path.read_bytes() == original


def test_a_linked_settings_file_is_refused_and_nothing_is_written(env: dict[str, str], tmp_path: Path) -> None:
    """Dotfile managers link ~/.claude/settings.json; setup does not edit through links."""
    real = tmp_path / "dotfiles" / "settings.json"
    original = write(real, '{"hooks": {}}')
    link = hooks_path("claude", env)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    with pytest.raises(UnsafeFile) as info:
        run("claude", Mode.APPLY, COMMAND)
    assert "--no-guard" in info.value.message and info.value.manual is not None and "guard" in info.value.manual
    assert real.read_bytes() == original and link.is_symlink()
    assert not (Path(env["HOME"]) / ".claude.json").exists() and records(env) == []


def test_setup_all_undo_takes_out_the_sandbox_settings_too(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    for folder in (".claude", ".codex", ".gemini", ".cursor"):
        (home / folder).mkdir()
    applied = {o.host: o for o in setup_all(Mode.APPLY, COMMAND)}
    assert all(o.status is Status.DONE for o in applied.values() if o.host in ("claude", "codex", "gemini")), applied
    claude, codex = applied["claude"].plan, applied["codex"].plan
    assert claude is not None and claude.sandbox is not None and claude.sandbox.applied
    assert codex is not None and codex.sandbox is not None and codex.sandbox.applied
    assert load(hooks_path("claude", env))["sandbox"]["enabled"] is True
    assert any("sandbox" in n for n in records(env))
    undone = {o.host: o for o in setup_all(Mode.UNDO, COMMAND)}
    assert all(undone[h].status is Status.DONE for h in ("claude", "codex", "gemini", "cursor"))
    assert records(env) == []
    assert all(not any(home.joinpath(f).iterdir()) for f in (".claude", ".codex", ".cursor", ".gemini"))


def test_gemini_one_file_three_changes_give_back_its_bytes(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "docker").write_text("#!/bin/sh\nexit 0\n")
    (tools / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    path = hooks_path("gemini", env)
    original = write(path, '{\n  "theme": "x"\n}\n')
    plan = run("gemini", Mode.APPLY, COMMAND)
    assert plan.sandbox is not None and plan.sandbox.path == path
    assert sorted(load(path)) == ["hooks", "mcpServers", "theme", "tools"]
    run("gemini", Mode.UNDO, "")
    assert path.read_bytes() == original and records(env) == []
    path.unlink()
    run("gemini", Mode.APPLY, COMMAND)
    undone = run("gemini", Mode.UNDO, "")
    assert undone.action is Action.DELETE_FILE and not path.exists()
