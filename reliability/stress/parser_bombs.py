"""Parser bombs against a real daemon: drawn files that cost an unbounded parser minutes, hours or
gigabytes, each put where the daemon parses it, while another client keeps reading and writing.

    .venv/bin/python -m reliability.stress.parser_bombs --rounds 120 --seed 7

Each round draws one bomb and its size: a YAML alias bomb in a note's header or in a ``.base``
(levels × width), a header nested thousands of levels deep (flow sequences, flow mappings,
compact block sequences), a deeply nested ``.base``, ``.canvas`` or ``.obsidian/app.json``, a
base line of ``link("`` never closed, a note of one huge line, an EPUB whose ZIP directory floods
with entries, an EPUB whose package document inflates to hundreds of MiB. The bomb is written into
the vault as a hand edit (as a sync or an unzip would leave it), then the request that parses it is
sent: a fresh read and ``vault.issues`` for a note, ``vault.lint`` and a ``note.move`` that relinks
for a base or a canvas, ``source.capture`` for an EPUB or a capture beside the app.json.

Counted: a **stall** is a request (the bomb's, or the other client's) unanswered within
:data:`STALL_BOUND_S`; a **crash** is an INTERNAL answer, a dropped connection or the daemon gone.
Both must be 0. Every bomb must be **reported** naming its file (an N01/N04 indexing issue, a
lint finding, a capture's metadata problem) or, where nothing is wrong to report (a huge line,
a nested app.json), answered. The other client's answered requests and its slowest answer are
reported beside, and the daemon's peak resident memory (VmHWM). The fast slice of the same code
runs in tests/reliability/test_parser_bombs.py.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.support import bombs
from tests.support.harness import Daemon, Home, RawClient

if TYPE_CHECKING:
    from pathlib import Path

STALL_BOUND_S = 30.0  #: a request unanswered this long is a stall; the old parsers took minutes to hours
KINDS = (
    "header-alias",
    "header-deep-flow",
    "header-deep-map",
    "header-deep-compact",
    "base-alias",
    "base-deep",
    "base-long-line",
    "canvas-deep",
    "app-json-deep",
    "note-huge-line",
    "epub-flood",
    "epub-zip-bomb",
)


@dataclass
class Bomb:
    kind: str
    rel: str  #: where it goes in the vault ("" for a file captured from outside)
    data: bytes
    size: str  #: what was drawn, for the report


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    slowest_other_s: float = 0.0

    def fail(self, what: str) -> None:
        self.counts["failures"] += 1
        if len(self.failures) < 20:
            self.failures.append(what)


def draw(rng: random.Random, kind: str, k: int, small: bool = False) -> Bomb:
    """One bomb of ``kind``, its size drawn (``small``: the smallest sizes that still bomb the old parsers)."""
    deep = 8000 if small else rng.choice([2000, 8000, 30_000, 100_000])
    if kind == "header-alias":
        levels, width = (9, 9) if small else (rng.randint(6, 12), rng.randint(6, 12))
        return Bomb(kind, f"bombs/h{k}.md", bombs.header_note(bombs.alias_bomb(levels, width)).encode(), f"{levels}x{width}")
    if kind.startswith("header-deep"):
        shape = {"flow": bombs.nested_flow, "map": bombs.nested_flow_maps, "compact": bombs.nested_compact}[kind.rsplit("-", 1)[1]]
        header = shape(min(deep, 8000))  # the header bound (64 KiB) leaves room for about 8,000 levels
        return Bomb(kind, f"bombs/h{k}.md", bombs.header_note(header).encode(), f"{min(deep, 8000)} levels")
    if kind == "base-alias":
        levels, width = (9, 9) if small else (rng.randint(6, 12), rng.randint(6, 12))
        return Bomb(kind, f"bombs/b{k}.base", bombs.alias_bomb(levels, width).encode(), f"{levels}x{width}")
    if kind == "base-deep":
        return Bomb(kind, f"bombs/b{k}.base", bombs.nested_flow(deep, "filters").encode(), f"{deep} levels")
    if kind == "base-long-line":
        calls = 50_000 if small else rng.choice([100_000, 300_000])
        return Bomb(kind, f"bombs/b{k}.base", bombs.unclosed_calls_line(calls).encode(), f"{calls} calls")
    if kind == "canvas-deep":
        return Bomb(
            kind, f"bombs/c{k}.canvas", bombs.deep_canvas(deep).replace('"edges"', f'"hub": "Hub{k}", "edges"').encode(), f"{deep} levels"
        )
    if kind == "app-json-deep":
        return Bomb(kind, ".obsidian/app.json", ('{"attachmentFolderPath": ' + bombs.nested_json(deep) + "}").encode(), f"{deep} levels")
    if kind == "note-huge-line":
        chars = 1_000_000 if small else rng.choice([1_000_000, 2_000_000])
        unit = rng.choice(["[[", "#a", "](", "![[", "`", "$"])
        return Bomb(kind, f"bombs/n{k}.md", (unit * (chars // len(unit))).encode(), f"{chars} chars of {unit!r}")
    if kind == "epub-flood":
        entries = 200_000 if small else rng.choice([200_000, 600_000, 1_300_000])
        return Bomb(kind, "", bombs.central_directory_flood(entries), f"{entries} entries")
    if kind == "epub-zip-bomb":
        inflated = 64 if small else rng.choice([128, 512])
        return Bomb(kind, "", bombs.epub_zip_bomb(inflated * 1024 * 1024), f"{inflated} MiB inflated")
    raise ValueError(kind)


class Caller:
    """One client connection; a timeout is a stall, an INTERNAL or a lost connection a crash."""

    def __init__(self, home: Home, tally: Tally, who: str) -> None:
        self.home, self.tally, self.who = home, tally, who
        self.raw: RawClient | None = None

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """The result; None (counted) when the request stalled or crashed, or the error's data."""
        try:
            if self.raw is None:
                self.raw = RawClient(self.home.socket, timeout=STALL_BOUND_S)
                RawClient.open_clients.remove(self.raw)
                self.raw.hello()
            reply = self.raw.request(method, params)
        except TimeoutError:
            self.tally.counts["stalls"] += 1
            self.tally.fail(f"{self.who}: {method} unanswered within {STALL_BOUND_S} s")
            self.close()
            return None
        except (ConnectionError, OSError, json.JSONDecodeError) as exc:
            self.tally.counts["crashes"] += 1
            self.tally.fail(f"{self.who}: {method} lost its connection ({exc})")
            self.close()
            return None
        if "error" in reply:
            data = reply["error"].get("data") or {}
            if data.get("code") == "INTERNAL" or reply["error"].get("code") == -32603:
                self.tally.counts["crashes"] += 1
                self.tally.fail(f"{self.who}: {method} answered INTERNAL: {reply['error']}")
                return None
            return {"error": data}
        return reply["result"]  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.raw is not None:
            self.raw.close()
            self.raw = None


