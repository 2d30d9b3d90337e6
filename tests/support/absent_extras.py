"""Processes that run as if an optional extra were not installed, without uninstalling anything.

A ``sitecustomize`` module on ``PYTHONPATH`` puts ``None`` in ``sys.modules`` for each of the
extra's top-level modules at interpreter start: ``import uvicorn`` then fails with
``ModuleNotFoundError`` and :func:`importlib.util.find_spec` answers None, exactly as when the
distribution is absent. Every process started with the environment has it: the daemon, the
console it spawns, the communities worker, ``vaultctl``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.extras import Extra


def hide_extras(env: dict[str, str], folder: Path, *extras: Extra) -> None:
    """Make ``env``'s processes start without ``extras`` (the shim is written into ``folder``)."""
    modules = sorted(module for extra in extras for _, module in extra.libraries)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        f'"""Hides {", ".join(e.name for e in extras)} (tests/support/absent_extras.py)."""\n'
        "import sys\n\n"
        f"for _name in {modules!r}:\n"
        "    sys.modules[_name] = None  # type: ignore[assignment]\n"
    )
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [env.get("PYTHONPATH")])])
