"""The CLI reference in Markdown (docs/reference/cli.md), generated from the typer commands.

Every command and subcommand with its help text, usage line, arguments and options, read from the
same objects ``vaultctl COMMAND --help`` prints, so the reference cannot drift from the code.
``python -m scripts.docs`` (``make docs``) regenerates it; a test fails when the committed file
differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl import command_tree
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

    def help_paragraphs(self) -> list[tuple[bool, str]]:
        """The help text by paragraph: (verbatim, text). A paragraph click keeps as written (it
        starts with ``\\b``) is verbatim, the others are prose to reflow."""
        out = []
        for paragraph in self.help.split("\n\n"):
            verbatim = paragraph.startswith("\b")
            text = paragraph.removeprefix("\b").strip("\n")
            out.append((verbatim, text if verbatim else " ".join(text.split())))
        return out

    def usage(self) -> str:
        pieces = self.command.collect_usage_pieces(self.context)
        return " ".join([self.path, *pieces])

    def params(self) -> list[tuple[str, str]]:
        """(declaration, help) for each argument and option; ``--help`` itself is left out."""
        rows = []
        for param in self.command.get_params(self.context):
            if param.hidden or param.name == "help":
                continue
            record = command_tree.help_record(param, self.context)
            if record is not None:
                rows.append(record)
        return rows


def entries(root: Any = None) -> Iterator[Entry]:
    """Every command of ``vaultctl`` in the order ``--help`` lists them, groups before their members."""
    command = root if root is not None else command_tree.build(app)
    for path, sub, context in command_tree.walk(command, PROG):
        yield Entry(path, sub, context)


def undocumented(root: Any = None) -> list[str]:
    """The commands and groups with no help text: ``--help`` and the reference would say nothing."""
    return [entry.path for entry in entries(root) if not entry.help]


def unexplained_options(root: Any = None) -> list[str]:
    """``vaultctl daemon logs --lines`` for each visible option or argument with no help text:
    ``--help`` would list it with nothing beside it."""
    out = []
    for entry in entries(root):
        for param in entry.command.get_params(entry.context):
            if param.hidden or param.name == "help":
                continue
            if not str(getattr(param, "help", "") or "").strip():
                rows = command_tree.help_record(param, entry.context)
                out.append(f"{entry.path} {rows[0] if rows else param.name}")
    return out


def help_markdown(entry: Entry) -> str:
    """The entry's help as Markdown: prose paragraphs, and verbatim ones as indented code."""
    parts = []
    for verbatim, text in entry.help_paragraphs():
        parts.append("\n".join("    " + line for line in text.splitlines()) if verbatim else text)
    return "\n\n".join(parts)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def root() -> Entry:
    """``vaultctl`` itself: the options that go before the command (``vaultctl --color never ...``)."""
    command = command_tree.build(app)
    return Entry(PROG, command, command.context_class(command, info_name=PROG))


def _table(entry: Entry) -> list[str]:
    rows = entry.params()
    if not rows:
        return []
    return ["| argument or option | meaning |", "|---|---|", *(f"| `{_cell(decl)}` | {_cell(text)} |" for decl, text in rows), ""]


def render() -> str:
    top = root()
    out = [
        "# CLI reference",
        "",
        "Generated from the typer commands of `vaultctl` by `python -m scripts.docs` (`make docs`);",
        "do not edit by hand. [../cli.md](../cli.md) tells what the commands are for.",
        "",
        f"Usage: `{top.usage()}`",
        "",
        "Options before the command apply to every command:",
        "",
        *_table(top),
    ]
    for entry in entries():
        out += [f"## `{entry.path}`", "", help_markdown(entry), "", f"Usage: `{entry.usage()}`", ""]
        if entry.is_group:
            members = [e for e in entries() if e.path.rsplit(" ", 1)[0] == entry.path]
            out += [f"Commands: {', '.join(f'`{m.path}`' for m in members)}.", ""]
        out += _table(entry)
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render(), end="")
