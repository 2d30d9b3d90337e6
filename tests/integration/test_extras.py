"""Without an optional extra, the feature that needs it says which extra to install, and nothing
else changes: the daemon starts, serves search and the rest of the graph, and stays up.

The extras are hidden from every process the test starts (tests/support/absent_extras.py), so
this runs in the ordinary venv; ``tests/packaging/test_extras.py`` does the same with a wheel
installed without them."""

from __future__ import annotations

import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.extras import CONSOLE, EXTRAS, GRAPH
from protocol.methods import console, graph
from protocol.methods.common import Channel
from protocol.methods.console import ConsoleOpenParams
from protocol.methods.graph import CommunitiesParams, HubsParams, NavParams, NeighborsParams, PathParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from tests.support.absent_extras import hide_extras
from tests.support.harness import REPO, Daemon, Home, assert_alive, copy_sample_vault, vaultctl
from vaultctl.client import CallError, Client

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from protocol.extras import Extra


def _start(home: Home, *hidden: Extra) -> Daemon:
    hide_extras(home.env, home.root / "shim", *hidden)
    return Daemon(home)


@pytest.fixture
def bare(home: Home) -> Iterator[Daemon]:
    """A daemon, and every vaultctl of the test, with neither the console nor the graph extra."""
    daemon = _start(home, CONSOLE, GRAPH)
    yield daemon
    daemon.stop()


def _client(home: Home) -> Client:
    """A session as every client has one: typed calls through ``Client.call(spec, params)``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(str(home.socket))
    return Client(sock, Channel.CLI, "test-extras")


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_search_and_reads_work_without_either_extra(home: Home, bare: Daemon) -> None:
    vault = copy_sample_vault(home.root / "notes")
    assert vaultctl(home, "vault", "add", "notes", str(vault)).code == 0
    hits = vaultctl(home, "search", "alpha", "--json")
    assert hits.code == 0 and hits.json()["hits"], hits.err
    shown = vaultctl(home, "show", "Alpha Plan", "--json")
    assert shown.code == 0 and shown.json()["path"], shown.err
    assert vaultctl(home, "--help").code == 0


def test_console_without_its_extra_names_it(home: Home, bare: Daemon) -> None:
    vault = copy_sample_vault(home.root / "notes")
    assert vaultctl(home, "vault", "add", "notes", str(vault)).code == 0
    for args in (("console", "--no-open"), ("console", "--no-open", "--json")):
        refused = vaultctl(home, *args)
        assert refused.code == 69 and not refused.out, refused
        line = _one_line(refused.err)
        assert line.startswith("vaultctl: the web console") and line.endswith("pip install 'vaultd[console]'"), line
        assert "starlette, uvicorn, markdown-it-py" in line, line
    with _client(home) as client, pytest.raises(CallError) as denied:
        client.call(console.CONSOLE_OPEN, ConsoleOpenParams())
    assert denied.value.data.code is ErrorCode.UNAVAILABLE and "pip install 'vaultd[console]'" in denied.value.data.message
    assert not (home.home / "logs" / "console.log").exists()  # refused before anything was started
    assert_alive(home, bare)


def test_graph_methods_without_their_extra_name_it(home: Home, bare: Daemon) -> None:
    vault = copy_sample_vault(home.root / "notes")
    with _client(home) as client:
        client.call(VAULT_ADD, VaultAddParams(id="notes", path=str(vault)))
        calls: list[tuple[str, Callable[[], object]]] = [
            (graph.COMMUNITIES.name, lambda: client.call(graph.COMMUNITIES, CommunitiesParams())),
            (graph.HUBS.name, lambda: client.call(graph.HUBS, HubsParams())),
        ]
        for method, call in calls:
            for _ in range(2):  # and again: nothing was cached or left half done by the refusal
                with pytest.raises(CallError) as denied:
                    call()
                assert denied.value.data.code is ErrorCode.UNAVAILABLE, denied.value.data
                assert denied.value.data.message == (
                    f"{method} needs the graph extra (igraph, leidenalg not installed here): pip install 'vaultd[graph]'"
                )
        # The rest of the graph is pure Python and still answers.
        assert client.call(graph.NEIGHBORS, NeighborsParams(target="Alpha Plan")).neighbors
        assert client.call(graph.NAV, NavParams(target="Alpha Plan")).path.endswith("Alpha Plan.md")
        assert client.call(graph.PATH, PathParams(source="Alpha Plan", target="Alpha Plan")).found
    for command in ("communities", "hubs"):
        refused = vaultctl(home, command)
        assert refused.code == 69, refused
        assert _one_line(refused.err).endswith("pip install 'vaultd[graph]'"), refused.err
    assert_alive(home, bare)


def _extra_rows(doctor: dict[str, object]) -> dict[str, tuple[str, str]]:
    findings = doctor["findings"]
    assert isinstance(findings, list)
    return {f["check"]: (f["level"], f["finding"]) for f in findings if f["check"].startswith("extra:")}


def test_doctor_says_which_extras_are_installed(home: Home) -> None:
    hide_extras(home.env, home.root / "shim", GRAPH)
    # No daemon yet: vaultctl's own checks, as the Python that would start the daemon sees them.
    # Without autostart: a daemon doctor started would outlive the test, unknown to it.
    alone = vaultctl(home, "doctor", "--json", env={"VAULTD_NO_AUTOSTART": "1"})
    assert not home.socket.exists(), "doctor started a daemon the test would not stop"
    daemon = Daemon(home)
    try:
        served = vaultctl(home, "doctor", "--json")
    finally:
        daemon.stop()
    for result in (alone, served):
        rows = _extra_rows(result.json())
        assert set(rows) == {f"extra:{e.name}" for e in EXTRAS}, rows
        assert all(level == "ok" for level, _ in rows.values()), rows  # optional: never a warning
        assert rows["extra:console"][1].startswith("installed: ")
        assert rows["extra:graph"][1].startswith("not installed (igraph, leidenalg missing)")
        assert rows["extra:graph"][1].endswith("pip install 'vaultd[graph]' adds it")
    assert served.code == 0, served.err


def test_the_console_process_itself_names_its_extra(home: Home) -> None:
    """Started by hand (or after the extra went away), it says why in one line, not a traceback."""
    hide_extras(home.env, home.root / "shim", CONSOLE)
    done = subprocess.run(
        [sys.executable, "-m", "vaultctl.console"],
        env=home.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 69 and not done.stdout, done
    assert _one_line(done.stderr).endswith(
        "needs the console extra (starlette, uvicorn, markdown-it-py not installed here): pip install 'vaultd[console]'"
    )


def test_the_hiding_itself_works(home: Home) -> None:
    """The shim hides what it says it hides, and only that: the tests above would pass vacuously otherwise."""
    hide_extras(home.env, home.root / "shim", GRAPH)
    probe = "import importlib.util as u\nfor m in ('igraph', 'leidenalg', 'uvicorn'): print(m, u.find_spec(m) is not None)"
    done = subprocess.run([sys.executable, "-c", probe], env=home.env, cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["igraph", "False", "leidenalg", "False", "uvicorn", "True"], done
    imported = subprocess.run([sys.executable, "-c", "import igraph"], env=home.env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert imported.returncode == 1 and "ModuleNotFoundError" in imported.stderr
