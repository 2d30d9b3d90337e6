"""Hostile repositories: a vault folder and a remote are untrusted input.

    .venv/bin/python -m reliability.stress.hostile_repos --cases 200 --seed 1 [--huge-mib 1024]

Each case is drawn (seeded) from four kinds and run against a real daemon on its socket, with a
fresh bare origin, the person's clone registered as a vault (``git: snapshot``, the remote) and a
rogue clone that pushes what the case needs:

- **config**: the clone's ``.git/config`` names a command, leaving a marker file when it runs, for
  a drawn subset of every command-valued key (``tests/support/hostile_git.command_keys``: upload
  and receive programs, ssh command, fsmonitor, pager, editor, askpass, proxy, alternate refs,
  external diff, credential helper, gpg, filters' clean, smudge and process, textconv, diff and
  merge drivers, ...), hooks for every hook name, attributes naming the drivers, an include of
  another config file. The vault is registered, hand edits of the same size snapshotted (git must
  compare contents), an operation checkpointed, the vault synced (in some cases first with a
  fetch refspec that maps origin onto a branch of the person's: refused, the branch unmoved), a
  history read and doctor asked.
- **attributes**: a filter with a drawn name (letters, digits, ``=``, ``.``, ``-``, ``_``) defined in
  the config or an included file, named by the work tree's ``.gitattributes``, a sub-folder's, or
  ``info/attributes``; same-size hand edits snapshotted.
- **tree**: origin gets a commit adding drawn refused paths (``.git`` in any case or spelling git
  knows, ``..``, ``.``, case and Unicode twins of the person's files and folders, ``.trash/``,
  ``.vaultd/``, names the write rules refuse, secret-shaped names) among good ones.
- **blob**: origin gets a note over the note bound (by 1 to 4096 bytes), an attachment over the
  file bound, or (``--huge-mib``) two huge notes of one byte each.

Counted and checked: commands run by git (markers: must be 0), R09 reported for every hostile
config, every tree and blob case refused with R08 (POLICY or LIMIT) and the branch, the person's
index and every file exactly as before, the good cases' operations applied, no INTERNAL reply,
the daemon alive, and its peak resident memory (VmHWM) growth across the blob cases. The fast
slice is ``tests/reliability/test_hostile_repos.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from protocol.limits import MAX_NOTE_BYTES
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home, RawClient
from tests.support.hostile_git import big_blob, clear, command_keys, make_hostile, push_tree, ran, state, tree_with
from vaultd.git.objects import MAX_BLOB_BYTES

SEED = {"note.md": "# Note\n\nfirst\n", "Plan.md": "# Plan\n\nship in May\n", "Café.md": "# Café\n", "Team/roster.md": "# Roster\n"}
KINDS = ("config", "attributes", "tree", "blob")
GIT_REFUSED = [
    ".git/config",
    ".GIT/config",
    ".Git/hooks/pre-commit",
    ".gIt/x",
    ".git./x",
    ".git. ./x",
    ".git /x",
    "git~1/config",
    "GIT~1/x",
    ".git::$INDEX_ALLOCATION/x",
    ".g\u200cit/x",
    "\ufeff.git/x",
    ".gi\u200et/x",
    "sub/.git/config",
    "sub/.GIT/x",
    "../escape.md",
    "sub/../x.md",
    "./x.md",
]
VAULTD_REFUSED = [
    ".trash/x.md",
    ".Trash/x.md",
    ".vaultd/journal/x",
    ".VAULTD/x",
    "NOTE.md",
    "note.MD/x.md",
    "plan.md",
    "team/x.md",
    "TEAM/roster.md",
    "Cafe\u0301.md",
    "trail./x.md",
    "sp /x.md",
    "ctl\x01.md",
    "keys/ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8.md",
    ".vaultd-x.tmp",
]
FILTER_NAME = "abcXYZ019=._-"


class RepoTally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []

    def fail(self, what: str) -> None:
        self.counts["failures"] += 1
        if len(self.failures) < 20:
            self.failures.append(what)


def _hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


class Case:
    """One case's repositories and vault."""

    def __init__(self, home: Home, folder: Path, index: int, tally: RepoTally) -> None:
        self.tally = tally
        self.id = f"hr{index}"
        seed = gitrepo.init(folder / "seed", SEED)
        self.origin = gitrepo.bare(folder / "org.git")
        git(seed, "push", "-q", str(self.origin), "main")
        self.repo = gitrepo.clone(self.origin, folder / "victim")
        self.rogue = gitrepo.clone(self.origin, folder / "rogue", "Mallory Rogue")
        self.marks = folder / "marks"
        self.marks.mkdir()
        self.c = RawClient(home.socket, timeout=120)
        RawClient.open_clients.remove(self.c)  # owned here, not by a test's fixture
        self.c.hello()

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self.c.request(method, params)
        if "error" in reply and reply["error"].get("data", {}).get("code") == "INTERNAL":
            self.tally.counts["replies.internal"] += 1
            self.tally.fail(f"{self.id}: {method} answered INTERNAL: {reply['error']['message'][:300]}")
        return reply

    def ok(self, method: str, params: dict[str, Any], what: str) -> dict[str, Any] | None:
        reply = self.ask(method, params)
        if "result" not in reply:
            self.tally.fail(f"{self.id}: {what}: {method} refused: {json.dumps(reply.get('error'))[:300]}")
            return None
        self.tally.counts[f"applied.{what}"] += 1
        result: dict[str, Any] = reply["result"]
        return result

    def check_marks(self, when: str) -> None:
        found = ran(self.marks)
        self.tally.counts["checks.code_run"] += 1
        if found:
            self.tally.counts["code_executed"] += len(found)
            self.tally.fail(f"{self.id}: {when} ran {found}")
        clear(self.marks)

    def add(self) -> dict[str, Any] | None:
        return self.ok(
            "vault.add",
            {"id": self.id, "path": str(self.repo), "git": "snapshot", "remote": str(self.origin), "snapshot_quiet_s": 1},
            "vault.add",
        )

    def same_size_edits(self) -> None:
        for p in sorted(self.repo.rglob("*")):
            rel = p.relative_to(self.repo).as_posix()
            if p.is_file() and not rel.startswith((".git/", ".vaultd/")) and not rel.endswith(".gitattributes") and rel != "log.md":
                p.write_bytes(p.read_bytes().swapcase())
                os.utime(p, (1_600_000_000, 1_600_000_000))

    def remove(self) -> None:
        preview = self.ask("vault.remove", {"id": self.id})
        if "result" in preview:
            self.ask("vault.remove", {"id": self.id, "confirm": True, "fingerprint": preview["result"]["fingerprint"]})
        self.c.close()


