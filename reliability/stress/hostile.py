"""Hostile input: fuzzed frames, fuzzed params for every method, and a vault of hostile files.

    .venv/bin/python -m reliability.stress.hostile --frames 5000 --params 20000 --vault-rounds 5
    .venv/bin/python -m reliability.stress.hostile --frames 0 --params 0 --vault-rounds 0 --names-rounds 3


Every reply must be a well-formed JSON-RPC result or structured error (never INTERNAL), every
request answered within the socket timeout, and the daemon alive at the end. The hostile vault
(invalid UTF-8, a 50 MB note, 100k-level nesting, a YAML alias bomb, NUL bytes, symlink loops,
a FIFO and a Unix socket, NFD/NFC and case twins, 255-byte names, a file that turns into a folder
while ``vault.add`` scans) must register, report what it skipped with codes, keep serving reads,
and keep its watcher alive. The fast slice of the same code runs in tests/reliability/test_hostile.py.
The names rounds (hostile file and folder names, see :mod:`reliability.stress.names`) have their
own slice in tests/reliability/test_hostile_names.py.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shutil
import socket
import sys
import threading
import time
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reliability.stress import names
from reliability.stress.fuzz import FUZZED, check_reply, encode, frames, params_for
from reliability.stress.name_vault import NameTally
from tests.support.harness import Daemon, Home, RawClient

if TYPE_CHECKING:
    from pathlib import Path

SOCKET_TIMEOUT = 30.0


class Tally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []

    def known(self, bug: str, what: str) -> None:
        """A failure of a bug already reported (docs/reliability.md), counted apart."""
        self.counts[f"known_bug.{bug}"] += 1
        if len(self.failures) < 20:
            self.failures.append(f"[known: {bug}] {what}")

    def fail(self, what: str) -> None:
        self.counts["failures"] += 1
        if len(self.failures) < 20:
            self.failures.append(what)


def _client(home: Home, hello: bool = True) -> RawClient:
    c = RawClient(home.socket, timeout=SOCKET_TIMEOUT)
    RawClient.open_clients.remove(c)  # owned here, not by the test fixture
    if hello:
        c.hello()
    return c


def _settings(examples: int, seed: int | None) -> settings:
    return settings(
        max_examples=examples, deadline=None, database=None, derandomize=seed is not None, suppress_health_check=list(HealthCheck)
    )


def fuzz_frames(home: Home, examples: int, tally: Tally, seed: int | None = None) -> None:
    """Raw byte frames, then a marker request: every reply until the marker's is well formed."""

    @_settings(examples, seed)
    @given(st.lists(frames, min_size=1, max_size=4), st.booleans())
    def one(batch: list[bytes], hello: bool) -> None:
        c = _client(home, hello)
        try:
            for frame in batch:
                tally.counts["frames.sent"] += 1
                c.send_bytes(frame + b"\n")
            marker = {"jsonrpc": "2.0", "id": "marker", "method": "hello", "params": {"client": "fuzz", "version": "1", "channel": "cli"}}
            c.send_bytes(b"\n" + json.dumps(marker).encode() + b"\n")
            while True:
                reply = c.recv_message()
                tally.counts["frames.replies"] += 1
                problem = check_reply(reply)
                if problem:
                    tally.fail(f"frames {batch!r:.200}: {problem}")
                if reply.get("id") == "marker":
                    break
        except (OSError, ValueError) as exc:
            tally.fail(f"frames {batch!r:.200}: {exc!r}")
        finally:
            c.close()

    one()


