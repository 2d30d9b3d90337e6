"""A daemon loads a method's handler, and what it needs, at the method's first call: a daemon
serving no vault holds the server alone (docs/performance.md, "The daemon's own baseline").

Observed from outside, on a real ``python -m vaultd.main`` (not a fork of a process that has
imported everything): the compiled libraries the process has mapped (``/proc/PID/maps``) show
which of the heavy extensions it has loaded.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import copy_sample_vault

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home, RawClient

pytestmark = [
    pytest.mark.fresh_daemon,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps"),
]

#: Extensions only a vault's work needs: the index cache (apsw), the watcher (watchfiles),
#: fuzzy names (rapidfuzz), YAML frontmatter (yaml's C loader), by the file each maps.
FOR_A_VAULT = {
    "apsw": re.compile(r"/apsw/"),
    "watchfiles": re.compile(r"/watchfiles/"),
    "rapidfuzz": re.compile(r"/rapidfuzz/"),
    "yaml": re.compile(r"/yaml/_yaml"),
}
#: Loaded by no call made here: the meaning model's arrays, the graph's communities; and greenlet,
#: which structlog would load whenever it is installed, never (the daemon runs no greenlets).
NEVER_HERE = {"numpy": re.compile(r"/numpy/"), "igraph": re.compile(r"/igraph/"), "greenlet": re.compile(r"/greenlet/")}


def _mapped(pid: int) -> set[str]:
    """The names of :data:`FOR_A_VAULT` and :data:`NEVER_HERE` whose library ``pid`` has mapped."""
    maps = Path(f"/proc/{pid}/maps").read_text(encoding="utf-8")
    return {name for name, pattern in (FOR_A_VAULT | NEVER_HERE).items() if pattern.search(maps)}


def test_a_daemon_serving_no_vault_loads_no_vault_machinery_until_a_call_needs_it(home: Home, daemon: Daemon, raw: RawClient) -> None:
    status = raw.call("daemon.status")  # hello and a status: the server's own methods
    assert status["vaults"] == []
    assert _mapped(daemon.pid) == set(), "loaded before any vault was asked for"

    vault = copy_sample_vault(home.root / "vault")
    raw.call("vault.add", {"id": "v", "path": str(vault)})
    listed = raw.call("note.list", {"vault": "v", "limit": 500})
    assert listed["notes"], "the sample vault is indexed and listed"
    loaded = _mapped(daemon.pid)
    assert {"apsw", "watchfiles"} <= loaded, "a vault's index and watcher load with the vault"
    assert not loaded & set(NEVER_HERE), sorted(loaded)


def test_a_method_whose_handler_is_not_loaded_yet_answers_as_at_start(home: Home, daemon: Daemon, raw: RawClient) -> None:
    """The first call of a method loads its module and answers; an unknown method is refused as
    before, and a bad params object is refused before its handler is needed."""
    vault = copy_sample_vault(home.root / "vault")
    raw.call("vault.add", {"id": "v", "path": str(vault)})
    raw.call("note.create", {"vault": "v", "path": "fresh.md", "body": "a word\n"})
    assert (vault / "fresh.md").read_text().endswith("a word\n")
    unknown = raw.request("note.nonexistent", {})
    assert unknown["error"]["code"] == -32601
    bad = raw.request("vault.lint", {"vault": "v", "surely_not_a_field": 1})
    assert bad["error"]["code"] == -32602
