"""Concurrent writers on shared notes, with an editor rewriting the files under them.

    .venv/bin/python -m reliability.stress.concurrency --clients 16 --ops 60

N clients (socket, ``vaultctl`` processes and ``vaultctl mcp`` shims in turn) each run M
operations against a handful of shared notes: appends of unique tokens, patches of the client's own
``slot`` line and ``set_frontmatter`` of the client's own key, each with the ``expected_sha`` read
just before; and creates, half of them racing for the same path. Meanwhile an editor process
appends its own tokens to the shared notes, in place or by temp file and rename as Obsidian does.

Checked at the end (every count printed must be 0 except the expected ones):

- every acknowledged token is in the file (or was replaced by a later acknowledged op of the same
  client), and no refused token is; a daemon token lost is excused only when an editor save
  overlapped the op in time (the editor saved from a read older than the daemon's rename: its race);
- every editor token is in the file: the daemon re-checks each target right before its own
  rename, so a lost editor save is a violation; the only excuse is an in-place save that the
  editor found (``st_nlink == 0``) went into a file already replaced;
- the receipts form a chain per note: each receipt's ``before_sha`` is its ``expected_sha``, and no
  two daemon writes start from the same content (a fork is a lost update);
- each contended create path has exactly one winner;
- ``note.read`` sha equals the file's sha for every note, and ``note.search`` with ``fresh: true``
  finds every acknowledged token that is present;
- every request got an answer within the per-call bound and the whole run within ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability.stress.harness import CliClient, McpClient, Reply, SocketClient, percentile, sha256_file, start_daemon
from tests.support.harness import REPO, Home

SHARED = 4
EXPECTED_REFUSALS = {"CONFLICT"}
RACE_CREATE_REFUSALS = {"CONFLICT", "VALIDATION", "REFUSED"}


@dataclass
class Op:
    client: int
    kind: str  #: channel
    op: str
    note: str
    token: str
    expected_sha: str | None
    reply: Reply
    slot_key: str | None = None  #: for ops that replace the client's previous value


@dataclass
class ClientRun:
    ops: list[Op] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    hangs: int = 0


def shared_note(k: int, clients: int) -> str:
    slots = "".join(f"slot-c{i}: v0\n" for i in range(clients))
    return f"---\ntitle: Shared {k}\n---\n# Shared {k}\n\n{slots}\n## Log\n\n- start\n"


def run_client(i: int, client: SocketClient | CliClient | McpClient, ops: int, seed: int, deadline: float, out: ClientRun) -> None:
    rnd = random.Random(seed * 1000 + i)
    for j in range(ops):
        if time.monotonic() > deadline:
            out.unexpected.append(f"c{i}: stopped at op {j}: run deadline")
            return
        token = f"tk{i}o{j}x{rnd.randrange(16**6):06x}"
        roll = rnd.random()
        note = f"shared/s{rnd.randrange(SHARED)}.md"
        try:
            if roll < 0.15:
                race = rnd.random() < 0.5
                path = f"race/r{j}.md" if race else f"c{i}/n{j}.md"
                reply = client.call("note.create", {"path": path, "body": f"# R\n\n{token}\n"})
                out.ops.append(Op(i, client.kind, "create-race" if race else "create", path, token, None, reply))
                allowed = RACE_CREATE_REFUSALS if race else set()
                if not reply.ok and reply.code not in allowed:
                    out.unexpected.append(f"c{i} create {path}: {reply.value}")
                continue
            read = client.call("note.read", {"target": note, "max_bytes": 65536})
            if not read.ok:
                out.unexpected.append(f"c{i} read {note}: {read.value}")
                continue
            sha = read.value["sha256"]
            if roll < 0.55:
                params = {"target": note, "section": "Log", "markdown": f"- {token}", "expected_sha": sha}
                reply = client.call("note.append", params)
                op = Op(i, client.kind, "append", note, token, sha, reply)
            elif roll < 0.80:
                m = re.search(rf"^slot-c{i}: (\S+)$", read.value["body"], re.M)
                if m is None:
                    out.unexpected.append(f"c{i}: slot line missing from {note}")
                    continue
                params = {"target": note, "old": m.group(0), "new": f"slot-c{i}: {token}", "expected_sha": sha}
                reply = client.call("note.patch", params)
                op = Op(i, client.kind, "patch", note, token, sha, reply, slot_key=f"slot:{note}:{i}")
            else:
                params = {"target": note, "set": {f"c{i}": token}, "expected_sha": sha}
                reply = client.call("note.set_frontmatter", params)
                op = Op(i, client.kind, "set_frontmatter", note, token, sha, reply, slot_key=f"fm:{note}:{i}")
            out.ops.append(op)
            if not reply.ok and reply.code not in EXPECTED_REFUSALS:
                out.unexpected.append(f"c{i} {op.op} {note}: {reply.value}")
        except (TimeoutError, subprocess.TimeoutExpired, queue.Empty) as exc:
            out.hangs += 1
            out.unexpected.append(f"c{i} op {j}: no answer within the bound: {exc!r}")
        except Exception as exc:  # noqa: BLE001 - a driver must count every failure, not die on one
            out.unexpected.append(f"c{i} op {j}: {exc!r}")


# -- the editor -----------------------------------------------------------------------------------


def editor_main(vault: Path, stop: Path, log_path: Path, seed: int, max_seconds: float) -> None:
    """Append tokens to the shared notes as a text editor would, until ``stop`` exists."""
    rnd = random.Random(seed)
    records = []
    deadline = time.monotonic() + max_seconds
    k = 0
    while not stop.exists() and time.monotonic() < deadline:
        note = f"shared/s{rnd.randrange(SHARED)}.md"
        path = vault / note
        token = f"edtok{k}x{rnd.randrange(16**6):06x}"
        mode = "rename" if k % 2 else "inplace"
        t_read = time.monotonic()
        base = path.read_bytes()
        new = base + f"- {token}\n".encode()
        orphaned = False
        if mode == "inplace":
            with open(path, "r+b") as f:
                f.write(new)
                f.truncate()
                f.flush()
                # opened before a daemon rename, written after it: the save went into the replaced file
                orphaned = os.fstat(f.fileno()).st_nlink == 0
        else:
            tmp = path.with_name(f".{path.name}.edit~")
            tmp.write_bytes(new)
            os.replace(tmp, path)
        t_done = time.monotonic()
        records.append(
            {
                "note": note,
                "token": token,
                "mode": mode,
                "t_read": t_read,
                "t_done": t_done,
                "orphaned": orphaned,
                "base_sha": hashlib.sha256(base).hexdigest(),
                "new_sha": hashlib.sha256(new).hexdigest(),
            }
        )
        k += 1
        time.sleep(rnd.uniform(0.1, 0.5))  # an editor's pause between saves
    log_path.write_text(json.dumps(records))


# -- the checks -----------------------------------------------------------------------------------


def overlaps(edits: list[dict[str, Any]], note: str, t0: float, t1: float) -> bool:
    return any(e["note"] == note and e["t_read"] <= t1 and e["t_done"] >= t0 for e in edits)


def check(home: Home, vault: Path, runs: list[ClientRun], edits: list[dict[str, Any]]) -> dict[str, Any]:
    ops = [op for r in runs for op in r.ops]
    c: Counter[str] = Counter()
    texts: dict[str, str] = {}

    def text(note: str) -> str:
        if note not in texts:
            p = vault / note
            texts[note] = p.read_text() if p.exists() else ""
        return texts[note]

    last_acked: dict[str, Op] = {}
    for op in ops:
        if op.slot_key and op.reply.ok:
            prev = last_acked.get(op.slot_key)
            if prev is None or op.reply.answered > prev.reply.answered:
                last_acked[op.slot_key] = op
    # tokens: acknowledged ones present, refused ones absent
    for op in ops:
        c[f"ops.{op.op}.{op.reply.code}"] += 1
        present = re.search(rf"\b{op.token}\b", text(op.note)) is not None
        if op.reply.ok:
            c["acked"] += 1
            if op.slot_key and last_acked[op.slot_key] is not op:
                if present:  # replaced later by the same client's acknowledged op
                    c["violation.replaced_token_still_present"] += 1
                continue
            if not present:
                if overlaps(edits, op.note, op.reply.sent, op.reply.answered):
                    c["editor_race.daemon_token_lost"] += 1
                else:
                    c["violation.acked_token_lost"] += 1
                    print(f"LOST: {op}", file=sys.stderr)
        elif present and op.op != "create-race":
            c["violation.refused_token_present"] += 1
            print(f"REFUSED BUT PRESENT: {op}", file=sys.stderr)
    # receipts chain: before == expected, and no fork between two daemon writes
    children: dict[tuple[str, str], list[str]] = defaultdict(list)
    for op in ops:
        if op.reply.ok and op.op not in ("create", "create-race"):
            ch = op.reply.value["changes"][0]
            if op.expected_sha and ch["before_sha"] != op.expected_sha:
                c["violation.before_sha_not_expected"] += 1
            children[(op.note, ch["before_sha"])].append("daemon")
    for e in edits:
        children[(e["note"], e["base_sha"])].append("editor")
    for kids in children.values():
        if kids.count("daemon") > 1:
            c["violation.fork_between_daemon_writes"] += 1
        elif len(kids) > 1:
            c["editor_race.fork_with_editor"] += 1
    for e in edits:
        if e["token"] not in text(e["note"]):
            # Every target is re-checked right before its own rename, so a daemon write never
            # replaces a save it could have seen: a lost save is a violation, overlap or not. The
            # one excuse is an in-place save the editor itself found went into a file the daemon
            # had already replaced (opened before the rename, written after: the editor's race).
            if e.get("orphaned"):
                c["editor_race.inplace_save_into_replaced_file"] += 1
            else:
                c["violation.editor_token_lost"] += 1
                print(f"EDITOR SAVE LOST: {e}", file=sys.stderr)
    # contended creates: one winner each
    by_path: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        if op.op == "create-race":
            by_path[op.note].append(op)
    for path, group in by_path.items():
        winners = [op for op in group if op.reply.ok]
        if len(winners) > 1:
            c["violation.race_create_two_winners"] += 1
        if winners and winners[0].token not in text(path):
            c["violation.race_create_winner_missing"] += 1
        if not winners and (vault / path).exists():
            c["violation.race_create_file_without_winner"] += 1
    # index agrees with the disk
    probe = SocketClient(home)
    notes: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 500, "fresh": True}
        if cursor:
            params["cursor"] = cursor
        page = probe.call("note.list", params).value
        notes += [n["path"] for n in page["notes"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    # vaultd's operation log (log.md) is its own file, not a note: no listing shows it
    on_disk = sorted(
        rel
        for p in vault.rglob("*.md")
        if ".vaultd" not in p.parts and ".trash" not in p.parts and (rel := p.relative_to(vault).as_posix()) != "log.md"
    )
    c["violation.list_differs_from_disk"] = int(sorted(notes) != on_disk)
    for note in on_disk:
        r = probe.call("note.read", {"target": note, "fresh": True})
        c["checked.read_sha"] += 1
        if not r.ok or r.value["sha256"] != sha256_file(vault / note):
            c["violation.read_sha_differs_from_file"] += 1
    for key, op in last_acked.items():
        if key.startswith("fm:"):  # frontmatter values are not full-text indexed: read them back
            r = probe.call("note.read", {"target": op.note, "fresh": True})
            c["checked.frontmatter_value"] += 1
            if not r.ok or (r.value["frontmatter"] or {}).get(f"c{op.client}") != op.token:
                if not overlaps(edits, op.note, op.reply.sent, op.reply.answered):
                    c["violation.frontmatter_value_differs"] += 1
    present_tokens = [(op.token, op.note) for op in ops if op.reply.ok and op.op != "set_frontmatter" and op.token in text(op.note)]
    present_tokens += [(e["token"], e["note"]) for e in edits if e["token"] in text(e["note"])]
    for token, note in present_tokens:
        r = probe.call("note.search", {"query": token, "fresh": True})
        c["checked.search_token"] += 1
        if not r.ok or note not in [h["path"] for h in r.value["hits"]]:
            c["violation.search_misses_token"] += 1
            print(f"SEARCH MISS: {token} in {note}: {r.value}", file=sys.stderr)
    probe.close()
    return dict(sorted(c.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--ops", type=int, default=60, help="operations per client")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=1200.0, help="bound on the whole run")
    ap.add_argument("--kinds", default="raw,cli,mcp", help="client kinds, assigned in turn")
    ap.add_argument("--no-editor", action="store_true")
    ap.add_argument("--editor", nargs=4, metavar=("VAULT", "STOP", "LOG", "SECONDS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.editor:
        editor_main(Path(args.editor[0]), Path(args.editor[1]), Path(args.editor[2]), args.seed, float(args.editor[3]))
        return 0
    report = run(args.clients, args.ops, args.seed, args.max_seconds, args.kinds.split(","), not args.no_editor)
    print(json.dumps(report, indent=1))
    return 0 if report["bad"] == 0 else 1


def run(clients: int, ops: int, seed: int, max_seconds: float, kinds: list[str], editor: bool) -> dict[str, Any]:
    """One run; the report's ``bad`` sums every violation, hang, unexpected error and log error."""
    home, daemon = start_daemon()
    vault = home.root / "vault"
    (vault / "shared").mkdir(parents=True)
    for k in range(SHARED):
        (vault / "shared" / f"s{k}.md").write_text(shared_note(k, clients))
    setup = SocketClient(home)
    # Agents apply everything here: the run is about concurrent writers, not about the gate
    # (which holds an agent's moves and deletes for a person by default).
    trusting = {"move": "apply", "delete": "apply", "merge": "apply", "supersede": "apply", "wide": "apply"}
    assert setup.call("vault.add", {"id": "stress", "path": str(vault), "agents": trusting}).ok
    started = time.monotonic()
    deadline = started + max_seconds
    runs = [ClientRun() for _ in range(clients)]
    made: list[Any] = []
    for i in range(clients):
        kind = kinds[i % len(kinds)]
        made.append(SocketClient(home) if kind == "raw" else CliClient(home) if kind == "cli" else McpClient(home, home.root))
    stop, edlog = home.root / "editor.stop", home.root / "editor.json"
    ed = None
    if editor:
        ed = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reliability.stress.concurrency",
                "--seed",
                str(seed),
                "--editor",
                str(vault),
                str(stop),
                str(edlog),
                str(max_seconds),
            ],
            cwd=REPO,
            env=home.env,
        )
    threads = [threading.Thread(target=run_client, args=(i, made[i], ops, seed, deadline, runs[i])) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(1.0, deadline - time.monotonic() + 120))
    elapsed = time.monotonic() - started
    stuck = sum(t.is_alive() for t in threads)
    stop.touch()
    edits: list[dict[str, Any]] = []
    if ed is not None:
        ed.wait(60)
        edits = json.loads(edlog.read_text())
    for m in made:
        m.close()
    alive = daemon.proc.poll() is None
    result = check(home, vault, runs, edits) if alive and not stuck else {}
    lat: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        for op in r.ops:
            lat[f"{op.kind}.{op.op}"].append(op.reply.seconds)
    report = {
        "clients": clients,
        "ops_per_client": ops,
        "kinds": kinds,
        "seed": seed,
        "wall_seconds": round(elapsed, 1),
        "requests": sum(len(r.ops) for r in runs),
        "editor_writes": len(edits),
        "editor_modes": dict(Counter(e["mode"] for e in edits)),
        "stuck_clients": stuck,
        "hangs": sum(r.hangs for r in runs),
        "daemon_alive": alive,
        "unexpected_errors": sum(len(r.unexpected) for r in runs),
        "unexpected_samples": [u for r in runs for u in r.unexpected][:10],
        "latency_p50_p99_s": {k: [round(percentile(v, 0.5), 3), round(percentile(v, 0.99), 3)] for k, v in sorted(lat.items())},
        "checks": result,
    }
    logs = home.home / "logs" / "vaultd.log"
    errors_in_log = sum(1 for ln in logs.read_text(errors="replace").splitlines() if '"level": "error"' in ln) if logs.exists() else 0
    report["daemon_log_error_lines"] = errors_in_log
    daemon.stop()
    violations = sum(v for k, v in result.items() if k.startswith("violation."))
    report["violations"] = violations
    report["bad"] = violations + stuck + report["hangs"] + report["unexpected_errors"] + (not alive) + errors_in_log + (not result)
    if report["bad"] == 0:
        home.cleanup()
    else:
        print(f"kept {home.root} for inspection", file=sys.stderr)
    return report


if __name__ == "__main__":
    sys.exit(main())
