"""What a vaultctl call loads is part of its speed: a command line is about 200 ms of imports
before the daemon is asked anything (docs/performance.md, "vaultctl start-up")."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from tests.support.harness import REPO, RawClient, copy_sample_vault

if TYPE_CHECKING:
    from tests.support.harness import Home


def _loaded_by(home: Home, *args: str) -> tuple[int, set[str]]:
    """The exit code of a real vaultctl call, and the top-level modules it loaded."""
    code = (
        "import sys; from vaultctl.main import main; sys.argv = ['vaultctl', *sys.argv[1:]]\n"
        "try:\n    main()\n    rc = 0\nexcept SystemExit as exc:\n    rc = exc.code or 0\n"
        "print(rc, ' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, env=home.env, timeout=60)
    rc, _, modules = proc.stderr.strip().splitlines()[-1].partition(" ")
    return int(rc), set(modules.split())


def test_a_search_loads_no_validation_library(home: Home, raw: RawClient) -> None:
    """typer 0.29 coerces every parameter through pydantic, which cost each call about 130 ms
    (pydantic's import); pyproject caps typer below it. A typer that brings it back fails here."""
    vault = copy_sample_vault(home.root / "vault")
    raw.call("vault.add", {"id": "v", "path": str(vault)})
    rc, modules = _loaded_by(home, "search", "alpha")
    assert rc in (0, 1)  # found, or nothing found: either way the search ran
    assert "typer" in modules and "msgspec" in modules
    assert not modules & {"pydantic", "pydantic_core"}, sorted(modules)
