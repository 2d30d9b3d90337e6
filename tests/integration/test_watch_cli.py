"""The CLI as a consumer of events: ``vaultctl watch`` prints them live; ``vault add`` and ``vault
rebuild`` draw a progress bar on a terminal (a real pseudo-terminal) and none without one; ``status``
shows a build's progress. A build is held after its first chunk through the fault seam
(``pause=build-chunk``), so what is on screen mid-build is known."""

from __future__ import annotations

import json
import os
import pty
import queue
import signal
import subprocess
import threading
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.events import Subscriber
from tests.support.harness import VAULTCTL, Daemon, Home
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NOTES = 600  #: three build chunks of 256, 256 and 88


def _vault(root: Path, notes: int = NOTES) -> Path:
    for n in range(notes):
        path = root / f"f{n % 6}" / f"Note {n:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {n}\n\nBody {n}.\n")
    return root


def _end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


class Lines:
    """A child's output, read line by line in a thread, so a test can wait for a line."""

    def __init__(self, stream: Any) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line)

    def until(self, predicate: Any, timeout: float, what: str) -> list[str]:
        def ready() -> bool:
            while not self.lines.empty():
                self.seen.append(self.lines.get())
            return bool(predicate(self.seen))

        wait_until(ready, timeout, what)
        return self.seen


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    root = _vault(home.root / "vault", 3)
    assert cli("vault", "add", "v", str(root)).code == 0
    return root


