"""The invariants every reliability driver checks after a crash and a restart.

- the vault's files equal the expected model (acknowledged operations present, unacknowledged ones
  whole or absent, every other file byte-identical);
- no temp file and no uncommitted journal is left after recovery;
- every note parses (no N01/N06 frontmatter issue that was not there before);
- ``log.md`` only grew, by whole lines;
- the index equals the disk and a from-scratch rebuild by a fresh daemon in a fresh home;
- recovery run twice equals once.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability.session import Client, Proc, connect_ready
from tests.support.harness import Home
from vaultd.vault import frontmatter

LOG = "log.md"
STATE_DIR = ".vaultd"  #: the vault's state folder


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def disk_state(vault: Path) -> dict[str, str]:
    """sha256 of every file below ``vault`` except the vault's state folder and ``log.md``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(vault):
        rel_dir = Path(dirpath).relative_to(vault).as_posix()
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != STATE_DIR]
            rel_dir = ""
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if rel == LOG:
                continue
            p = Path(dirpath) / name
            if p.is_symlink():
                continue
            out[rel] = sha(p.read_bytes())
    return out


def leftovers(vault: Path) -> list[str]:
    """Temp files anywhere and journals that are not committed."""
    found = [str(p.relative_to(vault)) for p in vault.rglob(".vaultd-*.tmp")]
    journal = vault / STATE_DIR / "journal"
    if journal.is_dir():
        found += [
            f"journal/{p.name}" for p in journal.iterdir() if p.is_dir() and (p.name.endswith(".tmp") or not (p / "committed").exists())
        ]
    return found


def parse_issues(vault: Path) -> set[str]:
    """``path:code`` for every note whose frontmatter has an N01 or N06 issue."""
    bad: set[str] = set()
    for p in vault.rglob("*.md"):
        rel = p.relative_to(vault).as_posix()
        if rel.startswith(STATE_DIR + "/"):
            continue
        text = p.read_bytes().decode("utf-8", "replace")
        for issue in frontmatter.parse(text).issues:
            if issue.code in ("N01", "N06"):
                bad.add(f"{rel}:{issue.code}")
    return bad


def index_view(c: Client) -> dict[str, Any]:
    """What the daemon's index says: every note, its title and sha, and the vault's counts."""
    notes: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 500, "fresh": True}
        if cursor:
            params["cursor"] = cursor
        page = c.call("note.list", params)
        notes += page["notes"]
        cursor = page["next_cursor"]
        if not cursor:
            break
    stats = c.call("vault.stats", {"fresh": True})
    return {
        "notes": sorted((n["path"], n["title"], n["size"], tuple(n["tags"])) for n in notes),
        "shas": {n["path"]: c.call("note.read", {"target": n["path"], "max_bytes": 1})["sha256"] for n in notes},
        "stats": {k: v for k, v in stats.items() if k != "vault"},
    }


def rebuild_view(vault: Path) -> dict[str, Any]:
    """The index a fresh daemon in a fresh home builds from the same folder (the vault must be free)."""
    fresh = Home.create()
    try:
        p = Proc(fresh)
        try:
            if not p.listening():
                raise RuntimeError("the fresh daemon exited before listening")
            c = Client(fresh.socket)
            c.call("vault.add", {"id": "v", "path": str(vault)})
            c.close()
            c = connect_ready(fresh)
            view = index_view(c)
            c.close()
        finally:
            p.stop()
        return view
    finally:
        fresh.cleanup()


@dataclass
class Tally:
    """Counted results: what was tried and every violation found, by kind."""

    counts: dict[str, int] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def violation(self, kind: str, detail: str) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        if len(self.violations) < 200:
            self.violations.append(f"{kind}: {detail}")

    def report(self) -> dict[str, Any]:
        return {
            **self.counts,
            "violations": sum(self.by_kind.values()),
            "violations_by_kind": self.by_kind,
            "violation_samples": self.violations[:20],
        }


def compare_state(tally: Tally, model: dict[str, str], disk: dict[str, str], where: str) -> None:
    """Every file equals the model: nothing lost, nothing stray, nothing outside an operation changed."""
    for path in sorted(set(model) | set(disk)):
        if model.get(path) != disk.get(path):
            what = "missing" if path not in disk else "unexpected" if path not in model else "differs"
            tally.violation("file-state", f"{where}: {path} {what}")
    if model != disk:  # carry on from what is there, so one fault counts once
        model.clear()
        model.update(disk)


def check_log(tally: Tally, vault: Path, before: bytes, where: str) -> bytes:
    """``log.md`` keeps every byte it had and ends with a whole line; returns its bytes now."""
    try:
        now = (vault / LOG).read_bytes()
    except FileNotFoundError:
        now = b""
    if not now.startswith(before):
        tally.violation("log-rewritten", f"{where}: log.md lost or changed earlier lines")
    if now and not now.endswith(b"\n"):
        tally.violation("log-torn", f"{where}: log.md ends with an incomplete line")
    return now


def check_index(tally: Tally, view: dict[str, Any], disk: dict[str, str], where: str) -> None:
    """Every indexed note's sha is the file's sha on disk."""
    for path, indexed in view["shas"].items():
        if path == LOG:
            continue
        if disk.get(path) != indexed:
            tally.violation("index-stale", f"{where}: {path} indexed sha differs from the file")