def config_case(case: Case, rng: random.Random) -> None:
    keys = command_keys(case.marks)
    chosen = dict(rng.sample(sorted(keys.items()), rng.randint(1, len(keys))))
    if rng.random() < 0.5:  # always give the attributes' filters something to run
        chosen.update({k: v for k, v in keys.items() if k.startswith("filter.evilclean.")})
    make_hostile(case.repo, case.marks, chosen, hooks=rng.random() < 0.7, include=rng.random() < 0.7)
    (case.repo / "app.log").write_text("first\n")
    (case.repo / "data.txt").write_text("plain\n")
    info = case.add()
    case.check_marks("vault.add")
    if info is not None:
        if [w["code"] for w in info.get("warnings", [])] == ["R09"]:
            case.tally.counts["reported.R09"] += 1
        else:
            case.tally.fail(f"{case.id}: vault.add did not report the hostile config: {info.get('warnings')}")
    case.same_size_edits()
    case.ok("vault.snapshot", {"vault": case.id}, "snapshot")
    case.check_marks("a snapshot")
    case.ok("note.create", {"vault": case.id, "path": f"new-{rng.randrange(10**6)}", "body": "# New\n"}, "checkpoint")
    case.check_marks("a checkpoint")
    if rng.random() < 0.3:  # a fetch refspec that maps origin onto a branch of the person's: refused, nothing moves
        git(case.repo, "branch", "keep")
        kept = git(case.repo, "rev-parse", "keep")
        git(case.repo, "config", "--replace-all", "remote.origin.fetch", "+refs/heads/main:refs/heads/keep")
        clear(case.marks)  # the test's own git ran the hooks
        reply = case.ask("vault.sync", {"vault": case.id})
        if reply.get("error", {}).get("data", {}).get("code") == "POLICY":
            case.tally.counts["refused.fetch_refspec"] += 1
        else:
            case.tally.fail(f"{case.id}: a fetch refspec onto refs/heads/keep was not refused: {json.dumps(reply)[:300]}")
        if git(case.repo, "rev-parse", "keep") != kept:
            case.tally.fail(f"{case.id}: the person's branch moved")
        git(case.repo, "config", "--replace-all", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
        case.check_marks("a refused sync")
    synced = case.ok("vault.sync", {"vault": case.id}, "sync")
    case.check_marks("a sync")
    if synced is not None and git(case.origin, "rev-parse", "main") != synced["head"]:
        case.tally.fail(f"{case.id}: the sync did not reach origin")
    case.ok("note.history", {"vault": case.id, "target": "note"}, "history")
    case.ok("doctor", {"vault": case.id}, "doctor")
    case.check_marks("a history read or doctor")


def attributes_case(case: Case, rng: random.Random) -> None:
    name = "".join(rng.choice(FILTER_NAME) for _ in range(rng.randint(1, 8)))
    cmd = f"touch {case.marks}/filter-{len(name)}; cat"
    if rng.random() < 0.5:
        git(case.repo, "config", f"filter.{name}.clean", cmd)
        git(case.repo, "config", f"filter.{name}.smudge", cmd)
    else:
        extra = case.repo.parent / "extra.cfg"
        extra.write_text(f'[filter "{name}"]\n\tclean = {cmd}\n\tprocess = {cmd}\n')
        git(case.repo, "config", "include.path", str(extra))
    where = rng.choice([case.repo / ".gitattributes", case.repo / ".git" / "info" / "attributes", case.repo / "Team" / ".gitattributes"])
    where.parent.mkdir(exist_ok=True)
    where.write_text(f"* filter={name}\n")
    case.tally.counts[f"attributes.{where.relative_to(case.repo).as_posix()}"] += 1
    case.add()
    case.check_marks("vault.add")
    case.same_size_edits()
    snap = case.ok("vault.snapshot", {"vault": case.id}, "snapshot")
    case.check_marks("a snapshot")
    if snap is not None and not snap["paths"]:
        case.tally.fail(f"{case.id}: the same-size edits were not committed")


def _refused(case: Case, before: dict[str, str], what: str) -> None:
    reply = case.ask("vault.sync", {"vault": case.id})
    data = reply.get("error", {}).get("data", {})
    issues = [i["code"] for i in data.get("issues", [])]
    if data.get("code") in ("POLICY", "LIMIT") and issues[:1] == ["R08"]:
        case.tally.counts[f"refused.{data['code']}"] += 1
    else:
        case.tally.fail(f"{case.id}: {what} was not refused with R08: {json.dumps(reply)[:300]}")
    case.tally.counts["checks.intact"] += 1
    if state(case.repo) != before:
        case.tally.counts["not_intact"] += 1
        case.tally.fail(f"{case.id}: {what}: the branch, the index or the files changed")


def tree_case(case: Case, rng: random.Random) -> None:
    case.add()
    before = state(case.repo)
    bad = rng.sample(GIT_REFUSED + VAULTD_REFUSED, rng.randint(1, 3))
    files: dict[str, bytes] = dict.fromkeys(bad, b"# hostile\n")
    files.update({f"good-{i}.md": b"# good\n" for i in range(rng.randint(0, 3))})
    for p in bad:
        case.tally.counts["tree.paths"] += 1
        case.tally.counts["tree.git_refused" if p in GIT_REFUSED else "tree.vaultd_refused"] += 1
    push_tree(case.rogue, tree_with(case.rogue, "HEAD", files))
    _refused(case, before, f"a tree with {bad!r}")


def blob_case(case: Case, rng: random.Random, daemon: Daemon, huge_mib: int, heavy: bool) -> None:
    case.add()
    before = state(case.repo)
    choice = rng.choice(["note", "note", *(["attachment"] if heavy else []), *(["huge"] if huge_mib else [])])
    if huge_mib and not case.tally.counts["blob.huge"]:
        choice = "huge"  # the first blob case of a run with --huge-mib is always the huge one
    tree = tree_with(case.rogue, "HEAD", {})
    entries = [e for e in git(case.rogue, "ls-tree", "-z", tree).split("\0") if e]
    if choice == "note":
        over = rng.randint(1, 4096)
        entries.append(f"100644 blob {big_blob(case.rogue, MAX_NOTE_BYTES + over)}\tover-{over}.md")
    elif choice == "attachment":
        entries.append(f"100644 blob {big_blob(case.rogue, MAX_BLOB_BYTES + 1)}\tbig.pdf")
    else:
        for n in (1, 2):
            entries.append(f"100644 blob {big_blob(case.rogue, huge_mib << 20, str(n).encode())}\thuge-{n}.md")
    case.tally.counts[f"blob.{choice}"] += 1
    push_tree(case.rogue, git(case.rogue, "mktree", "-z", input="\0".join(entries) + "\0"))
    peak = _hwm_kib(daemon.pid)
    _refused(case, before, f"a {choice} over its bound")
    grown = _hwm_kib(daemon.pid) - peak
    case.tally.counts["blob.hwm_growth_max_kib"] = max(case.tally.counts["blob.hwm_growth_max_kib"], grown)


def run(
    home: Home, daemon: Daemon, cases: int, seed: int, huge_mib: int = 0, kinds: tuple[str, ...] = KINDS, *, heavy: bool = True
) -> RepoTally:
    """``cases`` drawn cases against ``daemon``; the tally of what happened. ``heavy`` draws
    attachments over the 64 MiB file bound too (a few seconds each to make)."""
    rng = random.Random(seed)
    tally = RepoTally()
    for i in range(cases):
        kind = kinds[i % len(kinds)] if i < len(kinds) else rng.choice(kinds)
        began = time.monotonic()
        folder = Path(tempfile.mkdtemp(prefix=f"hr{i}-", dir=home.root))
        case = Case(home, folder, i, tally)
        try:
            tally.counts[f"cases.{kind}"] += 1
            if kind == "config":
                config_case(case, rng)
            elif kind == "attributes":
                attributes_case(case, rng)
            elif kind == "tree":
                tree_case(case, rng)
            else:
                blob_case(case, rng, daemon, huge_mib, heavy)
        finally:
            case.remove()
            shutil.rmtree(folder, ignore_errors=True)
        tally.counts["cases"] += 1
        tally.counts[f"seconds.{kind}"] += round(time.monotonic() - began)
    c = RawClient(home.socket)
    RawClient.open_clients.remove(c)
    try:
        c.hello()
        c.call("daemon.status")
        tally.counts["daemon.alive"] = 1
    finally:
        c.close()
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--huge-mib", type=int, default=0, help="also draw two notes of this many MiB of one byte")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the kinds of case to draw, comma-separated")
    args = parser.parse_args()
    home = Home.create()
    daemon = Daemon(home)
    started = time.monotonic()
    try:
        tally = run(home, daemon, args.cases, args.seed, args.huge_mib, tuple(args.kinds.split(",")))
    finally:
        daemon.stop()
        home.cleanup()
    report = {"seconds": round(time.monotonic() - started, 1), **dict(sorted(tally.counts.items())), "failure_samples": tally.failures}
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0 if not tally.failures and tally.counts["code_executed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
