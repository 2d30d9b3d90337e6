"""Faults through the real system, not through vaultd's own fault seam.

- **ENOSPC**: the vault lives on a small tmpfs (``mount -t tmpfs -o size=256k``); the rest of the
  filesystem is filled, leaving 0, 4, 8, ... KiB free, so the refusal lands at every step of the
  write path (journal originals, manifest, target temp file, commit marker, log line). Every
  operation must be refused with a clear error and leave the vault as it was, or be applied whole
  and acknowledged; the daemon keeps serving; once space is freed writes work again.
- **EIO**: ``strace -f -p PID -e inject=fsync:error=EIO:when=N`` attached to the running daemon
  makes its Nth fsync fail (per thread), for N = 1, 2, ...; same checks.

    .venv/bin/python -m reliability.faults [--enospc] [--eio] [--eio-trials 12]

Needs root (mount) and strace; each part is skipped with a message where it cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

from reliability.checks import Tally, check_index, check_log, compare_state, disk_state, index_view, leftovers
from reliability.session import Client, Proc, Refused, connect_ready, register
from tests.support.harness import Home, copy_sample_vault
from tests.support.wait import wait_until

PATCHED = "projects/alpha/Alpha Plan.md"
PHRASES = ("ships the search", "ships the find")


def _op(i: int, c: Client) -> tuple[str, dict[str, Any]]:
    """Alternating create, patch and append, so every kind of write meets the fault."""
    if i % 3 == 0:
        return "note.create", {"path": f"full/n{i}", "body": f"# N{i}\n\n" + "text " * 200}
    if i % 3 == 1:
        body = c.call("note.read", {"target": PATCHED, "max_bytes": 65536})["body"]
        old, new = PHRASES if PHRASES[0] in body else PHRASES[::-1]
        return "note.patch", {"target": PATCHED, "old": old, "new": new}
    return "note.append", {"target": "people/Ada Lovelace.md", "section": "Full", "markdown": f"- entry {i} " * 20}


def _apply(tally: Tally, c: Client, model: dict[str, str], method: str, params: dict[str, Any], words: tuple[str, ...]) -> bool:
    """One operation; True when it was refused. A refusal must name the fault."""
    tally.add("ops")
    try:
        receipt = c.call(method, params)
    except Refused as exc:
        tally.add("refused")
        message = str(exc.error.get("message", ""))
        if not any(w in message for w in words):
            tally.violation("unclear-error", f"{method}: {message!r} names no {words}")
        return True
    tally.add("applied")
    for ch in receipt["changes"]:
        if ch["after_sha"] is None:
            model.pop(ch["path"], None)
        else:
            model[ch["path"]] = ch["after_sha"]
    return False


def _still_serving(tally: Tally, c: Client, where: str) -> None:
    try:
        c.call("note.read", {"target": "projects/alpha/Alpha Plan.md"})
        c.call("note.search", {"query": "Alpha"})
    except Exception as exc:  # noqa: BLE001 - any failure here is the finding
        tally.violation("not-serving", f"{where}: {exc}")


_seen: set[str] = set()


def _verify(tally: Tally, vault: Path, model: dict[str, str], log: bytes, where: str) -> bytes:
    compare_state(tally, model, disk_state(vault), where)
    for left in leftovers(vault):
        if left not in _seen:  # each one counts once, not at every later check
            _seen.add(left)
            tally.violation("leftover", f"{where}: {left}")
    return check_log(tally, vault, log, where)


def _fill(path: Path, leave: int) -> None:
    """Fill the filesystem holding ``path``, then free ``leave`` bytes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave:
        size = path.stat().st_size
        os.truncate(path, max(0, size - leave))


LEVELS = (0, 0, 2048, 4096, 6144, 8192, 12288, 16384, 24576, 32768)  #: bytes left free, in turn


def enospc(tally: Tally, levels: tuple[int, ...] = LEVELS) -> str | None:
    """Returns a reason when it cannot run here."""
    if os.geteuid() != 0:
        return "ENOSPC needs root to mount a small tmpfs"
    home = Home.create()
    mnt = home.root / "small"
    mnt.mkdir()
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(mnt)], capture_output=True, text=True)
        if proc.returncode:
            return f"mount -t tmpfs failed: {proc.stderr.strip()}"
        try:
            _enospc_on(tally, home, mnt, levels)
        finally:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        return None
    finally:
        home.cleanup()


