"""What a vaultctl call loads is part of its speed: a command line is about 200 ms of imports
before the daemon is asked anything (docs/performance.md, "vaultctl start-up")."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from tests.support.harness import REPO, RawClient, copy_sample_vault

if TYPE_CHECKING:
    from tests.support.harness import Home


def _loaded_by(home: Home, *args: str, whole_names: bool = False) -> tuple[int, set[str]]:
    """The exit code of a real vaultctl call, and the top-level modules it loaded (every module,
    by its whole name, with ``whole_names``)."""
    names = "sys.modules" if whole_names else "{m.split('.')[0] for m in sys.modules}"
    code = (
        "import sys; from vaultctl.main import main; sys.argv = ['vaultctl', *sys.argv[1:]]\n"
        "try:\n    main()\n    rc = 0\nexcept SystemExit as exc:\n    rc = exc.code or 0\n"
        f"print(rc, ' '.join(sorted({names})), file=sys.stderr)"
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


#: Loaded only by the commands that need them: every method's spec (the MCP shim, ``vaultctl
#: schema``, a call that went wrong), the progress bar and its subscription (``vault add``,
#: ``vault rebuild`` on a terminal), the checks made without a daemon (``doctor``), the wait for a
#: stopped daemon's exit (``daemon stop``).
NOT_FOR_EVERY_COMMAND = frozenset(
    {"protocol.table", "vaultctl.progress", "protocol.methods.subscriptions", "vaultctl.local_checks", "vaultctl.daemon_exit"}
)


def test_status_search_and_a_write_load_neither_the_whole_method_table_nor_other_commands_helpers(home: Home, raw: RawClient) -> None:
    """A command's option help reads its own params Structs; the table of every method would load
    every method module (about a sixth of a vaultctl start's CPU), and the helpers listed above
    serve other commands."""
    vault = copy_sample_vault(home.root / "vault")
    raw.call("vault.add", {"id": "v", "path": str(vault)})
    for args in (("status",), ("search", "alpha"), ("new", "Fresh note", "--vault", "v")):
        rc, modules = _loaded_by(home, *args, whole_names=True)
        assert rc in (0, 1), args
        assert "vaultctl.cli" in modules and "protocol.schema" in modules, args  # the command ran, its help was built
        assert not modules & NOT_FOR_EVERY_COMMAND, (args, sorted(modules & NOT_FOR_EVERY_COMMAND))
