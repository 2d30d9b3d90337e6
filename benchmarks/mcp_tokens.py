"""What ``tools/list`` costs an agent's context, per toolset: bytes and a word-piece token estimate.

Hosts that load every tool put each tool's name, description and input schema in the model's
context before its first call, so this is a cost paid in every session. The figure is computed
from the shim's own tool definitions (the same code that answers ``tools/list``), with no daemon,
so without the vault enum (one short enum per tool when vaults are registered).

The estimate needs no tokenizer: a word-piece count as BPE tokenizers of the GPT-4 and Claude
families cut JSON (a word up to 8 letters is one piece, longer ones one piece per 8; a digit run one
piece per 3 digits; a run of punctuation one piece per 2 characters, since ``":"`` and ``{"``
are single tokens). On this project's schemas it lands within about 10% of ``bytes / 3.7``; both
are printed. The budget test (``tests/unit/test_mcp_budget.py``) holds the estimate to
:data:`BUDGETS`.

Run: ``.venv/bin/python -m benchmarks.mcp_tokens``
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

from vaultctl.mcp.server import INSTRUCTIONS
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.mcp.toolsets import TOOLSETS, resolve

_PIECES = re.compile(r"[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9]+")
BUDGETS = {"core": 3_700, "all": 12_000}  #: token estimate of ``tools/list`` and the instructions each toolset must stay under


def estimate_tokens(text: str) -> int:
    """A tokenizer-free word-piece estimate of ``text``'s tokens."""
    total = 0
    for piece in _PIECES.findall(text):
        if piece[0].isalpha():
            total += math.ceil(len(piece) / 8)
        elif piece[0].isdigit():
            total += math.ceil(len(piece) / 3)
        else:
            total += math.ceil(len(piece) / 2)
    return total


def listing(toolset: str) -> list[dict[str, Any]]:
    """The ``tools/list`` tools of ``toolset``, as a 2025-06-18 (or later) client gets them."""
    return ToolCatalogue(resolve(toolset)).definitions(None, structured=True)


def instructions(toolset: str) -> str:
    """The handshake's instructions for ``toolset``: they describe once the arguments its tools share,
    so they count beside ``tools/list``."""
    return ToolCatalogue(resolve(toolset)).instructions(INSTRUCTIONS)


def measure(toolset: str) -> dict[str, Any]:
    tools = listing(toolset)
    text = json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False) + instructions(toolset)
    schemas = "".join(json.dumps(t["inputSchema"], separators=(",", ":"), ensure_ascii=False) for t in tools)
    return {
        "toolset": toolset,
        "tools": len(tools),
        "bytes": len(text.encode()),
        "schema_bytes": len(schemas.encode()),
        "tokens": estimate_tokens(text),
        "bytes_per_3_7": round(len(text.encode()) / 3.7),
    }


def main() -> int:
    rows = [measure(name) for name in TOOLSETS]
    print("| toolset | tools | bytes | input schemas (bytes) | word-piece tokens | bytes / 3.7 | budget |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        budget = f"{BUDGETS[r['toolset']]:,}" if r["toolset"] in BUDGETS else ""
        cells = [
            r["toolset"],
            r["tools"],
            f"{r['bytes']:,}",
            f"{r['schema_bytes']:,}",
            f"{r['tokens']:,}",
            f"{r['bytes_per_3_7']:,}",
            budget,
        ]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    over = [r["toolset"] for r in rows if r["tokens"] > BUDGETS.get(r["toolset"], sys.maxsize)]
    if over:
        print(f"over budget: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
