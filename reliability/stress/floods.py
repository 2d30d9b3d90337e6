"""Floods at the daemon's perimeter: connections past the descriptor limit, the cap, unread pipelines.

    .venv/bin/python -m reliability.stress.floods --fd-hard 1024 --connections 3000 --pipelines 12 --depth 48
    .venv/bin/python -m reliability.stress.floods --phases pipelines --pipelines 100 --depth 48

``--phases`` picks among three (all by default):

fd: the daemon starts with a soft descriptor limit below its hard one (it must raise the soft
one), then ``--connections`` idle clients connect, more than it has descriptors for. It must stay
up and serve a fresh client once the flood closes.

cap: a second daemon with ``max_connections`` ``--cap``: as many idle clients fill it, as many more
must each get one LIMIT line and be closed, then the first ones must be closed by the hello
timeout (``--hello-timeout``), and a fresh client served.

pipelines: ``--pipelines`` clients each send ``--depth`` reads of a note whose reply is about
390 KB and never read a byte. The daemon's RSS (``/proc/<pid>/status`` VmRSS, sampled) must stay
within the reply budget plus a margin whatever their number, a normal client must keep getting
answers, and every non-reader must be dropped by the send timeout; the report says when.

The fast slice is tests/reliability/test_floods.py; figures are in docs/reliability.md, "Floods".
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import resource
import select
import socket
import statistics
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliability.stress.harness import rss_kib
from tests.support.harness import Daemon, Home, RawClient, wait_for_socket
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Callable

BIG_NOTE = "big.md"
BIG_BODY_CHARS = 200_000  #: of U+0001, each six bytes in JSON: a 64 KiB read is a ~390 KB reply


def write_limits(home: Home, **limits: Any) -> None:
    """Put ``"daemon": {...}`` limits in the home's config.json before the daemon starts."""
    home.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = home.home / "config.json"
    config = json.loads(path.read_text()) if path.exists() else {"version": 1}
    config["daemon"] = limits
    path.write_text(json.dumps(config))
    path.chmod(0o600)


class LimitedDaemon(Daemon):
    """A vaultd started with RLIMIT_NOFILE set to (soft, hard) before it runs."""

    def __init__(self, home: Home, soft: int, hard: int) -> None:
        self.home = home
        self.log = open(home.root / "daemon.out", "ab")  # closed in stop()

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vaultd.main"],
            env=home.env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            preexec_fn=limit,
        )
        wait_for_socket(home.socket, self.proc)


def fd_limits(pid: int) -> tuple[int, int]:
    """The process's (soft, hard) open-files limit, from /proc/<pid>/limits."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise LookupError("no open-files line")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def flood(home: Home, n: int, patience: float = 1.0) -> list[socket.socket]:
    """Open up to ``n`` idle connections (no hello); stops once the backlog stays full for ``patience``."""
    held: list[socket.socket] = []
    for _ in range(n):
        c = connect(home, patience)
        if c is None:
            break
        held.append(c.sock)
    return held


def close_all(socks: list[socket.socket]) -> None:
    for s in socks:
        s.close()
    socks.clear()


def connect(home: Home, timeout: float) -> RawClient | None:
    """A client connected within ``timeout``, retrying while the listen backlog is full (EAGAIN)."""

    def connected() -> socket.socket | None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(str(home.socket))
        except (BlockingIOError, ConnectionRefusedError, FileNotFoundError):
            s.close()
            return None
        except OSError:
            s.close()
            raise
        return s

    try:
        s = wait_until(connected, timeout, f"a connection to {home.socket}", poll=0.05)
    except OSError:  # any other refusal, and the wait's own TimeoutError (an OSError too)
        return None
    assert s is not None  # wait_until returns only what the predicate returned truthy
    c = RawClient.__new__(RawClient)
    c.sock, c.buf, c._id = s, b"", 0
    return c


def served(home: Home, timeout: float = 30.0) -> bool:
    """A fresh client can connect, say hello and get daemon.status within ``timeout``."""
    c = connect(home, timeout)
    if c is None:
        return False
    try:
        c.hello()
        return "result" in c.request("daemon.status", {})
    except (OSError, ValueError):
        return False
    finally:
        c.close()


def closed_by_peer(s: socket.socket, timeout: float) -> bool:
    """True when the daemon closes ``s`` within ``timeout``, seen without reading a byte (POLLHUP),
    so a client that never reads stays one while it waits."""
    poller = select.poll()
    poller.register(s, select.POLLHUP | select.POLLRDHUP | select.POLLERR)
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        for _fd, events in poller.poll(max(1, int(left * 1000))):
            if events & (select.POLLHUP | select.POLLRDHUP | select.POLLERR):
                return True
        time.sleep(0.01)  # readable data alone wakes poll: wait for the hang-up itself
    return False


def readable_bytes(s: socket.socket) -> int:
    """Bytes waiting in ``s``'s receive queue, looked at without reading them."""
    return int.from_bytes(fcntl.ioctl(s.fileno(), termios.FIONREAD, bytes(4)), sys.byteorder, signed=True)


