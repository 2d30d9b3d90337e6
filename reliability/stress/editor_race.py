"""Long moves with an editor saving notes under them: no user edit may be lost, no move half-applied.

    .venv/bin/python -m reliability.stress.editor_race --moves 30 --backlinks 150

One target note has ``--backlinks`` backlinks; the driver moves it to a new name again and again
(preview, then confirm; every ``--cli-every``-th confirm through ``vaultctl``), so each move
rewrites every backlink. The daemon runs with ``VAULTD_FAULTS=sleep=after-rename:S`` so a move
takes seconds. Meanwhile an editor process appends its own tokens to the backlinks and to notes
no move touches, by temp file and rename (as Obsidian saves) or in place.

Checked at the end (every ``violation.*`` must be 0):

- every editor token is in its note: a save the daemon overwrote is ``violation.editor_token_lost``.
  The one excuse is an in-place save that the editor itself finds went into a file already
  replaced (``st_nlink == 0`` after its write: it opened the file before the daemon's rename and
  wrote after it), counted as ``editor_race.inplace_save_into_replaced_file``;
- a move answered CONFLICT is fully absent: no file at its new name, no note linking to it
  (``violation.half_applied``), its message names a note the editor saved during it, and through
  ``vaultctl`` it exits 75;
- an applied move left every backlink naming the final name, unless an editor save of that note
  overlapped the move that would have rewritten it (the editor saved from a read older than the
  daemon's rename: ``editor_race.daemon_rewrite_lost``, the editor's own race);
- no journal pending, no temp file, and ``note.read`` agrees with every file on disk.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliability.stress.harness import Reply, SocketClient, sha256_file
from tests.support.harness import REPO, VAULTCTL, Daemon, Home

FREE_NOTES = 20
_PATH_RE = re.compile(r"(?:links|free|targets)/[A-Za-z0-9]+\.md")


@dataclass
class Move:
    n: int
    src: str  #: the target's name before
    dst: str  #: the name this attempt moves it to (unique per attempt)
    channel: str
    reply: Reply


def backlink(i: int) -> str:
    return f"links/L{i:03}.md"


def build(vault: Path, backlinks: int) -> None:
    (vault / "targets").mkdir(parents=True)
    (vault / "links").mkdir()
    (vault / "free").mkdir()
    (vault / "targets" / "T0.md").write_text("# The target\n\nMoved again and again.\n")
    for i in range(backlinks):
        (vault / backlink(i)).write_text(f"# L{i:03}\n\nSee [[T0]].\n\n## Log\n\n")
    for i in range(FREE_NOTES):
        (vault / "free" / f"F{i:02}.md").write_text(f"# F{i:02}\n\nNo links here.\n\n## Log\n\n")


# -- the editor -----------------------------------------------------------------------------------


def editor_main(vault: Path, stop: Path, log_path: Path, seed: int, backlinks: int, share: float, max_seconds: float) -> None:
    """Append tokens to notes as an editor would, until ``stop`` exists."""
    rnd = random.Random(seed)
    records = []
    deadline = time.monotonic() + max_seconds
    k = 0
    while not stop.exists() and time.monotonic() < deadline:
        note = backlink(rnd.randrange(backlinks)) if rnd.random() < share else f"free/F{rnd.randrange(FREE_NOTES):02}.md"
        path = vault / note
        token = f"edtok{k}x{rnd.randrange(16**6):06x}"
        mode = "inplace" if rnd.random() < 0.25 else "rename"
        t_read = time.monotonic()
        base = path.read_bytes()
        new = base + f"- {token}\n".encode()
        orphaned = False
        if mode == "rename":
            tmp = path.with_name(f".{path.name}.edit~")
            tmp.write_bytes(new)
            os.replace(tmp, path)
        else:
            with open(path, "r+b") as f:
                f.write(new)
                f.truncate()
                f.flush()
                orphaned = os.fstat(f.fileno()).st_nlink == 0
        t_done = time.monotonic()
        records.append(
            {
                "note": note,
                "token": token,
                "mode": mode,
                "t_read": t_read,
                "t_done": t_done,
                "orphaned": orphaned,
                "new_sha": hashlib.sha256(new).hexdigest(),
            }
        )
        k += 1
        time.sleep(rnd.uniform(0.02, 0.15))  # an editor's pause between saves
    log_path.write_text(json.dumps(records))


# -- the mover ------------------------------------------------------------------------------------


def confirm_by_cli(home: Home, src: str, dst: str, fingerprint: str) -> Reply:
    argv = [*VAULTCTL, "move", src, dst, "--confirm", "--fingerprint", fingerprint, "--json"]
    t0 = time.monotonic()
    proc = subprocess.run(argv, env={**home.env, "VAULTD_NO_AUTOSTART": "1"}, capture_output=True, text=True, cwd=REPO, timeout=120)
    t1 = time.monotonic()
    if proc.returncode == 0:
        return Reply(True, json.loads(proc.stdout), t1 - t0, t0, t1)
    code = {75: "CONFLICT", 1: "REFUSED"}.get(proc.returncode, f"EXIT{proc.returncode}")
    if proc.returncode == 75 and "since the preview" in proc.stderr:
        code = "STALE_PREVIEW"  # exit 75 too: both mean read again, then retry
    return Reply(False, {"code": code, "message": proc.stderr.strip()[-600:], "exit": proc.returncode}, t1 - t0, t0, t1)


def run_moves(home: Home, vault: Path, moves: int, cli_every: int, c: Counter[str]) -> list[Move]:
    client = SocketClient(home)
    done: list[Move] = []
    current = "targets/T0.md"
    for n in range(1, moves + 1):
        dst = f"targets/T{n}.md"
        preview = client.call("note.move", {"target": current, "to": dst})
        if not preview.ok:
            c[f"moves.preview.{preview.code}"] += 1
            if preview.code != "STALE_PREVIEW":
                c["unexpected.preview_error"] += 1
                print(f"UNEXPECTED PREVIEW: {preview}", file=sys.stderr)
            continue
        params = {"target": current, "to": dst, "confirm": True, "fingerprint": preview.value["fingerprint"]}
        via_cli = cli_every > 0 and n % cli_every == 0
        reply = confirm_by_cli(home, current, dst, params["fingerprint"]) if via_cli else client.call("note.move", params)
        move = Move(n, current, dst, "cli" if via_cli else "raw", reply)
        done.append(move)
        c[f"moves.{move.channel}.{reply.code}"] += 1
        if reply.ok:
            current = dst
        elif reply.code == "CONFLICT":
            # answered only after the rollback: the move must be absent now, whatever the editor does
            if (vault / dst).exists() or not (vault / current).exists():
                c["violation.conflict_left_move_applied"] += 1
        if not reply.ok:  # read again, then retry: what CONFLICT and STALE_PREVIEW ask of a caller
            client.call("note.read", {"target": current, "fresh": True, "max_bytes": 1024})
    client.close()
    return done


# -- the checks -----------------------------------------------------------------------------------


def _saved_during(edits: list[dict[str, Any]], note: str, m: Move) -> bool:
    return any(e["note"] == note and e["t_done"] >= m.reply.sent and e["t_read"] <= m.reply.answered for e in edits)


def check(home: Home, vault: Path, backlinks: int, moves: list[Move], edits: list[dict[str, Any]], c: Counter[str]) -> None:
    texts = {
        p.relative_to(vault).as_posix(): p.read_text() for p in vault.rglob("*.md") if ".vaultd" not in p.parts and ".trash" not in p.parts
    }
    for e in edits:
        c[f"editor.saves.{e['mode']}"] += 1
        if re.search(rf"\b{e['token']}\b", texts.get(e["note"], "")):
            continue
        if e["orphaned"]:
            c["editor_race.inplace_save_into_replaced_file"] += 1
        else:
            c["violation.editor_token_lost"] += 1
            print(f"EDITOR SAVE LOST: {e}", file=sys.stderr)
    applied = [m for m in moves if m.reply.ok]
    final = applied[-1].dst if applied else "targets/T0.md"
    final_name = final.rsplit("/", 1)[1][:-3]
    left_by_rollback: dict[str, str] = {}  #: note -> the conflicted move's name it kept
    for m in moves:
        if m.reply.ok:
            continue
        name = m.dst.rsplit("/", 1)[1][:-3]
        if m.dst in texts:
            c["violation.half_applied"] += 1
            print(f"HALF APPLIED (file at the new name): {m}", file=sys.stderr)
        for note, t in texts.items():
            if f"[[{name}]]" not in t:
                continue
            if _saved_during(edits, note, m):
                # the editor saved the note after the daemon had rewritten it: the rollback leaves a
                # note someone else changed as it is (its link now names a move that did not happen)
                c["editor_race.rollback_left_a_note_saved_after_its_rewrite"] += 1
                left_by_rollback[note] = name
            else:
                c["violation.half_applied"] += 1
                print(f"HALF APPLIED ({note} links {name}): {m}", file=sys.stderr)
        if m.reply.code != "CONFLICT":
            if m.reply.code != "STALE_PREVIEW":
                c["unexpected.move_error"] += 1
                print(f"UNEXPECTED: {m}", file=sys.stderr)
            continue
        if m.channel == "cli" and m.reply.value.get("exit") != 75:
            c["violation.cli_conflict_not_exit_75"] += 1
        named = set(_PATH_RE.findall(str(m.reply.value.get("message", ""))))
        if named and all(_saved_during(edits, note, m) for note in named):
            c["conflict.names_a_note_saved_during_the_move"] += 1
        else:
            c["violation.conflict_names_no_note_saved_during_it"] += 1
            print(f"CONFLICT WITHOUT A SAVE: {m} named={named}", file=sys.stderr)
    by_src = {m.src: m for m in applied}
    for i in range(backlinks):
        note = backlink(i)
        links = re.findall(r"\[\[(T\d+)\]\]", texts.get(note, ""))
        if links == [final_name] or (len(links) == 1 and left_by_rollback.get(note) == links[0]):
            continue
        rewriter = by_src.get(f"targets/{links[0]}.md") if len(links) == 1 else None
        if rewriter is not None and _saved_during(edits, note, rewriter):
            c["editor_race.daemon_rewrite_lost"] += 1
        else:
            c["violation.backlink_not_rewritten"] += 1
            print(f"BACKLINK {note} links {links}, final {final_name}", file=sys.stderr)
    journal = vault / ".vaultd" / "journal"
    pending = [p for p in journal.iterdir() if not (p / "committed").exists()] if journal.is_dir() else []
    c["violation.pending_journals"] = len(pending)
    c["violation.temp_files"] = len(list(vault.rglob(".vaultd-*.tmp")))
    probe = SocketClient(home)
    for rel in sorted(texts):
        r = probe.call("note.read", {"target": rel, "fresh": True, "max_bytes": 65536})
        c["checked.read_sha"] += 1
        if not r.ok or r.value["sha256"] != sha256_file(vault / rel):
            c["violation.read_sha_differs_from_file"] += 1
    probe.close()


def run(moves: int, backlinks: int, seed: int, slow: float, share: float, cli_every: int, max_seconds: float) -> dict[str, Any]:
    """One run; the report's ``bad`` sums every violation, unexpected error and dead daemon."""
    home = Home.create()
    vault = home.root / "vault"
    build(vault, backlinks)
    home.env["VAULTD_FAULTS"] = f"sleep=after-rename:{slow}"
    daemon = Daemon(home)
    setup = SocketClient(home)
    assert setup.call("vault.add", {"id": "race", "path": str(vault)}).ok
    setup.close()
    stop, edlog = home.root / "editor.stop", home.root / "editor.json"
    ed = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reliability.stress.editor_race",
            "--seed",
            str(seed),
            "--backlinks",
            str(backlinks),
            "--share",
            str(share),
            "--editor",
            str(vault),
            str(stop),
            str(edlog),
            str(max_seconds),
        ],
        cwd=REPO,
        env=home.env,
    )
    c: Counter[str] = Counter()
    started = time.monotonic()
    made = run_moves(home, vault, moves, cli_every, c)
    elapsed = time.monotonic() - started
    stop.touch()
    ed.wait(60)
    edits: list[dict[str, Any]] = json.loads(edlog.read_text())
    alive = daemon.proc.poll() is None
    if alive:
        check(home, vault, backlinks, made, edits, c)
    daemon.stop()
    violations = sum(v for k, v in c.items() if k.startswith("violation."))
    unexpected = sum(v for k, v in c.items() if k.startswith("unexpected."))
    report = {
        "moves": moves,
        "backlinks": backlinks,
        "seed": seed,
        "slow_per_rename_s": slow,
        "editor_share_on_backlinks": share,
        "wall_seconds": round(elapsed, 1),
        "editor_saves": len(edits),
        "daemon_alive": alive,
        "counts": dict(sorted(c.items())),
        "violations": violations,
        "bad": violations + unexpected + (not alive),
    }
    if report["bad"] == 0:
        home.cleanup()
    else:
        print(f"kept {home.root} for inspection", file=sys.stderr)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--backlinks", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--slow", type=float, default=0.005, help="seconds the daemon sleeps after each rename")
    ap.add_argument("--share", type=float, default=0.1, help="share of editor saves that hit a backlink")
    ap.add_argument("--cli-every", type=int, default=4, help="every Nth confirm through vaultctl (0: none)")
    ap.add_argument("--max-seconds", type=float, default=1200.0)
    ap.add_argument("--editor", nargs=4, metavar=("VAULT", "STOP", "LOG", "SECONDS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.editor:
        editor_main(
            Path(args.editor[0]), Path(args.editor[1]), Path(args.editor[2]), args.seed, args.backlinks, args.share, float(args.editor[3])
        )
        return 0
    report = run(args.moves, args.backlinks, args.seed, args.slow, args.share, args.cli_every, args.max_seconds)
    print(json.dumps(report, indent=1))
    return 0 if report["bad"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
