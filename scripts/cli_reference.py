"""The CLI reference in Markdown (docs/reference/cli.md), generated from the typer commands.

Every command and subcommand with its help text, usage line, arguments and options, read from the
same objects ``vaultctl COMMAND --help`` prints, so the reference cannot drift from the code.
``python -m scripts.docs`` (``make docs``) regenerates it; a test fails when the committed file
differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer.main

from vaultctl.cli import app

if TYPE_CHECKING:
    from collections.abc import Iterator

PROG = "vaultctl"


@dataclass(frozen=True)
class Entry:
    """One command as the user types it (``vaultctl log tail``), with what describes it."""

    path: str
    command: Any  # a typer command or group; typer types its objects loosely
    context: Any

    @property
    def is_group(self) -> bool:
        return hasattr(self.command, "commands")

    @property
    def help(self) -> str:
        return str(self.command.help or "").strip()

    def usage(self) -> str:
        pieces = self.command.collect_usage_pieces(self.context)
        return " ".join([self.path, *pieces])

    def params(self) -> list[tuple[str, str]]:
        """(declaration, help) for each argument and option; ``--help`` itself is left out."""
        rows = []
        for param in self.command.get_params(self.context):
            if param.hidden or param.name == "help":
                continue
            record = param.get_help_record(self.context)
            if record is not None:
                rows.append((record[0], record[1]))
        return rows


def entries(root: Any = None) -> Iterator[Entry]:
    """Every command of ``vaultctl`` in the order ``--help`` lists them, groups before their members."""
    command = root if root is not None else typer.main.get_command(app)
    top = command.context_class(command, info_name=PROG)
    yield from _walk(command, top, PROG)


def _walk(group: Any, parent: Any, prefix: str) -> Iterator[Entry]:
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        context = command.context_class(command, info_name=name, parent=parent)
        entry = Entry(f"{prefix} {name}", command, context)
        yield entry
        if entry.is_group:
            yield from _walk(command, context, entry.path)


def undocumented(root: Any = None) -> list[str]:
    """The commands and groups with no help text: ``--help`` and the reference would say nothing."""
    return [entry.path for entry in entries(root) if not entry.help]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    out = [
        "# CLI reference",
        "",
        "Generated from the typer commands of `vaultctl` by `python -m scripts.docs` (`make docs`);",
        "do not edit by hand. [../cli.md](../cli.md) tells what the commands are for.",
        "",
    ]
    for entry in entries():
        out += [f"## `{entry.path}`", "", entry.help, "", f"Usage: `{entry.usage()}`", ""]
        if entry.is_group:
            members = [e for e in entries() if e.path.rsplit(" ", 1)[0] == entry.path]
            out += [f"Commands: {', '.join(f'`{m.path}`' for m in members)}.", ""]
        rows = entry.params()
        if rows:
            out += ["| argument or option | meaning |", "|---|---|"]
            out += [f"| `{_cell(decl)}` | {_cell(text)} |" for decl, text in rows]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render(), end="")