def log_lines(home: Home, needle: str) -> int:
    log = home.home / "logs" / "vaultd.log"
    return sum(needle in ln for ln in log.read_text(errors="replace").splitlines()) if log.exists() else 0


# -- unread pipelines ---------------------------------------------------------------------------------


def big_vault(home: Home, name: str = "big") -> Path:
    vault = home.root / name
    vault.mkdir()
    (vault / BIG_NOTE).write_text("# Big\n\n" + "\x01" * BIG_BODY_CHARS + "\n")
    (vault / "small.md").write_text("# Small\n\nsmallword\n")
    return vault


class RssSampler:
    """Samples the daemon's VmRSS in a thread; ``peak`` is the largest value seen, in KiB."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        self.pid, self.every = pid, every
        self.peak = self.first = rss_kib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.peak = max(self.peak, rss_kib(self.pid))
            except OSError:
                return

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(5)
        return self.peak


def pipeline_unread(home: Home, vault_id: str, depth: int) -> socket.socket:
    """A client that says hello, then sends ``depth`` big reads and never reads a reply."""
    c = RawClient(home.socket, timeout=30)
    RawClient.open_clients.remove(c)
    c.hello()
    frames = b"".join(
        json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "note.read", "params": {"vault": vault_id, "target": BIG_NOTE, "max_bytes": 65536}}
        ).encode()
        + b"\n"
        for i in range(depth)
    )
    c.send_bytes(frames)
    return c.sock


def hang_up_times(socks: list[socket.socket], timeout: float) -> list[float | None]:
    """Seconds from now until the daemon closed each socket (None: still open after ``timeout``),
    seen without reading a byte, as :func:`closed_by_peer` does, for all of them at once."""
    start = time.monotonic()
    times: list[float | None] = [None] * len(socks)
    poller = select.poll()
    index = {}
    for i, s in enumerate(socks):
        poller.register(s, select.POLLHUP | select.POLLRDHUP | select.POLLERR)
        index[s.fileno()] = i
    while index and (left := start + timeout - time.monotonic()) > 0:
        hung = [fd for fd, events in poller.poll(max(1, int(left * 1000))) if events & (select.POLLHUP | select.POLLRDHUP | select.POLLERR)]
        for fd in hung:
            times[index.pop(fd)] = time.monotonic() - start
            poller.unregister(fd)
        if not hung:
            time.sleep(0.01)  # readable data alone wakes poll: wait for the hang-up itself
    return times


def unread_pipelines(
    home: Home,
    pid: int,
    vault_id: str,
    clients: int,
    depth: int,
    send_timeout: float,
    during: Callable[[], bool],
    patience: float | None = None,
) -> dict[str, Any]:
    """Run the non-readers; ``during`` is a normal client's check, called while they hold replies
    (for half the send timeout) and once more while the last of them are being dropped."""
    sampler = RssSampler(pid)
    socks: list[socket.socket] = []
    sent = time.monotonic()  #: drop times count from the first non-reader's requests
    try:
        socks.extend(pipeline_unread(home, vault_id, depth) for _ in range(clients))
        connected = time.monotonic() - sent
        normal_ok = 0
        deadline = time.monotonic() + send_timeout / 2
        checks = 0
        while time.monotonic() < deadline or checks == 0:
            checks += 1
            normal_ok += during()
            time.sleep(0.05)  # the pace of the normal client's checks over the whole window
        waited = time.monotonic() - sent
        times = hang_up_times(socks, send_timeout * 4 + 10 if patience is None else patience)
    finally:
        peak = sampler.stop()
        close_all(socks)  # also when a check raised: a leaked socket fails a later test's warnings
    time.sleep(0.5)  # a quiet moment to see the closes and free their buffers before RSS after is read
    seen = sorted(waited + t for t in times if t is not None)
    return {
        "clients": clients,
        "depth": depth,
        "rss_before_kib": sampler.first,
        "rss_peak_kib": peak,
        "rss_after_kib": rss_kib(pid),
        "connect_s": round(connected, 2),
        "normal_checks": checks,
        "normal_ok": normal_ok,
        "dropped": len(seen),
        "drop_s_median": round(statistics.median(seen), 2) if seen else None,
        "drop_s_max": round(seen[-1], 2) if seen else None,
    }


# -- the long run -------------------------------------------------------------------------------------


def over_cap(home: Home, cap: int, extra: int, hello_timeout: float) -> dict[str, Any]:
    """``cap`` idle connections fill the cap; ``extra`` more must each get one LIMIT line and be
    closed; then the idle ones must be closed by the hello timeout and a fresh client served."""
    held = flood(home, cap)
    # Time for the daemon to accept the held ones before the extra ones come; no client can ask
    # how many it holds, since at the cap the asking connection is itself refused.
    time.sleep(0.5)
    refused = closed = 0
    for _ in range(extra):
        c = connect(home, 5.0)
        if c is None:
            continue
        try:
            reply = c.recv_message()
            refused += reply.get("error", {}).get("data", {}).get("code") == "LIMIT"
            closed += closed_by_peer(c.sock, 10)
        except (OSError, ValueError):
            pass
        finally:
            c.close()
    count = len(held)
    try:
        times = hang_up_times(held, hello_timeout * 3 + 10)
    finally:
        close_all(held)
    seen = sorted(t for t in times if t is not None)
    return {
        "held": count,
        "extra": extra,
        "refused_with_limit": refused,
        "refused_closed": closed,
        "hello_timeout_closes": len(seen),
        "hello_close_s_median": round(statistics.median(seen), 2) if seen else None,
        "served_after": served(home),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phases", default="fd,cap,pipelines", help="which floods to run, comma-separated")
    ap.add_argument("--fd-hard", type=int, default=1024, help="the daemon's hard RLIMIT_NOFILE (soft starts at half)")
    ap.add_argument("--connections", type=int, default=3000, help="idle connections in the flood")
    ap.add_argument("--cap", type=int, default=200, help="max_connections of the cap phase's daemon")
    ap.add_argument("--hello-timeout", type=float, default=2.0, help="hello_timeout_s of the cap phase's daemon")
    ap.add_argument("--pipelines", type=int, default=64, help="clients that pipeline reads and never read")
    ap.add_argument("--depth", type=int, default=64, help="requests each of them pipelines")
    ap.add_argument("--send-timeout", type=float, default=5.0, help="send_timeout_s of the daemon")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    phases = set(args.phases.split(","))
    hard_self = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard_self, hard_self))  # the flood's own sockets
    report: dict[str, Any] = {"rounds": []}
    failures: list[str] = []
    home = Home.create()
    write_limits(
        home,
        max_connections=args.fd_hard * 2,
        hello_timeout_s=600,
        send_timeout_s=args.send_timeout,
        reply_budget_bytes=16 * 1024 * 1024,
        connection_reply_bytes=2 * 1024 * 1024,
    )
    daemon = LimitedDaemon(home, args.fd_hard // 2, args.fd_hard)
    pid = daemon.proc.pid
    try:
        report["fd_limits"] = fd_limits(pid)
        c = RawClient(home.socket, timeout=60)
        c.hello()
        c.call("vault.add", {"id": "big", "path": str(big_vault(home))})
        for k in range(args.rounds):
            result: dict[str, Any] = {"round": k}
            if "fd" in phases:
                socks = flood(home, args.connections)
                time.sleep(1.0)  # time to accept what the backlog still holds before its fds are counted
                held = {"connected": len(socks), "daemon_fds": open_fds(pid), "alive": daemon.proc.poll() is None}
                close_all(socks)
                held["served_after"] = served(home)
                result["flood"] = held
                if not (held["alive"] and held["served_after"]):
                    failures.append(f"round {k}: flood {held}")
            if "pipelines" in phases:
                piped = unread_pipelines(
                    home,
                    pid,
                    "big",
                    args.pipelines,
                    args.depth,
                    args.send_timeout,
                    lambda: "result" in c.request("note.read", {"vault": "big", "target": "small.md"}),
                )
                result["pipelines"] = piped
                if piped["dropped"] != args.pipelines or piped["normal_ok"] != piped["normal_checks"]:
                    failures.append(f"round {k}: pipelines {piped}")
            report["rounds"].append(result)
        report["backoff_bursts"] = log_lines(home, "cannot accept connections for now")
        report["dropped_log_lines"] = log_lines(home, "dropped a client that read none of a reply")
        report["daemon_alive"] = daemon.proc.poll() is None
        c.close()
    finally:
        report["daemon_exit"] = daemon.stop()
        report["daemon_log_error_lines"] = log_lines(home, '"level": "error"')
        home.cleanup()
    if "cap" in phases:
        capped = Home.create()
        write_limits(capped, max_connections=args.cap, hello_timeout_s=args.hello_timeout)
        cap_daemon = Daemon(capped)
        try:
            report["cap"] = over_cap(capped, args.cap, args.cap, args.hello_timeout)
            report["cap"]["daemon_alive"] = cap_daemon.proc.poll() is None
        finally:
            report["cap"]["daemon_exit"] = cap_daemon.stop()
            report["cap"]["hello_log_lines"] = log_lines(capped, "did not say hello in time")
            report["cap"]["daemon_log_error_lines"] = log_lines(capped, '"level": "error"')
            capped.cleanup()
        cap = report["cap"]
        if not (
            cap["refused_with_limit"] == cap["extra"]
            and cap["hello_timeout_closes"] == cap["held"]
            and cap["served_after"]
            and cap["daemon_log_error_lines"] == 0
        ):
            failures.append(f"cap: {cap}")
    report["failures"] = failures
    print(json.dumps(report, indent=1))
    return 0 if not failures and report["daemon_log_error_lines"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
