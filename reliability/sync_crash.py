"""Sync crash round: a sync's integration SIGKILLed at every fault point between its steps, then
restarted and checked for a torn integration.

    .venv/bin/python -m reliability.sync_crash

Two integrations, each with a teammate's commits (plain ``git``, so the tip commit says nothing of
vaultd) waiting on the shared remote: a *fast-forward* (nothing new on this machine) and a *merge
commit* (this machine's own operations, one of them on the teammate's line of a note: a conflict,
one on other lines of another note: a clean merge). For each point the integration passes (the
engine's points inside its journaled writes, the checkpoint commit's and the sync's own), a daemon
is started with ``VAULTD_FAULTS=crash=POINT``, the sync is asked for and the daemon dies there; a
daemon started again must have finished the integration whole. Right after the restart the
integration must be whole (origin's head in the branch, every side's change in the files, the
conflict kept in exactly one proposal holding this machine's version) or not there at all (the
branch where it was, none of origin's changes in the files, no proposal); a *torn* integration is
anything else, or the record of the integration left behind, anything staged in the person's
index, an uncommitted change, ``git fsck`` complaints, or a next sync that does not converge with
origin whole.

Prints one JSON object with the counts and exits 1 when any integration was torn.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability.session import Client, Died, Proc, Refused, connect_ready
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.harness import Home

FILLER = "".join(f"line {i} of the shared note\n" for i in range(12))
SEED = {
    "Shared.md": f"# Shared\n\n## From A\n\n- start\n\n{FILLER}\n## From B\n\n- start\n",
    "Team.md": "---\nstatus: draft\n---\n# Team\n\nThe plan is to ship in May.\n",
}
RECORD = ".vaultd/git/integration"

#: The fault points each integration passes, in order. A fast-forward writes three files in one
#: journaled operation, then moves the branch; a merge writes two (the third is only this machine's)
#: and makes a merge commit through vaultd's own index.
POINTS: dict[str, tuple[str, ...]] = {
    "fast-forward": (
        "after-journal",
        "after-rename@1",
        "after-rename@2",
        "before-commit",
        "after-commit",
        "sync-after-integrate",
        "sync-after-update-ref",
        "sync-after-follow",
    ),
    "merge": (
        "after-journal",
        "after-rename@1",
        "before-commit",
        "after-commit",
        "sync-after-integrate",
        "git-after-commit-tree",
        "git-after-update-ref",
        "sync-after-update-ref",
        "sync-after-follow",
    ),
}


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=dict)
    torn: dict[str, list[str]] = field(default_factory=dict)  #: integration -> what was wrong with it

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def tear(self, where: str, what: str) -> None:
        self.torn.setdefault(where, []).append(what)


@dataclass
class Integration:
    """One integration waiting on a remote: this machine's clone registered in a fresh home."""

    kind: str
    root: Path
    home: Home
    remote: Path
    repo: Path
    old: str = ""  #: this machine's head before the sync
    fetched: str = ""  #: origin's head, which the sync integrates

    @classmethod
    def prepare(cls, kind: str, root: Path) -> Integration:
        seed = gitrepo.init(root / "seed", SEED)
        remote = gitrepo.bare(root / "org.git")
        git(seed, "push", "-q", str(remote), "main")
        home = Home.create(root)
        repo = gitrepo.clone(remote, root / "mine", "Ada Lovelace")
        it = cls(kind, root, home, remote, repo)
        with it.daemon() as c:
            c.call("vault.add", {"id": "team", "path": str(repo), "kind": "org", "git": "checkpoint", "remote": str(remote)})
            if kind == "merge":
                connect_ready(home).close()
                c.call("note.patch", {"vault": "team", "target": "Team", "old": "ship in May", "new": "ship in April"})
                c.call(
                    "note.patch", {"vault": "team", "target": "Shared", "old": "## From B\n\n- start", "new": "## From B\n\n- mine, from B"}
                )
        it.old = git(repo, "rev-parse", "HEAD")
        mate = gitrepo.clone(remote, root / "mate", "Grace Hopper")
        (mate / "Team.md").write_text(SEED["Team.md"].replace("ship in May", "ship in June"))
        (mate / "Shared.md").write_text(SEED["Shared.md"].replace("## From A\n\n- start", "## From A\n\n- theirs, from A"))
        (mate / "New.md").write_text("# New\n\nWritten by the teammate.\n")
        git(mate, "add", "-A")
        git(mate, "commit", "-q", "-m", "the teammate's edits")
        git(mate, "push", "-q", "origin", "main")
        it.fetched = git(remote, "rev-parse", "main")
        return it

    def daemon(self, faults: str | None = None) -> _Running:
        return _Running(self.home, faults)

    def recovered(self, tally: Tally, where: str) -> None:
        """Start a daemon (its recovery runs at the vault's take), then check what it left."""
        with self.daemon():
            connect_ready(self.home).close()
        tally.add("recoveries")
        self.check(tally, where)

    # -- what a finished integration is --------------------------------------------------------

    def check(self, tally: Tally, where: str) -> None:
        """Whole or not at all right after the restart, and whole after the next sync."""
        repo = self.repo
        problems: list[str] = []
        if (repo / RECORD).exists():
            problems.append("the integration's record is still there")
        if staged := git(repo, "diff", "--cached", "--name-only", "HEAD"):
            problems.append(f"staged in the person's index: {staged}")
        if status := git(repo, "status", "--porcelain"):
            problems.append(f"uncommitted: {status}")
        if fsck := gitrepo.fsck(repo):
            problems.append(f"git fsck: {fsck[:200]}")
        with self.daemon() as c:
            if _ancestor(repo, self.fetched):
                tally.add("finished")
                problems += self._whole(c, "after the restart")
            elif git(repo, "rev-parse", "HEAD") == self.old:
                tally.add("undone")
                if (repo / "New.md").exists() or "- theirs, from A" in (repo / "Shared.md").read_text():
                    problems.append("the branch did not move, yet origin's changes are in the files")
                if self._proposals(c):
                    problems.append("the branch did not move, yet a proposal was made")
            else:
                problems.append("the branch is neither where it was nor on origin's head")
            try:
                c.call("vault.sync", {"vault": "team"})
            except Refused as exc:
                problems.append(f"the next sync was refused: {exc.code} {exc.error.get('message')}")
            else:
                problems += self._whole(c, "after the next sync")
        if git(repo, "rev-parse", "HEAD") != git(self.remote, "rev-parse", "main"):
            problems.append("the next sync did not converge with origin")
        for p in problems:
            tally.tear(where, p)

    def _proposals(self, c: Client) -> list[dict[str, Any]]:
        return [p for p in c.call("proposal.list", {"vault": "team"})["proposals"] if p["targets"] == ["Team.md"]]

    def _whole(self, c: Client, when: str) -> list[str]:
        """What an integration that happened leaves: every side's change, and the conflict kept."""
        repo = self.repo
        problems = []
        shared = (repo / "Shared.md").read_text()
        if "- theirs, from A" not in shared:
            problems.append(f"{when}: Shared.md lacks origin's line")
        if self.kind == "merge" and "- mine, from B" not in shared:
            problems.append(f"{when}: Shared.md lacks this machine's line")
        if not (repo / "New.md").exists():
            problems.append(f"{when}: New.md, only origin's, is missing")
        if "ship in June" not in (repo / "Team.md").read_text():
            problems.append(f"{when}: Team.md does not hold origin's version")
        team = self._proposals(c)
        if self.kind == "merge":
            if len(team) != 1:
                problems.append(f"{when}: {len(team)} proposal(s) keep the conflict in Team.md, not 1")
            else:
                shown = c.call("proposal.show", {"vault": "team", "id": team[0]["id"]})
                if "+The plan is to ship in April." not in shown["diffs"][0]["diff"]:
                    problems.append(f"{when}: the conflict's proposal does not hold this machine's version")
        elif team:
            problems.append(f"{when}: a fast-forward made a proposal")
        return problems