def _enospc_on(tally: Tally, home: Home, mnt: Path, levels: tuple[int, ...]) -> None:
    vault = copy_sample_vault(mnt / "vault")
    register(home, vault)
    p = Proc(home)
    p.listening()
    try:
        c = connect_ready(home)
        model = disk_state(vault)
        log = (vault / "log.md").read_bytes() if (vault / "log.md").exists() else b""
        filler = mnt / "filler"
        i = 0
        for leave in levels:
            _fill(filler, leave)
            tally.add("fills")
            for _ in range(3):
                i += 1
                method, params = _op(i, c)
                _apply(tally, c, model, method, params, ("No space left", "ENOSPC", "space"))
                _still_serving(tally, c, f"leave {leave}")
                log = _verify(tally, vault, model, log, f"leave {leave}, op {i}")
            filler.unlink()
        # space is back: writes work again
        for _ in range(3):
            i += 1
            method, params = _op(i, c)
            if _apply(tally, c, model, method, params, ()):
                tally.violation("no-recovery", f"{method} still refused after space was freed")
        log = _verify(tally, vault, model, log, "after freeing")
        c.close()
        p.stop()
        p = Proc(home)  # the index after a restart equals the disk
        p.listening()
        c = connect_ready(home)
        check_index(tally, index_view(c), disk_state(vault), "enospc restart")
        c.close()
    finally:
        p.stop()


def _strace_settled(trace: subprocess.Popen[bytes], daemon: subprocess.Popen[bytes]) -> bool:
    """strace is attached to every thread of the daemon (each one's TracerPid in /proc), or one of
    the two has exited: strace when it could not attach, which the caller reports."""
    if trace.poll() is not None or daemon.poll() is not None:
        return True
    marker = f"\nTracerPid:\t{trace.pid}\n"
    try:
        return all(marker in (task / "status").read_text() for task in Path(f"/proc/{daemon.pid}/task").iterdir())
    except FileNotFoundError:  # a thread ended while we looked: look again
        return False


def eio(tally: Tally, trials: int) -> str | None:
    if shutil.which("strace") is None:
        return "strace is not installed (apt-get install strace)"
    home = Home.create()
    try:
        vault = copy_sample_vault(home.root / "vault")
        register(home, vault)
        p = Proc(home)
        p.listening()
        try:
            c = connect_ready(home)
            model = disk_state(vault)
            log = (vault / "log.md").read_bytes() if (vault / "log.md").exists() else b""
            for n in range(1, trials + 1):
                trace = subprocess.Popen(
                    [
                        "strace",
                        "-qq",
                        "-f",
                        "-p",
                        str(p.proc.pid),
                        "-e",
                        "trace=fsync,fdatasync",
                        "-e",
                        f"inject=fsync,fdatasync:error=EIO:when={n}",
                        "-o",
                        "/dev/null",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                wait_until(partial(_strace_settled, trace, p.proc), 10, f"strace to attach to every thread of vaultd {p.proc.pid}")
                if trace.poll() is not None:
                    _, err = trace.communicate()
                    return f"strace could not attach: {err.decode().strip()}"
                method, params = _op(n, c)
                _apply(tally, c, model, method, params, ("Input/output error", "EIO"))
                tally.add("injections")
                trace.send_signal(signal.SIGINT)  # detach
                trace.communicate(timeout=10)
                _still_serving(tally, c, f"fsync #{n}")
                log = _verify(tally, vault, model, log, f"fsync #{n}")
            method, params = _op(trials + 1, c)
            if _apply(tally, c, model, method, params, ()):
                tally.violation("no-recovery", f"{method} refused after strace detached")
            c.close()
            p.stop()
            p = Proc(home)
            p.listening()
            c = connect_ready(home)
            check_index(tally, index_view(c), disk_state(vault), "eio restart")
            _verify(tally, vault, model, log, "eio restart")
            c.close()
        finally:
            p.stop()
        return None
    finally:
        home.cleanup()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reliability.faults", description=__doc__.split("\n\n")[0])
    ap.add_argument("--enospc", action="store_true")
    ap.add_argument("--eio", action="store_true")
    ap.add_argument("--eio-trials", type=int, default=12)
    args = ap.parse_args(argv)
    both = not (args.enospc or args.eio)
    out: dict[str, Any] = {}
    for name, enabled in (("enospc", args.enospc or both), ("eio", args.eio or both)):
        if not enabled:
            continue
        tally = Tally()
        skipped = enospc(tally) if name == "enospc" else eio(tally, args.eio_trials)
        out[name] = {"skipped": skipped} if skipped else tally.report()
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    print()
    return 1 if any(r.get("violations") for r in out.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
