"""``vaultctl __complete SHELL LINE``: what may follow the command line typed so far.

The line (up to the cursor) is split as the shell would split it, then walked through the click
command tree: subcommands descend, an option that takes a value takes the next word, the other
words are the command's arguments in order. What the last, unfinished word can become depends
on where it stands: an option name, an option's value, a subcommand, or an argument. Values come
from the parameter's type (an enum's members), or from its :class:`~vaultctl.completion.Complete`
mark: the daemon for vaults, notes, ops and proposals; the shell itself for files and folders.

The answer is a first line naming the kind (``plain``, ``file``, ``dir``), then one candidate
per line as ``value<TAB>help``. Nothing here may fail loudly: a shell prints whatever comes back.
"""

from __future__ import annotations

import enum
import inspect
import shlex
import sys
import typing
from dataclasses import dataclass, field
from typing import Any

from vaultctl.completion import Complete

Item = tuple[str, str]

_SENTINEL = "\x1f"  #: appended to the line to learn where its last word starts (a unit separator: never typed)


def split_line(line: str) -> tuple[list[str], str]:
    """The complete words of ``line`` (the program name dropped) and the unfinished last one.

    The last word may be open: ``show "Alpha P`` or ``show Alpha\\ P`` both end in ``Alpha P``.
    """
    for closing in ("", '"', "'"):
        try:
            words = shlex.split(line + _SENTINEL + closing)
            break
        except ValueError:
            continue
    else:
        return [], ""
    last = words.pop() if words else _SENTINEL
    incomplete = last[: -len(_SENTINEL)] if last.endswith(_SENTINEL) else last.replace(_SENTINEL, "")
    return words[1:], incomplete


@dataclass
class Position:
    """Where the unfinished word stands: in which command, after which arguments and options."""

    command: Any
    path: list[str] = field(default_factory=list)  #: the subcommand names walked
    arguments: list[str] = field(default_factory=list)  #: the command's arguments so far
    values: dict[str, str] = field(default_factory=dict)  #: option values given, by parameter name
    pending: Any = None  #: an option whose value the unfinished word is
    options_over: bool = False  #: a bare ``--`` was given: every word is an argument


def _option(command: Any, word: str) -> Any | None:
    for param in command.params:
        if param.param_type_name == "option" and word in (*param.opts, *param.secondary_opts):
            return param
    return None


def _takes_value(param: Any) -> bool:
    return not (getattr(param, "is_flag", False) or getattr(param, "count", False))


def locate(root: Any, words: list[str]) -> Position:
    """Walk ``words`` through the command tree."""
    pos = Position(root)
    for word in words:
        if pos.pending is not None:
            pos.values[pos.pending.name] = word
            pos.pending = None
        elif word == "--" and not pos.options_over:
            pos.options_over = True
        elif word.startswith("-") and word != "-" and not pos.options_over:
            name, eq, value = word.partition("=")
            param = _option(pos.command, name)
            if param is not None and _takes_value(param):
                if eq:
                    pos.values[param.name] = value
                else:
                    pos.pending = param
        elif hasattr(pos.command, "commands") and word in pos.command.commands:
            pos.command = pos.command.commands[word]
            pos.path.append(word)
            pos.arguments = []
        else:
            pos.arguments.append(word)
    return pos


def _marks(command: Any) -> dict[str, tuple[Complete | None, type[enum.Enum] | None]]:
    """Each parameter's completion mark and enum type, read from the command function's annotations."""
    callback = getattr(command, "callback", None)
    if callback is None:
        return {}
    try:
        hints = typing.get_type_hints(inspect.unwrap(callback), include_extras=True)
    except (NameError, TypeError):
        return {}
    found: dict[str, tuple[Complete | None, type[enum.Enum] | None]] = {}
    for name, hint in hints.items():
        mark = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Complete)), None)
        found[name] = (mark, _enum_in(typing.get_args(hint)[0] if hasattr(hint, "__metadata__") else hint))
    return found