def _interruptible() -> None:
    """Ctrl-C at its default in the child, as a shell starts a command in the foreground. A suite
    run in the background (``nohup``, ``&`` in a script, an agent's runner) hands its children
    SIGINT ignored, and Python then keeps it ignored: the watch would never see the interrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def watching(home: Home, vault: Path) -> Iterator[tuple[subprocess.Popen[str], Lines]]:
    proc = subprocess.Popen(
        [*VAULTCTL, "watch", "--vault", "v", "--json"],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,  # only a signal disposition, set before exec
    )
    out = Lines(proc.stdout)
    # It prints nothing until something happens: touch probes until one is reported.
    probe = 0

    def reported() -> bool:
        nonlocal probe
        probe += 1
        (vault / f"probe {probe}.md").write_text(f"# probe {probe}\n")
        try:
            out.until(lambda seen: seen, 0.3, "a probe")
        except AssertionError:
            return False
        return True

    wait_until(reported, 20, "vaultctl watch to report a probe")
    yield proc, out
    _end(proc)


def test_watch_prints_each_event_as_a_json_line_live(watching: tuple[subprocess.Popen[str], Lines], vault: Path, cli: Any) -> None:
    proc, out = watching
    created = cli("new", "inbox/watched", "--title", "Watched", "--json")
    assert created.code == 0, created.err
    op_id = created.json()["op_id"]
    seen = out.until(lambda s: any(f'"op_id":"{op_id}"' in line for line in s), 10, "operation.applied")
    events = [json.loads(line) for line in seen]
    kinds = [(e["kind"], e.get("path")) for e in events]
    assert ("note.created", "inbox/watched.md") in kinds
    assert all(e["vault"] == "v" and e["clock"] for e in events)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 130


def test_watch_prints_a_line_per_event_for_people(home: Home, vault: Path) -> None:
    proc = subprocess.Popen([*VAULTCTL, "watch", "--vault", "v"], env=home.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = Lines(proc.stdout)
    try:
        n = 0

        def reported() -> bool:
            nonlocal n
            n += 1
            (vault / f"seen {n}.md").write_text("# seen\n")
            try:
                out.until(lambda s: s, 0.3, "a line")
            except AssertionError:
                return False
            return True

        wait_until(reported, 20, "a line")
        os.rename(vault / f"seen {n}.md", vault / "renamed.md")
        seen = out.until(lambda s: any("note.renamed" in line for line in s), 10, "the rename")
        line = next(line for line in seen if "note.renamed" in line)
        assert f"  v  note.renamed  seen {n}.md -> renamed.md  " in line
    finally:
        _end(proc)


def test_watch_says_when_the_daemon_goes_away(watching: tuple[subprocess.Popen[str], Lines], cli: Any) -> None:
    proc, _ = watching
    assert cli("daemon", "stop").code == 0
    assert proc.wait(15) == 69
    assert proc.stderr is not None and "closed the connection" in proc.stderr.read()


class Terminal:
    """A vaultctl command whose stderr and stdout are a pseudo-terminal."""

    def __init__(self, home: Home, *args: str) -> None:
        master, slave = pty.openpty()
        env = {**home.env, "TERM": "xterm", "COLUMNS": "100"}
        self.proc = subprocess.Popen([*VAULTCTL, *args], env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        self.master = master
        self.screen = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.screen += chunk

    def text(self) -> str:
        with self._lock:
            return self.screen.decode(errors="replace")

    def wait_for(self, needle: str, timeout: float) -> None:
        wait_until(lambda: needle in self.text(), timeout, f"{needle!r} on the terminal")

    def finish(self, timeout: float = 30) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(10)  # reads what is left, to the end the closed terminal gives
        os.close(self.master)
        return code


def _paused_daemon(home: Home, hit: int) -> tuple[Daemon, Path]:
    gate = home.root / "build.gate"
    home.env["VAULTD_FAULTS"] = f"pause=build-chunk@{hit}:{gate}"
    try:
        return Daemon(home), gate
    finally:
        del home.env["VAULTD_FAULTS"]


def _status(home: Home) -> dict[str, Any]:
    out = subprocess.run([*VAULTCTL, "status", "--json"], env=home.env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    vaults: list[dict[str, Any]] = json.loads(out.stdout)["vaults"]
    return next(v for v in vaults if v["id"] == "big")


def test_vault_add_draws_a_progress_bar_on_a_terminal_and_status_shows_the_build(home: Home) -> None:
    daemon, gate = _paused_daemon(home, 1)
    try:
        root = _vault(home.root / "big")
        term = Terminal(home, "vault", "add", "big", str(root))
        wait_until(gate.exists, 30, "the build to reach its first chunk")
        term.wait_for(f"256/{NOTES} notes", 10)
        assert "indexing big [" in term.text() and "#" in term.text(), term.text()
        health = _status(home)
        assert health["state"] == "indexing"
        assert health["progress"]["parsed"] == 256 and health["progress"]["total"] == NOTES and not health["progress"]["rebuild"]
        table = subprocess.run([*VAULTCTL, "status"], env=home.env, capture_output=True, text=True, timeout=30).stdout
        assert f"indexing 256/{NOTES} 42%" in table, table
        gate.unlink()
        assert term.finish() == 0
        screen = term.text()
        assert "\x1b[K" in screen, "the bar is erased before the result is printed"
        assert "vault big" in screen and f"{NOTES}" in screen
        assert _status(home)["progress"] is None
    finally:
        daemon.stop()


def test_without_a_terminal_there_is_no_bar(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home.root / "big")
    added = cli("vault", "add", "big", str(root))
    assert added.code == 0, added.err
    assert added.err == "" and "\r" not in added.out


def test_vault_rebuild_draws_its_bar_and_subscribers_see_the_rebuild(home: Home) -> None:
    daemon, gate = _paused_daemon(home, 4)  # the add's build hits the point 3 times
    try:
        root = _vault(home.root / "big")
        added = subprocess.run([*VAULTCTL, "vault", "add", "big", str(root)], env=home.env, capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        sub = Subscriber(home.socket)
        sub.subscribe(vaults=["big"], kinds=["index.progress", "index.ready"])
        term = Terminal(home, "vault", "rebuild", "big")
        wait_until(gate.exists, 30, "the rebuild to reach its first chunk")
        term.wait_for(f"256/{NOTES} notes", 10)
        health = _status(home)
        assert health["state"] == "ready" and health["progress"]["rebuild"] is True
        search = subprocess.run([*VAULTCTL, "search", "Body", "--vault", "big", "--json"], env=home.env, capture_output=True, timeout=30)
        assert search.returncode == 0, "reads are answered during a rebuild"
        gate.unlink()
        assert term.finish() == 0
        assert f"rebuilt vault big: {NOTES} notes, {NOTES} parsed, 0 changed" in term.text()
        sub.read_until(lambda ev: ev and ev[-1]["kind"] == "index.ready", 10, "index.ready")
        progress = [(e["parsed"], e["total"], e["rebuild"]) for e in sub.events[:-1]]
        assert (256, NOTES, True) in progress and progress[-1] == (NOTES, NOTES, True)
        assert sub.events[-1]["rebuild"] is True and sub.events[-1]["notes"] == NOTES
        sub.close()
    finally:
        daemon.stop()