def fuzz_params(home: Home, examples: int, tally: Tally, seed: int | None = None) -> None:
    """Every method (but daemon.stop) with params drawn from its schema, hostile values mixed in."""
    conn: list[RawClient] = [_client(home)]

    @_settings(examples, seed)
    @given(st.sampled_from(FUZZED).flatmap(lambda m: st.tuples(st.just(m), params_for(m))))
    def one(case: tuple[str, Any]) -> None:
        method, params = case
        tally.counts["params.sent"] += 1
        tally.counts[f"params.method.{method}"] += 1
        frame = encode({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
        try:
            conn[0].send_bytes(frame)
            reply = conn[0].recv_message()
        except (OSError, ValueError) as exc:
            tally.fail(f"{method} {params!r:.300}: {exc!r}")
            conn[0].close()
            conn[0] = _client(home)
            return
        problem = check_reply(reply)
        if problem and problem.startswith("internal") and "\\u0000" in frame.decode("utf-8", "replace"):
            tally.known("nul-in-path-internal", f"{method} {params!r:.200}")
        elif problem:
            tally.fail(f"{method} {params!r:.300}: {problem}")
        kind = "result" if "result" in reply else str(reply["error"].get("data", {}).get("code", reply["error"]["code"]))
        tally.counts[f"params.reply.{kind}"] += 1

    try:
        one()
    finally:
        conn[0].close()


# -- the hostile vault ------------------------------------------------------------------------------


def _alias_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    return "---\n" + "\n".join(lines) + "\ntitle: Bomb\n---\n# Bomb\n\nbombword\n"


#: file -> the skip code vault.issues must report for it
EXPECTED_SKIPS = {
    "big.md": "S01",
    "bad-utf8.md": "S02",
    "nul.md": "S03",
    "loop.md": "S04",
    "outside-link.md": "S04",
    "fifo.md": "S06",
    "sock.md": "S06",
}


def build_hostile_vault(vault: Path, outside: Path, filler: int = 300, folder_loop: bool = True) -> dict[str, Any]:
    """Write the hostile files; returns facts about what the filesystem allowed.

    ``folder_loop`` adds ``up -> ..``, a folder link back above the vault. The watcher follows it
    (bug 2 in docs/reliability.md), so the fast test leaves it out and tests the bug apart.
    """
    facts: dict[str, Any] = {"folder_loop": folder_loop}
    vault.mkdir(parents=True)
    (vault / "ok.md").write_text("# OK\n\nplainword [[Deep]]\n")
    for i in range(filler):
        (vault / "filler").mkdir(exist_ok=True)
        (vault / "filler" / f"f{i}.md").write_text(f"# F{i}\n\nfiller {i} [[OK]]\n")
    (vault / "bad-utf8.md").write_bytes(b"# Bad\n\n\xff\xfe\xc3\x28 not utf-8\n")
    with open(vault / "big.md", "wb") as f:
        line = b"all work and no play makes a big note " * 26 + b"\n"
        for _ in range((50 * 1024 * 1024) // len(line) + 1):
            f.write(line)
    (vault / "Deep.md").write_text(
        "# Deep\n\n" + "- " * 100_000 + "deepword\n\n" + "> " * 100_000 + "quoted\n\n" + "[" * 50_000 + "x" + "]" * 50_000 + "\n"
    )
    (vault / "bomb.md").write_text(_alias_bomb())
    (vault / "nul.md").write_bytes(b"# Nul\n\nnul\x00byte\n")
    os.symlink("loop.md", vault / "loop.md")
    if folder_loop:
        os.symlink("..", vault / "up")  # a folder link back up: a loop for anything that follows links
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_text("# Outside\n\noutsideword\n")
    os.symlink(outside / "secret.md", vault / "outside-link.md")
    os.mkfifo(vault / "fifo.md")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(vault / "sock.md"))
    facts["socket"] = s  # kept open by the caller until the end
    nfc = unicodedata.normalize("NFC", "Café")
    nfd = unicodedata.normalize("NFD", "Café")
    (vault / f"{nfc}.md").write_text("# Cafe NFC\n\nnfcword\n")
    (vault / f"{nfd}.md").write_text("# Cafe NFD\n\nnfdword\n")
    (vault / "Note.md").write_text("# Note upper\n\nupperword\n")
    (vault / "note.md").write_text("# note lower\n\nlowerword\n")
    names = {"long255": "n" * 252 + ".md", "long255_multibyte": "é" * 126 + ".md", "long256": "m" * 253 + ".md"}
    facts["names"] = {}
    for key, name in names.items():
        try:
            (vault / name).write_text(f"# {key}\n\n{key}word\n")
            facts["names"][key] = name
        except OSError as exc:
            facts["names"][key] = f"refused by the filesystem: {errno.errorcode.get(exc.errno or 0, exc)}"
    (vault / "flip.md").write_text("# Flip\n\nflipword\n")
    return facts


def _flipper(vault: Path, stop: threading.Event, counts: Counter[str], limit: int = 20_000) -> None:
    """Turn flip.md into a folder and back while the scan runs (bounded by count and by ``stop``)."""
    target, aside = vault / "flip.md", vault / ".flip-aside"
    for _ in range(limit):
        if stop.is_set():
            break
        try:
            os.rename(target, aside)
            target.mkdir()
            (target / "inner.md").write_text("# Inner\n\ninner\n")
            counts["flip.to_folder"] += 1
            shutil.rmtree(target)
            os.rename(aside, target)
            counts["flip.to_file"] += 1
        except OSError:
            counts["flip.oserror"] += 1
    if not target.is_file():  # leave it a file
        shutil.rmtree(target, ignore_errors=True)
        if aside.exists():
            os.rename(aside, target)


def hostile_vault_round(home: Home, daemon: Daemon, name: str, tally: Tally, folder_loop: bool = True, filler: int = 300) -> dict[str, Any]:
    vault = home.root / f"hv-{name}"
    facts = build_hostile_vault(vault, home.root / f"outside-{name}", filler, folder_loop)
    tally.counts["vault.hostile_files"] += 16
    stop = threading.Event()
    flips: Counter[str] = Counter()
    flipper = threading.Thread(target=_flipper, args=(vault, stop, flips))
    c = _client(home)
    try:
        flipper.start()
        t0 = time.monotonic()
        reply = c.request("vault.add", {"id": name, "path": str(vault)})
        add_s = time.monotonic() - t0
        stop.set()
        flipper.join(30)
        if "result" not in reply:
            tally.fail(f"vault.add: {reply}")
            return {}
        issues = c.call("vault.issues", {"vault": name, "limit": 500})["issues"]
        found = {i["path"]: i["code"] for i in issues}
        for path, code in EXPECTED_SKIPS.items():
            tally.counts["vault.expected_skips_checked"] += 1
            if found.get(path) != code:
                tally.fail(f"vault.issues: {path} expected {code}, got {found.get(path)}")
        reads = {
            "ok.md": "plainword",
            "Deep.md": "deepword",
            "bomb.md": "bombword",
            "Note.md": "upperword",
            "note.md": "lowerword",
            unicodedata.normalize("NFC", "Café") + ".md": "nfcword",
        }
        for key, fname in facts["names"].items():
            if not fname.startswith("refused"):
                reads[fname] = f"{key}word"
        for target, word in reads.items():
            tally.counts["vault.reads"] += 1
            r = c.request("note.read", {"vault": name, "target": target, "max_bytes": 65536})
            problem = check_reply(r)
            if problem or "result" not in r:
                tally.fail(f"read {target!r}: {problem or r}")
            elif word not in json.dumps(r["result"], ensure_ascii=False) and r["result"]["truncated"] is False:
                tally.fail(f"read {target!r}: {word} not in body")
        for target in ("big.md", "bad-utf8.md", "nul.md", "fifo.md", "sock.md", "loop.md", "outside-link.md"):
            r = c.request("note.read", {"vault": name, "target": target})
            tally.counts["vault.skipped_reads"] += 1
            if check_reply(r) or "result" in r:
                tally.fail(f"read of skipped {target}: {r!r:.300}")
        out = c.call("note.search", {"vault": name, "query": "outsideword"})
        if out["hits"]:
            tally.fail(f"a file outside the vault is searchable: {out}")
        for method in ("vault.stats", "vault.tags", "note.list"):
            r = c.request(method, {"vault": name})
            if check_reply(r):
                tally.fail(f"{method}: {r!r:.300}")
        (vault / "after.md").write_text("# After\n\nwatcherword" + name.replace("-", "") + "\n")
        hits = c.call("note.search", {"vault": name, "query": "watcherword" + name.replace("-", ""), "fresh": True})
        tally.counts["vault.watcher_checks"] += 1
        if [h["path"] for h in hits["hits"]] != ["after.md"]:
            if folder_loop and any(h["path"].startswith("up/") for h in hits["hits"]):
                tally.known("watcher-follows-folder-links", f"new note indexed through the link: {hits}")
            else:
                tally.fail(f"the watcher missed a new note after the hostile scan: {hits}")
        if daemon.proc.poll() is not None:
            tally.fail("the daemon died")
        return {"vault_add_seconds": round(add_s, 2), "flips": dict(flips), "issues": len(issues), "names": facts["names"]}
    finally:
        stop.set()
        facts["socket"].close()
        c.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=5000, help="hypothesis examples of raw frame batches")
    ap.add_argument("--params", type=int, default=20000, help="hypothesis examples of method params")
    ap.add_argument("--vault-rounds", type=int, default=5)
    ap.add_argument("--names-rounds", type=int, default=0, help="rounds of hostile file names (names.py)")
    ap.add_argument("--names-drawn", type=int, default=100, help="hypothesis names in the first names round; round k draws k times as many")
    ap.add_argument("--seed", type=int, default=None, help="derandomize hypothesis")
    args = ap.parse_args(argv)
    home = Home.create()
    daemon = Daemon(home)
    tally = Tally()
    name_tally = NameTally()
    started = time.monotonic()
    rounds = []
    try:
        if args.frames:
            fuzz_frames(home, args.frames, tally, args.seed)
        if args.params:
            fuzz_params(home, args.params, tally, args.seed)
        for k in range(args.vault_rounds):
            rounds.append(hostile_vault_round(home, daemon, f"hostile-{k}", tally, folder_loop=k % 2 == 0))
        for k in range(args.names_rounds):
            size = names.RoundSize(drawn=args.names_drawn * (k + 1), watch_names=40 * (k + 1), cli_shows=6 * (k + 1), mcp_limit=None)
            rounds.append(names.names_round(home, daemon, f"names-{k}", name_tally, size, seed=args.seed))
        tally.counts.update({f"names.{key}": n for key, n in name_tally.counts.items()})
        tally.failures += name_tally.failures
        alive = daemon.proc.poll() is None
        if not alive:
            tally.fail("the daemon exited")
        c = _client(home)
        status_ok = "result" in c.request("daemon.status", {})
        c.close()
        if not status_ok:
            tally.fail("daemon.status failed at the end")
    finally:
        log = home.home / "logs" / "vaultd.log"
        errors = [ln for ln in log.read_text(errors="replace").splitlines() if '"level": "error"' in ln] if log.exists() else []
        code = daemon.stop()
    report = {
        "seconds": round(time.monotonic() - started, 1),
        "counts": dict(sorted(tally.counts.items())),
        "failures": tally.failures,
        "vault_rounds": rounds,
        "daemon_log_error_lines": len(errors),
        "daemon_log_error_samples": errors[:5],
        "daemon_exit": code,
    }
    print(json.dumps(report, indent=1, default=str))
    ok = tally.counts["failures"] == 0 and tally.counts["names.failures"] == 0 and not errors
    if ok:
        home.cleanup()
    else:
        print(f"kept {home.root}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