def _ancestor(repo: Path, commit: str) -> bool:
    proc = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", commit, "HEAD"], env=gitrepo.env(), timeout=60)
    return proc.returncode == 0


class _Running:
    """A daemon and a ready client for a ``with`` block; stopped after it."""

    def __init__(self, home: Home, faults: str | None) -> None:
        self.proc = Proc(home, faults)
        if not self.proc.listening():
            raise RuntimeError("vaultd exited before listening:\n" + (home.root / "daemon.out").read_text()[-2000:])
        self.client = Client(home.socket)

    def __enter__(self) -> Client:
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.proc.stop()


def one(kind: str, point: str, root: Path, tally: Tally) -> None:
    """Kill one integration at ``point``, restart, check."""
    where = f"{kind} at {point}"
    it = Integration.prepare(kind, root)
    proc = Proc(it.home, f"crash={point}")
    try:
        if not proc.listening():
            tally.tear(where, "the daemon exited before listening")
            return
        c = connect_ready(it.home)
        try:
            c.call("vault.sync", {"vault": "team"})
        except Died:
            pass
        finally:
            c.close()
        proc.exited_within(10.0)
        if proc.alive():
            tally.add("point_not_reached")
            tally.tear(where, "the point was not reached: the sync finished")
            proc.kill()
            return
        proc.wait()
        if not proc.killed:
            tally.tear(where, f"the daemon exited with {proc.proc.returncode}, not SIGKILL")
            return
        tally.add("kills")
        tally.add(f"kill:{kind}")
    finally:
        if proc.alive():
            proc.kill()
    it.recovered(tally, where)


def run(kinds: tuple[str, ...] = tuple(POINTS), points: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """Every (integration, point) pair once, each in its own temporary folder; the counted result."""
    tally = Tally()
    started = time.monotonic()
    for kind in kinds:
        for point in (points or POINTS)[kind]:
            root = Path(tempfile.mkdtemp(prefix="vs"))
            try:
                one(kind, point, root, tally)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            tally.add("integrations")
    return {
        "integrations": tally.counts.get("integrations", 0),
        "kills": tally.counts.get("kills", 0),
        "recoveries": tally.counts.get("recoveries", 0),
        "torn": len(tally.torn),
        "torn_samples": [f"{where}: {what}" for where, found in tally.torn.items() for what in found][:30],
        "counts": tally.counts,
        "seconds": round(time.monotonic() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reliability.sync_crash", description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=sorted(POINTS), action="append", help="only this integration (repeatable)")
    args = ap.parse_args(argv)
    report = run(tuple(args.kind) if args.kind else tuple(POINTS))
    json.dump(report, sys.stdout, indent=2, sort_keys=True)
    print()
    return 1 if report["torn"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
