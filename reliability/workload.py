"""Randomized operation streams and the expected-content model they maintain.

Each operation is planned first (``dry_run`` for one-step methods, the preview for two-step ones),
so when the daemon dies before answering the driver still knows every file the operation would
have written and with which sha256. An acknowledged operation updates the model from its receipt;
an unacknowledged one is resolved after recovery: it must be wholly applied or wholly absent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reliability.checks import LOG, Tally
from reliability.session import Client, Died, Refused

if TYPE_CHECKING:
    import random

FOLDERS = ("w", "w/a", "w/b/c", "wx")
_MARK = re.compile(r"m(\d+)v(\d+)")


@dataclass
class Pending:
    """An operation sent but not acknowledged: its planned changes ``(path, before, after)``."""

    method: str
    changes: list[tuple[str, str | None, str | None]]


class Workload:
    """Generates valid-looking operations on the current model and tracks what must be on disk."""

    def __init__(self, rng: random.Random, model: dict[str, str], tally: Tally) -> None:
        self.rng = rng
        self.model = model  #: path -> sha256 of every file the vault must hold (log.md aside)
        self.tally = tally
        self.k = 0
        self.pending: Pending | None = None

    # -- choosing -----------------------------------------------------------------------------
    def _notes(self) -> list[str]:
        return sorted(p for p in self.model if p.endswith(".md") and p != LOG and not p.startswith(".trash/"))

    def _ours(self) -> list[str]:
        return [p for p in self._notes() if p.split("/")[0] in ("w", "wx")]

    def _pick(self, pool: list[str], n: int = 1) -> list[str]:
        return self.rng.sample(pool, n) if len(pool) >= n else []

    def next_op(self, c: Client) -> tuple[str, dict[str, Any], bool] | None:
        self.k += 1
        k, rng = self.k, self.rng
        ours, notes = self._ours(), self._notes()
        kind = (
            "create"
            if len(ours) < 4
            else rng.choices(
                ["create", "patch", "append", "set_frontmatter", "link", "move", "delete", "merge"], weights=[3, 2, 2, 2, 2, 2, 1, 1]
            )[0]
        )
        if kind == "create":
            target = rng.choice(notes) if notes else None
            link = f"\n\nSee [[{target[:-3]}]].\n" if target else "\n"
            fm: dict[str, Any] = {"tags": ["rel", f"t{k % 5}"]} if rng.random() < 0.7 else {}
            return (
                "note.create",
                {"path": f"{rng.choice(FOLDERS)}/n{k}", "frontmatter": fm, "body": f"# Note {k}\n\nmarker m{k}v0{link}"},
                False,
            )
        if kind == "patch":
            [target] = self._pick(ours)
            body = c.call("note.read", {"target": target, "max_bytes": 65536})["body"]
            m = _MARK.search(body)
            if m is None:
                return self._append(rng.choice(notes), k)
            return "note.patch", {"target": target, "old": m.group(0), "new": f"m{m.group(1)}v{int(m.group(2)) + 1}"}, False
        if kind == "append":
            return self._append(rng.choice(notes), k)
        if kind == "set_frontmatter":
            target = rng.choice(ours if rng.random() < 0.8 else notes)
            if rng.random() < 0.2:
                return "note.set_frontmatter", {"target": target, "unset": ["counter"]}, False
            return (
                "note.set_frontmatter",
                {"target": target, "set": {"status": rng.choice(["draft", "active", "done"]), "counter": k}},
                False,
            )
        if kind == "link":
            pair = self._pick(notes, 2)
            return "note.link", {"source": pair[0], "target": pair[1]}, False
        if kind == "move":
            [target] = self._pick(ours)
            name = target.rpartition("/")[2][:-3] if rng.random() < 0.4 else f"n{k}"
            folder = rng.choice(FOLDERS)
            if f"{folder}/{name}.md" == target:
                folder = "wx" if folder != "wx" else "w"
            return "note.move", {"target": target, "to": f"{folder}/{name}"}, True
        if kind == "delete":
            [target] = self._pick(ours)
            return "note.delete", {"target": target, "leave_broken_links": True}, True
        pair = self._pick(ours, 2)
        return "note.merge", {"keep": pair[0], "absorb": pair[1]}, True

    def _append(self, target: str, k: int) -> tuple[str, dict[str, Any], bool]:
        section = self.rng.choice(["Log", "Notes", f"Part {k % 3}"])
        return "note.append", {"target": target, "section": section, "markdown": f"- entry {k}"}, False

    # -- running ------------------------------------------------------------------------------
    def step(self, c: Client) -> None:
        """Plan and apply one operation; raises :class:`Died` when the daemon goes away."""
        self.pending = None
        try:
            op = self.next_op(c)
        except Refused:
            self.tally.add("refused")
            return
        if op is None:
            return
        method, params, two_step = op
        try:
            planned = c.call(method, {**params, "dry_run": True} if not two_step else params)
        except Refused as exc:
            self.tally.add("refused")
            self.tally.add(f"refused:{exc.code}")
            return
        changes = [(ch["path"], ch["before_sha"], ch["after_sha"]) for ch in planned["changes"]]
        if not changes:
            return
        if two_step:
            params = {**params, "confirm": True, "fingerprint": planned["fingerprint"]}
        self.pending = Pending(method, changes)
        self.tally.add("ops")
        self.tally.add(f"op:{method}")
        try:
            receipt = c.call(method, params)
        except Refused as exc:
            self.pending = None
            self.tally.add("refused")
            self.tally.add(f"refused:{exc.code}")
            return
        except Died:
            self.tally.add("unacknowledged")
            raise
        self.pending = None
        self.tally.add("acknowledged")
        for ch in receipt["changes"]:
            self._set(ch["path"], ch["after_sha"])

    def _set(self, path: str, after: str | None) -> None:
        if after is None:
            self.model.pop(path, None)
        else:
            self.model[path] = after

    def resolve(self, disk: dict[str, str], where: str) -> None:
        """After recovery: the unacknowledged operation is wholly applied or wholly absent."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        absent = all(disk.get(p) == self.model.get(p) for p, _, _ in pending.changes)
        applied = all(disk.get(p) == after for p, _, after in pending.changes)
        if applied and not absent:
            self.tally.add("unacknowledged_applied")
            for p, _, after in pending.changes:
                self._set(p, after)
        elif absent:
            self.tally.add("unacknowledged_absent")
        else:
            torn = [p for p, _, after in pending.changes if disk.get(p) not in (self.model.get(p), after)]
            half = [p for p, _, after in pending.changes if disk.get(p) == after and self.model.get(p) != after]
            self.tally.violation("torn-operation", f"{where}: {pending.method} partly applied (applied: {half}, neither: {torn})")
            for p, _, _ in pending.changes:  # carry on from what is there, so one fault counts once
                if p in disk:
                    self.model[p] = disk[p]
                else:
                    self.model.pop(p, None)