def _other_client(home: Home, tally: Tally, stop: threading.Event) -> None:
    """Reads and writes in another vault for as long as the bombs go off."""
    c = Caller(home, tally, "other client")
    n = 0
    while not stop.is_set():
        n += 1
        for method, params in (
            ("note.create", {"vault": "calm", "path": f"calm/n{n}", "body": f"note {n} links [[Calm Home]]\n"}),
            ("note.read", {"vault": "calm", "target": "Calm Home", "fresh": True}),
            ("note.search", {"vault": "calm", "query": "links"}),
        ):
            t0 = time.monotonic()
            result = c.call(method, params)
            tally.slowest_other_s = max(tally.slowest_other_s, time.monotonic() - t0)
            if result is not None and "error" not in result:
                tally.counts["other_answered"] += 1
            elif result is not None:
                tally.fail(f"other client: {method} refused: {result['error']}")
    c.close()


def _issue_of(c: Caller, rel: str) -> str | None:
    result = c.call("vault.issues", {"vault": "bombs", "limit": 500})
    codes = [i["code"] for i in (result or {}).get("issues", []) if i["path"] == rel]
    return codes[0] if codes else None


def set_off(home: Home, root: Path, bomb: Bomb, k: int, c: Caller, tally: Tally) -> bool:
    """Put ``bomb`` where the daemon parses it and send the request that parses it; True when the
    daemon reported it naming the file (or, for a bomb with nothing to report, answered)."""
    if bomb.rel:
        target = root / bomb.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bomb.data)
    kind = bomb.kind
    if kind.startswith("header-"):
        read = c.call("note.read", {"vault": "bombs", "target": bomb.rel, "fresh": True})
        return read is not None and "body" in read and _issue_of(c, bomb.rel) == ("N04" if kind == "header-alias" else "N01")
    if kind == "note-huge-line":
        read = c.call("note.read", {"vault": "bombs", "target": bomb.rel, "fresh": True, "max_bytes": 1024})
        return read is not None and "body" in read
    if kind.startswith(("base-", "canvas-")):
        (root / f"Hub{k}.md").write_text(f"# Hub {k}\n")
        (root / f"Spoke{k}.md").write_text(f"# Spoke {k}\n\nSee [[Hub{k}]].\n")
        lint = c.call("vault.lint", {"vault": "bombs", "fresh": True, "limit": 1000})
        found = [f for f in (lint or {}).get("findings", []) if f["note"] == bomb.rel and f["code"] in ("L14", "L15")]
        move = {"vault": "bombs", "target": f"Hub{k}", "to": f"Hub{k} moved"}
        preview = c.call("note.move", move)
        moved = None
        if preview is not None and "fingerprint" in preview:
            moved = c.call("note.move", {**move, "confirm": True, "fingerprint": preview["fingerprint"]})
        if moved is None or moved.get("outcome") != "applied":
            tally.fail(f"{kind}: the move beside {bomb.rel} was not applied: {moved or preview}")
        target.unlink()  # one bomb at a time: the next lint reads its own
        return bool(found)
    if kind == "app-json-deep":
        result = c.call("source.capture", {"vault": "bombs", "items": [{"data": "aGVsbG8=", "name": f"hello{k}.bin"}]})
        target.unlink()
        return result is not None and "error" not in result
    if kind.startswith("epub-"):
        path = home.root / f"capture{k}.epub"
        path.write_bytes(bomb.data)
        result = c.call("source.capture", {"vault": "bombs", "items": [{"path": str(path)}]})
        path.unlink()
        if result is None or "error" in result:
            return False
        [source] = result["detail"]["sources"]
        warned = [w["message"] for w in result.get("warnings", []) if w.get("code") == "V09"]
        return source["kind"] == "epub" and any("EPUB's metadata" in w for w in warned)
    raise ValueError(kind)


def peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024


def run_round(home: Home, daemon: Daemon, rounds: int, seed: int, small: bool = False, kinds: tuple[str, ...] = KINDS) -> dict[str, Any]:
    """``rounds`` bombs (every kind in turn, then drawn), with the other client running throughout."""
    rng = random.Random(seed)
    tally = Tally()
    root = home.root / "bombs"
    (root / "bombs").mkdir(parents=True, exist_ok=True)
    (root / "Home.md").write_text("# Home\n\nThe vault the bombs go off in.\n")
    calm = home.root / "calm"
    calm.mkdir(parents=True, exist_ok=True)
    (calm / "Calm Home.md").write_text("# Calm Home\n\nEvery client's reads and writes go on here.\n")
    setup = Caller(home, tally, "setup")
    setup.call("vault.add", {"id": "bombs", "path": str(root)})
    setup.call("vault.add", {"id": "calm", "path": str(calm)})
    setup.close()
    stop = threading.Event()
    other = threading.Thread(target=_other_client, args=(home, tally, stop), daemon=True)
    other.start()
    c = Caller(home, tally, "bomb client")
    per_kind: dict[str, Counter[str]] = {}
    try:
        for k in range(rounds):
            kind = kinds[k] if k < len(kinds) else rng.choice(kinds)
            bomb = draw(rng, kind, k, small)
            seen = per_kind.setdefault(kind, Counter())
            seen["set off"] += 1
            before = tally.counts["stalls"] + tally.counts["crashes"]
            if set_off(home, root, bomb, k, c, tally):
                seen["reported"] += 1
            elif tally.counts["stalls"] + tally.counts["crashes"] == before:
                tally.fail(f"{kind} ({bomb.size}) at {bomb.rel or 'capture'}: not reported")
            if daemon.proc.poll() is not None:
                tally.counts["crashes"] += 1
                tally.fail(f"the daemon exited after {kind} ({bomb.size})")
                break
    finally:
        stop.set()
        other.join(timeout=STALL_BOUND_S * 4)
        c.close()
    alive = daemon.proc.poll() is None
    return {
        "bombs": sum(v["set off"] for v in per_kind.values()),
        "reported": sum(v["reported"] for v in per_kind.values()),
        "stalls": tally.counts["stalls"],
        "crashes": tally.counts["crashes"],
        "other_answered": tally.counts["other_answered"],
        "other_slowest_s": round(tally.slowest_other_s, 2),
        "daemon_alive": alive,
        "daemon_peak_mib": round(peak_mib(daemon.proc.pid), 1) if alive else None,
        "per_kind": {kind: dict(v) for kind, v in sorted(per_kind.items())},
        "failures": tally.failures,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=60, help="bombs to set off (every kind once, then drawn)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    home = Home.create()
    daemon = Daemon(home)
    started = time.monotonic()
    try:
        report = run_round(home, daemon, args.rounds, args.seed)
    finally:
        code = daemon.stop()
    report = {"seconds": round(time.monotonic() - started, 1), **report, "daemon_exit": code}
    print(json.dumps(report, indent=1))
    ok = not report["failures"] and report["stalls"] == 0 and report["crashes"] == 0
    if ok:
        home.cleanup()
    else:
        print(f"kept {home.root}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