def _enum_in(hint: Any) -> type[enum.Enum] | None:
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    for arg in typing.get_args(hint):  # X | None, list[X]
        if (found := _enum_in(arg)) is not None:
            return found
    return None


def _argument(command: Any, index: int) -> Any | None:
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    for param in arguments:
        if param.nargs == -1 or index == 0:
            return param
        index -= 1
    return None


def _commands(group: Any, incomplete: str) -> list[Item]:
    ctx = group.context_class(group, info_name="vaultctl")
    items = []
    for name in group.list_commands(ctx):
        sub = group.commands[name]
        if not sub.hidden and name.startswith(incomplete):
            items.append((name, sub.get_short_help_str(60)))
    return items


def _value_items(root: Any, pos: Position, param: Any, incomplete: str) -> tuple[str, list[Item]]:
    mark, kind = _marks(pos.command).get(param.name, (None, None))
    if kind is not None:
        return "plain", [(str(m.value), "") for m in kind if str(m.value).startswith(incomplete)]
    if mark in (Complete.FILE, Complete.DIR):
        return mark.value, []
    if mark is Complete.COMMAND:
        group = root
        for word in pos.arguments:
            group = getattr(group, "commands", {}).get(word)
            if group is None:
                return "plain", []
        return "plain", _commands(group, incomplete) if hasattr(group, "commands") else []
    if mark is None:
        return "plain", []
    from vaultctl.completion.sources import values

    found = values(mark, incomplete, pos.values.get("vault"))
    if mark is Complete.NOTE:
        return "plain", found  # the daemon matched them, case-insensitively
    return "plain", [(v, h) for v, h in found if v.startswith(incomplete)]


def complete(root: Any, line: str, shell: str = "bash") -> tuple[str, list[Item]]:
    """(kind, candidates) for the unfinished word of ``line``."""
    words, incomplete = split_line(line)
    pos = locate(root, words)
    if pos.pending is not None:
        return _value_items(root, pos, pos.pending, incomplete)
    if incomplete.startswith("-") and not pos.options_over:
        name, eq, value = incomplete.partition("=")
        param = _option(pos.command, name)
        if eq and param is not None and _takes_value(param):
            kind, items = _value_items(root, pos, param, value)
            # bash completes the value alone (its word starts after '='); zsh and fish replace the whole word
            return kind, [(v if shell == "bash" else f"{name}={v}", h) for v, h in items]
        opts = [
            (opt, param.help or "")
            for param in pos.command.params
            if param.param_type_name == "option" and not param.hidden
            for opt in (*param.opts, *param.secondary_opts)
            if opt.startswith("--") and opt.startswith(incomplete)
        ]
        return "plain", [*opts, *([("--help", "Show the help and exit.")] if "--help".startswith(incomplete) else [])]
    if hasattr(pos.command, "commands") and not pos.arguments:
        items = _commands(pos.command, incomplete)
        if items or not pos.command.params:
            return "plain", items
    param = _argument(pos.command, len(pos.arguments))
    if param is None:
        return "plain", []
    return _value_items(root, pos, param, incomplete)


def answer(root: Any, argv: list[str]) -> int:
    """Print the answer for ``vaultctl __complete SHELL LINE``; always exits 0."""
    shell = argv[0] if argv else "bash"
    line = argv[1] if len(argv) > 1 else ""
    try:
        kind, items = complete(root, line, shell)
    except Exception:  # noqa: BLE001 - a shell shows whatever is printed: print nothing rather than a traceback
        kind, items = "plain", []
    # bash cannot show a candidate's help; zsh and fish show it after the tab
    out = [kind] + [value if shell == "bash" else f"{value}\t{' '.join(help_.split())[:80]}" for value, help_ in items]
    sys.stdout.write("\n".join(out) + "\n")
    return 0
