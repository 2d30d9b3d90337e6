"""The CLI offers what the protocol declares: every field of a method's params is set by some
vaultctl command (or is named here with why not), every method has a command (or is named here),
and every write command carries the steering options its params class calls for.

The fields are read from the commands' source: each ``SomeParams(...)`` call's keywords, with a
``**steering`` spread standing for the fields :func:`write_command.steering_fields` gives. A field
added to the protocol fails here until a command offers it or this file says why none does.
"""

from __future__ import annotations

import ast
from typing import Any

import msgspec
import pytest

from protocol.methods.writes import EditParams, TwoStepParams, WriteParams
from protocol.table import METHODS
from tests.support.harness import REPO
from vaultctl import command_tree
from vaultctl.cli import whole_app
from vaultctl.commands.write_command import WRITE_SPECS, steering_fields

COMMANDS = REPO / "vaultctl" / "commands"

#: Fields of every write's params no command offers.
NO_WRITE_OPTION = {
    "reason": "a proposal's reason for its reviewer: a person's channel is never gated, so a CLI write is never a proposal",
}

#: Params fields no command offers, per params class.
NO_OPTION: dict[str, dict[str, str]] = {
    "VaultAddParams": {
        "agents": "the agent policy is set after registering with 'vault policy', which shows every cell it changes",
    },
    "SearchParams": {
        "cursor": "'vaultctl search' asks for every hit up to --limit in one answer (max_bytes at its bound), so it never pages",
    },
}

#: Methods with no command of their own, and who calls them instead.
NO_COMMAND = {
    "hello": "every connection's handshake (vaultctl.client)",
    "note.names": "shell completion of note names (vaultctl.completion)",
    "guard.check": "the agent hosts' edit hook (vaultctl.guard.hook)",
    "unsubscribe": "'vaultctl watch' ends its subscription by closing its connection",
    "note.read_many": "an agent's batch read, saving round trips; a person reads each note with 'vaultctl show'",
    "session.hook": "the agent hosts' session hooks (vaultctl.guard.hook)",
    "work.start": "an agent declares its work; a person sees it with 'vaultctl work' and cancels it there",
    "work.progress": "an agent reports on its own work",
    "work.finish": "an agent closes its own work",
}


def _constructed() -> dict[str, set[str]]:
    """Params class name -> the fields some command's call of it sets."""
    params = {spec.params.__name__: spec.params for spec in METHODS.values()}
    found: dict[str, set[str]] = {}
    for path in sorted(COMMANDS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name not in params:
                continue
            fields = found.setdefault(name, set())
            for keyword in node.keywords:
                if keyword.arg is not None:
                    fields.add(keyword.arg)
                else:
                    cls = params[name]
                    assert issubclass(cls, WriteParams), f"{path.name}:{node.lineno}: ** spreads only a write's steering fields"
                    fields |= steering_fields(cls)
    return found


def _all_fields(cls: type[Any]) -> set[str]:
    return {f.name for f in msgspec.structs.fields(cls)}


def _exempt(cls: type[Any]) -> set[str]:
    return set(NO_OPTION.get(cls.__name__, {})) | (set(NO_WRITE_OPTION) if issubclass(cls, WriteParams) else set())


def test_every_params_field_is_set_by_a_command() -> None:
    constructed = _constructed()
    missing = {
        spec.params.__name__: sorted(_all_fields(spec.params) - constructed[spec.params.__name__] - _exempt(spec.params))
        for spec in METHODS.values()
        if spec.params.__name__ in constructed
    }
    assert {k: v for k, v in missing.items() if v} == {}


def test_every_method_has_a_command() -> None:
    constructed = _constructed()
    without = sorted(name for name, spec in METHODS.items() if spec.params.__name__ not in constructed)
    assert without == sorted(NO_COMMAND)


def test_every_exemption_is_still_needed() -> None:
    """A field named here that a command now offers, or that the protocol dropped, leaves the list."""
    constructed = _constructed()
    by_name = {spec.params.__name__: spec.params for spec in METHODS.values()}
    for name, fields in NO_OPTION.items():
        assert set(fields) <= _all_fields(by_name[name]) - constructed.get(name, set()), name
    writes = [cls for cls in by_name.values() if issubclass(cls, WriteParams)]
    for field in NO_WRITE_OPTION:
        assert all(field in _all_fields(cls) and field not in constructed.get(cls.__name__, set()) for cls in writes), field


def _write_commands() -> list[tuple[str, Any, Any]]:
    """(command line, click command, method spec) of every write command in the built tree."""
    root = command_tree.build(whole_app())
    found: list[tuple[str, Any, Any]] = []

    def walk(group: Any, words: tuple[str, ...]) -> None:
        ctx = group.context_class(group, info_name=words[-1])
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if hasattr(command, "list_commands"):
                walk(command, (*words, name))
                continue
            spec = WRITE_SPECS.get(getattr(command.callback, "__wrapped__", None))  # type: ignore[arg-type]
            if spec is not None:
                found.append((" ".join((*words, name)), command, spec))

    walk(root, ("vaultctl",))
    return found


def test_the_write_commands_are_found_in_the_tree() -> None:
    lines = {line for line, _, _ in _write_commands()}
    assert {"vaultctl new", "vaultctl move", "vaultctl undo", "vaultctl capture", "vaultctl claim update", "vaultctl revert"} <= lines
    assert len(lines) == len(WRITE_SPECS)


@pytest.mark.parametrize(("line", "command", "spec"), _write_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_write_command_has_the_options_its_params_call_for(line: str, command: Any, spec: Any) -> None:
    flags = {opt for p in command.params for opt in p.opts}
    expected = {"--vault", "--dry-run", "--log", "--json"}
    if issubclass(spec.params, EditParams) or "expected_sha" in spec.params.__struct_fields__:
        expected.add("--expected-sha")
    if issubclass(spec.params, TwoStepParams):
        expected |= {"--confirm", "--fingerprint"}
    steering = {"--vault", "--dry-run", "--log", "--json", "--expected-sha", "--confirm", "--fingerprint"}
    assert flags & steering == expected, line
