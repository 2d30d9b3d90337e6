"""The click command tree typer builds from vaultctl's commands, set to read as vaultctl's help reads.

typer turns the command functions into click commands; :func:`build` then walks that tree once
and gives every command and group the :class:`Command` or :class:`Group` class, which differ from
typer's only in how they present themselves:

- help is plain text wrapped to the terminal (or ``$COLUMNS``): no Rich markup, so a regular
  expression such as ``[a-z]`` in a help text prints as written, and Rich is never imported;
- arguments are named as people write them, ``QUERY`` and ``[FOLDER]``, not ``{query}``;
- the context of the command being run is kept (:func:`current`), so an error about a params
  field can name the command-line flag that set it (:func:`flag_for`).

Every command gets this, including one added later, because it happens where the tree is built
rather than at each command's declaration. The CLI reference and the man page are rendered from
the same tree, with the same :func:`help_record`.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_current: list[Any] = []  #: the contexts of the commands being invoked, innermost last


def argument_name(param: Any) -> str:
    """``QUERY`` for a parameter named ``query`` (its metavar when it has one)."""
    name = str(param.metavar or param.name or "").upper()
    return name + ("..." if param.nargs != 1 else "")


def help_record(param: Any, ctx: Any) -> tuple[str, str] | None:
    """(declaration, help) as ``--help`` lists a parameter; None for a hidden one."""
    record = param.get_help_record(ctx)
    if record is None:
        return None
    if param.param_type_name == "argument":
        return argument_name(param), record[1]
    return str(record[0]), str(record[1])


def _usage(command: Any, ctx: Any) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if param.param_type_name != "argument":
            continue
        name = argument_name(param)
        pieces.append(name if param.required else f"[{name}]")
    return pieces


def _options(command: Any, ctx: Any, formatter: Any) -> None:
    args: list[tuple[str, str]] = []
    opts: list[tuple[str, str]] = []
    for param in command.get_params(ctx):
        record = help_record(param, ctx)
        if record is not None:
            (args if param.param_type_name == "argument" else opts).append(record)
    for title, rows in (("Arguments", args), ("Options", opts)):
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def _kept(ctx: Any, invoke: Callable[[Any], Any]) -> Any:
    """Run ``invoke(ctx)`` with ``ctx`` kept as the current context (:func:`current`)."""
    _current.append(ctx)
    try:
        return invoke(ctx)
    finally:
        _current.pop()


class Command(TyperCommand):
    """A vaultctl command: plain help, argument names in capitals, its context kept while it runs."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage(self, ctx)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _options(self, ctx, formatter)

    def invoke(self, ctx: Any) -> Any:
        return _kept(ctx, super().invoke)


class Group(TyperGroup):
    """A vaultctl command group, presented like :class:`Command`."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*_usage(self, ctx), self.subcommand_metavar]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _options(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def invoke(self, ctx: Any) -> Any:
        return _kept(ctx, super().invoke)


def _restyle(command: Any) -> None:
    if type(command) is TyperCommand:
        command.__class__ = Command
    elif type(command) is TyperGroup:
        command.__class__ = Group
    command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        _restyle(sub)


def build(app: typer.Typer) -> Any:
    """The click command tree of ``app``, every command presented as vaultctl presents them."""
    root = typer.main.get_command(app)
    _restyle(root)
    return root


def walk(root: Any, prog: str) -> Iterator[tuple[str, Any, Any]]:
    """(``vaultctl log tail``, command, context) for every visible command, groups before members."""
    yield from _walk(root, root.context_class(root, info_name=prog), prog)


def _walk(group: Any, parent: Any, prefix: str) -> Iterator[tuple[str, Any, Any]]:
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        context = command.context_class(command, info_name=name, parent=parent)
        yield f"{prefix} {name}", command, context
        if hasattr(command, "commands"):
            yield from _walk(command, context, f"{prefix} {name}")


def current() -> Any | None:
    """The context of the innermost command running now, or None outside one."""
    return _current[-1] if _current else None


def flag_for(field: str) -> str | None:
    """How the running command's user set a params field: ``--max-bytes`` for ``max_bytes``,
    ``TARGET`` for an argument; None when no parameter of the command carries that name."""
    ctx = current()
    if ctx is None:
        return None
    for param in ctx.command.params:
        if field not in ((param.name or "").rstrip("_"), str(param.metavar or "").lower()):
            continue
        if param.param_type_name == "argument":
            return argument_name(param)
        longest = max(param.opts, key=len, default=None)
        return str(longest) if longest else None
    return None


def again(**changes: object) -> str:
    """The command line of the running command with ``changes`` to its parameters (by name), for
    a next-page hint: every argument and every option given, or changed here, is kept. A value of
    None drops an option; defaults are left out."""
    ctx = current()
    if ctx is None:
        return ""
    words = ctx.command_path.split()
    values = {**ctx.params, **changes}
    for param in ctx.command.params:
        if param.param_type_name != "argument" or param.name not in values:
            continue
        value = values[param.name]
        words += [str(v) for v in value] if isinstance(value, (list, tuple)) else [] if value is None else [str(value)]
    for param in ctx.command.params:
        if param.param_type_name != "option" or param.name not in values or not param.opts:
            continue
        value = values[param.name]
        changed = param.name in changes
        if value is None or (not changed and value == param.default) or value in ((), []):
            continue
        flag = max(param.opts, key=len)
        if getattr(param, "is_flag", False):
            if value is True:
                words.append(flag)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            words += [flag, str(getattr(item, "value", item))]
    return " ".join(shlex.quote(w) for w in words)
