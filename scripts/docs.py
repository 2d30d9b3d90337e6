"""Regenerate the reference docs that are derived from code, or check that they are current.

``python -m scripts.docs`` writes them (``make docs``); ``--check`` writes nothing and exits 1
naming each stale file (``make check``, CI), so a change to the protocol table or to a command is
committed together with its reference. ``--check`` also holds docs/cli.md, which is written by
hand, to the commands (:mod:`scripts.cli_doc`).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.reference import render as render_methods
from scripts.cli_doc import problems as guide_problems
from scripts.cli_reference import render as render_cli
from scripts.handler_index import render as render_handler_index
from scripts.man_page import render as render_man
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.service.units import SHIPPED

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.spec import AnySpec

REPO = Path(__file__).resolve().parents[1]


@functools.cache
def _catalogue() -> ToolCatalogue:
    return ToolCatalogue()


def mcp_tool(spec: AnySpec) -> str:
    """The tool that reaches ``spec`` as ``tools/list`` offers it: a family names its selector
    (``status`` (view ``daemon``)), since the member's own name is listed nowhere."""
    name, chosen = _catalogue().call_of(spec)
    return f"`{name}`" + "".join(f" ({key} `{value}`)" for key, value in chosen.items())


def render_protocol() -> str:
    """docs/reference/methods.md, each method with the MCP tool that reaches it."""
    return render_methods(mcp_tool)


GENERATED: dict[str, Callable[[], str]] = {
    "docs/reference/methods.md": render_protocol,
    "docs/reference/cli.md": render_cli,
    "docs/man/vaultctl.1": render_man,
    **SHIPPED,  # systemd/ and launchd/: the service files, for a pipx or uv tool install
    "vaultd/api/handler_index.py": render_handler_index,  # the daemon's handlers, loaded at first call
}


def stale() -> list[str]:
    """The generated files whose committed text differs from what the code renders now."""
    return [rel for rel, render in GENERATED.items() if not (REPO / rel).is_file() or (REPO / rel).read_text(encoding="utf-8") != render()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is stale")
    args = parser.parse_args(argv)
    if args.check:
        behind = stale()
        for rel in behind:
            print(f"{rel} is stale: run `make docs`", file=sys.stderr)
        disagree = guide_problems()
        for problem in disagree:
            print(problem, file=sys.stderr)
        return 1 if behind or disagree else 0
    for rel, render in GENERATED.items():
        (REPO / rel).parent.mkdir(parents=True, exist_ok=True)
        (REPO / rel).write_text(render(), encoding="utf-8")
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
