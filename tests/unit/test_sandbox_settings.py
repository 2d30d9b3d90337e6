"""Merging the sandbox rules into a host's settings text, and taking them out again: for any
settings a person may have (their own sandbox keys, deny rules, layout), undo gives back the same
bytes, apply keeps every key and rule of theirs, and a second apply changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl.setup.errors import EntryChanged, MalformedConfig
from vaultctl.setup.sandboxtext import SandboxJson, SandboxToml, Want

PATH = Path("/h/.claude/settings.json")
WANTS = [
    Want(("sandbox", "enabled"), True),
    Want(("sandbox", "allowUnsandboxedCommands"), False),
    Want(("sandbox", "filesystem", "denyWrite"), items=("//v/a", "//vd", "//run")),
    Want(("sandbox", "filesystem", "denyRead"), items=("//vd", "//run")),
    Want(("permissions", "deny"), items=("Edit(//v/a/**)", "Edit(//vd/**)")),
]

scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=5), st.none())
rules = st.lists(st.sampled_from(["//v/a", "//etc", "Read(./.env)", "Edit(//vd/**)", "Bash(curl:*)"]), max_size=4)
filesystem = st.fixed_dictionaries({}, optional={"denyWrite": rules, "denyRead": rules, "allowWrite": rules})
sandbox = st.fixed_dictionaries(
    {}, optional={"enabled": scalars, "allowUnsandboxedCommands": scalars, "filesystem": filesystem, "excludedCommands": rules}
)
permissions = st.fixed_dictionaries({}, optional={"allow": rules, "deny": rules, "ask": rules})
document = st.fixed_dictionaries(
    {}, optional={"model": st.text(max_size=5), "sandbox": sandbox, "permissions": permissions, "hooks": st.just({}), "x": scalars}
)
layouts = st.sampled_from(
    [
        {"indent": 2},
        {"indent": 4},
        {"indent": "\t"},
        {"indent": None},
        {"indent": None, "separators": (",", ":")},
    ]
)


def _apply(text: str) -> tuple[SandboxJson, list[Any]]:
    doc, steps = SandboxJson(text, PATH), []
    for want in WANTS:
        doc, done = doc.want(want)
        steps += done
    return doc, steps


def _undo(text: str, steps: list[Any]) -> str:
    doc = SandboxJson(text, PATH)
    for step in reversed(steps):
        doc = doc.revert(step)
    return doc.text


@settings(max_examples=300, deadline=None)
@given(data=document, layout=layouts, crlf=st.booleans(), trailing=st.sampled_from(["", "\n"]))
def test_apply_keeps_theirs_and_undo_gives_back_the_bytes(data: dict[str, Any], layout: dict[str, Any], crlf: bool, trailing: str) -> None:
    text = json.dumps(data, **layout) + trailing
    if crlf:
        text = text.replace("\n", "\r\n")
    doc, steps = _apply(text)
    after = doc.data
    assert after["sandbox"]["enabled"] is True and after["sandbox"]["allowUnsandboxedCommands"] is False
    for want in WANTS:
        if want.items is not None:
            node: Any = after
            for key in want.path:
                node = node[key]
            theirs: Any = data
            for key in want.path:
                theirs = theirs.get(key, {}) if isinstance(theirs, dict) else {}
            theirs = theirs if isinstance(theirs, list) else []
            assert node[: len(theirs)] == theirs, "their rules stay first, in order"
            assert set(want.items) <= set(node)
    for key, value in data.items():
        if key not in ("sandbox", "permissions"):
            assert after[key] == value
    for key, value in (data.get("permissions") or {}).items():
        if key != "deny":
            assert after["permissions"][key] == value
    again, more = _apply(doc.text)
    assert more == [] and again.text == doc.text, "a second apply changes nothing"
    assert _undo(doc.text, steps) == text


def test_a_member_setup_added_and_the_person_changed_stops_undo() -> None:
    doc, steps = _apply('{"model": "m"}\n')
    changed = doc.text.replace('"enabled": true', '"enabled": true, "network": {}')
    with pytest.raises(EntryChanged):
        _undo(changed, steps)


def test_a_value_the_person_set_again_since_stays_theirs() -> None:
    text = '{"sandbox": {"enabled": false, "x": 1}}'
    doc, steps = _apply(text)
    assert json.loads(doc.text)["sandbox"]["enabled"] is True
    mine_again = doc.text.replace('"enabled": true', '"enabled": "later"')
    assert json.loads(_undo(mine_again, steps))["sandbox"]["enabled"] == "later"


@pytest.mark.parametrize("text", ['{"sandbox": true}', '{"sandbox": {"filesystem": {"denyWrite": "//x"}}}', '{"permissions": []}'])
def test_a_setting_of_another_shape_is_refused(text: str) -> None:
    with pytest.raises(MalformedConfig):
        _apply(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        'model = "o3"\n',
        '\ufeffmodel = "o3"\r\n[x]\r\ny = 1\r\n',
        "sandbox_mode = 'danger-full-access' # mine\n[profiles.p]\nsandbox_mode = \"read-only\"\n",
        'approval = "never"\nsandbox_mode="workspace-read"\n',
    ],
)
def test_codex_mode_round_trips(text: str) -> None:
    doc, steps = SandboxToml(text, PATH).want()
    assert doc.data["sandbox_mode"] == "workspace-write"
    assert SandboxToml(doc.text, PATH).want()[1] == []
    back = SandboxToml(doc.text, PATH)
    for step in reversed(steps):
        back = back.revert(step)
    assert back.text == text
