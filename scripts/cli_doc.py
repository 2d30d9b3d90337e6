"""Checks docs/cli.md, the hand-written guide to the commands, against the commands themselves.

The guide is prose and tables written for people, so it is checked rather than generated: every
command is named in it, every ``vaultctl ...`` it shows in a code span names a command that
exists, and every ``--option`` such a span gives belongs to that command (or goes before the
command, like ``--color``). A renamed or removed option then fails ``make check`` until the
guide follows.
"""

from __future__ import annotations

import re
from pathlib import Path

from scripts.cli_reference import entries, root

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "cli.md"
_SPAN = re.compile(r"`(vaultctl(?: [^`]*)?)`")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _options(entry_params: list[tuple[str, str]]) -> set[str]:
    found: set[str] = set()
    for declaration, _ in entry_params:
        found.update(_OPTION.findall(declaration.split(" <")[0]))
    return found | {"--help"}


def problems(text: str | None = None) -> list[str]:
    """What docs/cli.md says that the commands do not bear out; empty when it agrees."""
    guide = GUIDE.read_text(encoding="utf-8") if text is None else text
    commands = {entry.path: _options(entry.params()) for entry in entries()}
    global_options = _options(root().params())
    found = [f"docs/cli.md does not mention '{path}'" for path in commands if path not in guide]
    for number, line in enumerate(guide.splitlines(), start=1):
        for span in _SPAN.findall(line):
            words = span.split()
            rest = words[1:]
            while rest and rest[0].startswith("--") and rest[0].split("=")[0] in global_options:
                rest = rest[1:]
            path = max((p for p in commands if " ".join(["vaultctl", *rest]).startswith(p) and _whole(p, rest)), key=len, default=None)
            if path is None:
                if rest and not rest[0].startswith(("-", "…", "...")) and rest[0].isalpha() and rest[0].islower():
                    found.append(f"docs/cli.md:{number}: `{span}` names no vaultctl command")
                continue
            for option in _OPTION.findall(" ".join(rest)):
                if option not in commands[path] and option not in global_options:
                    found.append(f"docs/cli.md:{number}: `{span}`: {path} has no option {option}")
    return found


def _whole(path: str, rest: list[str]) -> bool:
    """Whether the command words of ``path`` are whole words at the start of ``rest``."""
    names = path.split()[1:]
    return rest[: len(names)] == names


if __name__ == "__main__":
    print("\n".join(problems()) or "docs/cli.md agrees with the commands")
