"""A daemon loads a method's handler, and what it needs, at the method's first call: a daemon
serving no vault holds the server alone, and one that only indexes and reads a vault never loads
the write path nor the YAML libraries (docs/performance.md, "The daemon's own baseline" and
"What a vault's machinery costs").

Observed from outside, on a real ``python -m vaultd.main`` (not a fork of a process that has
imported everything): the compiled libraries the process has mapped (``/proc/PID/maps``) show
which of the heavy extensions it has loaded, and the interpreter's own import log
(``PYTHONPROFILEIMPORTTIME``, on the daemon's standard error) every module it imported.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import Daemon, RawClient, copy_sample_vault, registered_vault
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from tests.support.harness import Home

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


#: What a vault that is only indexed and read never needs, by module name (a package and all below
#: it): the YAML libraries (every header here is flat, read line by line), fuzzy matching (only a
#: suggestion or a search that misses uses it), the write path (operations, the gate, tidy's rules,
#: the policy's secret, PII and schema rules) and git's commits (the vault is in no repository).
NOT_FOR_READS = (
    "yaml",
    "ruamel",
    "rapidfuzz",
    "vaultd.vault.frontmatter_yaml",
    "vaultd.vault.frontmatter_emit",
    "vaultd.ops",
    "vaultd.gate",
    "vaultd.tidy",
    "vaultd.git.checkpoint",
    "vaultd.git.integration",
    "vaultd.git.snapshot",
    "vaultd.policy.secrets",
    "vaultd.policy.pii",
    "vaultd.policy.schema",
)


def _imported(log: str) -> set[str]:
    """The modules named in an import log written with ``PYTHONPROFILEIMPORTTIME``."""
    return {line.rsplit("|", 1)[1].strip() for line in log.splitlines() if line.startswith("import time:") and "|" in line}


def _listed(client: RawClient, count: int) -> bool:
    """Whether ``note.list`` answers with ``count`` notes (a start still indexing answers UNAVAILABLE)."""
    reply = client.request("note.list", {"vault": "v", "limit": 500})
    return "result" in reply and len(reply["result"]["notes"]) == count


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


def test_a_warm_restart_of_a_vault_only_indexed_and_read_loads_no_yaml_nor_write_path(home: Home) -> None:
    """Flat headers (a title, a date, a list of tags), links and a dead link, indexed once and then
    read after a restart from the cache: the daemon loads the index, not what a write, a header
    that is not flat or a suggestion would need."""
    notes = {
        f"n{i}.md": f"---\ntitle: Note {i}\ncreated: 2024-01-0{i % 9 + 1}\ntags: [a, b{i}]\n---\n# Note {i}\n\nSee [[n{(i + 1) % 20}]] and [[nowhere]].\n"
        for i in range(20)
    }
    home.env["PYTHONPROFILEIMPORTTIME"] = "1"
    log = home.root / "daemon.out"
    first = Daemon(home)
    try:
        registered_vault(home, notes)  # vault.add: the cold build
    finally:
        first.stop()
    cold = log.read_text(errors="replace")
    assert "frontmatter_flat" in cold, "the import log is written (the cold build read the headers)"

    second = Daemon(home)
    try:
        client = RawClient.session(home.socket)
        wait_until(lambda: _listed(client, 20), 120, "the warm restart")
        read = client.call("note.read", {"vault": "v", "target": "n3.md"})
        assert read["frontmatter"]["tags"] == ["a", "b3"]
        client.close()
        warm = _imported(log.read_text(errors="replace")[len(cold) :])
        mapped = _mapped(second.pid)
    finally:
        second.stop()
    assert "vaultd.vault.index" in warm, "the restart's own imports are read"
    loaded = sorted(name for name in warm if any(name == p or name.startswith(p + ".") for p in NOT_FOR_READS))
    assert loaded == [], "loaded by a warm restart that only reads"
    assert not mapped & {"yaml", "rapidfuzz"}, sorted(mapped)
