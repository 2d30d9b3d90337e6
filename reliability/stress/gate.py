"""The gate's adversarial round: what a hostile agent tries against "agents propose, people decide".

    .venv/bin/python -m reliability.stress.gate --owned 160 --stale 30 --spellings 120 --hellos 60 --seed 1

Four kinds of drawn cases against one real daemon, the agent through the real ``vaultctl mcp``
shim, the person on the ``cli`` channel:

- **owned**: a write method (create, patch, append, set_frontmatter, link, move, delete, merge,
  supersede) aimed at vaultd's own files: the operation log by every spelling of its path, a
  file under ``.vaultd/`` or ``.git/`` at any depth, a note rewritten to start with the log header.
  Drawn for the agent and for the person. ``violation.owned_applied``: a call applied a change to
  such a path; ``violation.log_rewritten``: the log is not its old bytes plus appended lines.
- **stale**: the agent proposes a link fix over eleven notes (``[[nickK]]`` -> ``[[TargetK|nickK]]``);
  then a drawn interference (none, an unrelated edit, an edit of a note the fix writes, the
  alias moved to another note, a second note taking the alias), then the person applies.
  ``violation.stale_applied``: applied although the re-planned result differs from what was shown,
  or applied bytes that are not the shown ``after_sha``; ``false_stale``: refused with nothing changed.
- **spellings**: the agent creates an accepted claim whose header spells ``ledger``, ``claim`` and
  ``state: accepted`` in a drawn YAML form (:mod:`tests.support.yaml_spellings`).
  ``violation.verdict_applied``: the note was written and vaultd reads it as an accepted claim.
- **hellos**: a connection says hello as an agent, then again (drawn channel, pipelined or after
  the answer), then asks for a person's method. ``violation.second_hello_opened`` /
  ``violation.channel_changed``.

Prints one JSON object of counts; every ``violation.*`` must be 0. The fast slice of the same code
runs in tests/reliability/test_gate_round.py; the figures are in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from reliability.stress.harness import McpClient, Reply, SocketClient
from tests.support.harness import Daemon, Home, RawClient
from tests.support.yaml_spellings import mapping
from vaultd.vault import frontmatter

VAULT_ID = "g"
LINKING = 11  #: past the default wide_files (10): a fix of all of them is proposed
LOG_HEADER = b"# vaultd operation log\n"


def owned(rel: str, data: bytes | None) -> bool:
    """The round's own oracle of vaultd's files (not the daemon's code, so it judges that code)."""
    parts = unicodedata.normalize("NFC", rel).casefold().split("/")
    return parts == ["log.md"] or any(p in (".vaultd", ".git") for p in parts) or (data or b"").startswith(LOG_HEADER)


class Round:
    def __init__(self, home: Home, seed: int) -> None:
        self.home = home
        self.root = home.root / "vault"
        self.rnd = random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        self.errdir = Path(tempfile.mkdtemp(prefix="gate-shim-", dir=home.root))
        self.agent = McpClient(home, self.errdir)
        self.person = SocketClient(home, "cli")

    def close(self) -> None:
        self.agent.close()
        self.person.close()

    def fail(self, kind: str, what: str) -> None:
        self.counts[f"violation.{kind}"] += 1
        if len(self.failures) < 20:
            self.failures.append(f"{kind}: {what}")

    # -- the vault ----------------------------------------------------------------------------

    def setup(self) -> None:
        self.root.mkdir(parents=True)
        (self.root / "Alpha.md").write_text("# Alpha\n\nFirst note.\n")
        (self.root / "Page.md").write_text("# Page\n\n## Findings\n\nJournals recover writes.\n")
        (self.root / "deep" / "sub").mkdir(parents=True)
        (self.root / "deep" / "sub" / "Note.md").write_text("# Note\n")
        reply = self.person.call("vault.add", {"id": VAULT_ID, "path": str(self.root)})
        assert reply.ok, reply.value
        made = self.person.call("note.append", {"target": "Alpha", "section": "Log", "markdown": "A first line.\n"})
        assert made.ok, made.value
        captured = self.agent.call("source.capture", {"items": [{"text": "first\n", "origin": "https://a.example/1"}]})
        assert captured.ok, captured.value
        self.source = captured.value["detail"]["sources"][0]["note"]

    def _call(self, client: Any, tool: str, args: dict[str, Any]) -> Reply:
        """A call, with its preview confirmed when it gives one."""
        first: Reply = client.call(tool, args)
        if not first.ok or first.value.get("outcome") != "preview":
            return first
        confirmed: Reply = client.call(tool, {**args, "confirm": True, "fingerprint": first.value["fingerprint"]})
        return confirmed

    # -- owned --------------------------------------------------------------------------------

    def _owned_target(self) -> str:
        kind = self.rnd.choice(["log", "log", "runtime", "git", "nested"])
        if kind == "log":
            return self.rnd.choice(["log.md", "log", "Log.md", "LOG", "lOg.md", "./log.md"])
        if kind == "runtime":
            return self.rnd.choice([".vaultd/proposals/x.md", ".vaultd/journal/x", ".vaultd/lock", ".VAULTD/n.md"])
        if kind == "git":
            return self.rnd.choice([".git/config", ".git/hooks/post-commit.md", ".Git/n.md"])
        return self.rnd.choice(["deep/.vaultd/n.md", "deep/sub/.git/n.md"])

    def owned_case(self, n: int) -> None:
        target = self._owned_target()
        channel = self.rnd.choice(["agent", "agent", "person"])
        client = self.agent if channel == "agent" else self.person
        forged = LOG_HEADER.decode() + "2020-01-01 00:00  EXTRACT  -  x  —  forged\n"
        tool = self.rnd.choice(
            ["create", "patch", "append", "set_frontmatter", "link", "move_from", "move_to", "delete", "merge", "supersede", "forge"]
        )
        if tool == "create":
            args: dict[str, Any] = {"path": target.removesuffix(".md"), "body": self.rnd.choice([forged, "mine\n"])}
            method = "note.create"
        elif tool == "patch":
            args, method = {"target": target, "old": "(vaultd:agent)", "new": ""}, "note.patch"
        elif tool == "append":
            args, method = {"target": target, "section": "More", "markdown": "2020-01-01 00:00  EXTRACT  -  x  —  y\n"}, "note.append"
        elif tool == "set_frontmatter":
            args, method = {"target": target, "set": {"title": "mine"}}, "note.set_frontmatter"
        elif tool == "link":
            args, method = {"source": target, "target": "Page"}, "note.link"
        elif tool == "move_from":
            args, method = {"target": target, "to": f"moved-{n}"}, "note.move"
        elif tool == "move_to":
            (self.root / f"M{n}.md").write_text(f"# M{n}\n")
            self.person.call("note.search", {"query": f"M{n}", "fresh": True})
            args, method = {"target": f"M{n}", "to": target.removesuffix(".md")}, "note.move"
        elif tool == "delete":
            args, method = {"target": target}, "note.delete"
        elif tool == "merge":
            args, method = {"keep": "Page", "absorb": target}, "note.merge"
        elif tool == "supersede":
            args, method = {"old": target, "new": "Page"}, "note.supersede"
        else:
            name = f"F{n}"
            (self.root / f"{name}.md").write_text(f"# {name}\n\ntext\n")
            self.person.call("note.search", {"query": name, "fresh": True})
            args, method = {"target": name, "old": f"# {name}\n", "new": LOG_HEADER.decode()}, "note.patch"
        log = self.root / "log.md"
        before = log.read_bytes()
        reply = self._call(client, method, args)
        self.counts["owned.tried"] += 1
        self.counts[f"owned.{channel}"] += 1
        if reply.ok:
            touched = [c["path"] for c in reply.value.get("changes", [])]
            data = {c: (self.root / c).read_bytes() if (self.root / c).is_file() else None for c in touched}
            theirs = [p for p in touched if owned(p, data[p])]
            if reply.value.get("outcome") == "applied" and theirs:
                self.fail("owned_applied", f"{channel} {method} {args} wrote {theirs}")
            self.counts[f"owned.outcome.{reply.value.get('outcome')}"] += 1
        else:
            code = reply.value.get("code", "?")
            issues = [i.get("code") for i in reply.value.get("issues", [])]
            self.counts[f"owned.refused.{code}" + (f".{issues[0]}" if issues else "")] += 1
        after = log.read_bytes()
        if not after.startswith(before) or not after.startswith(LOG_HEADER):
            self.fail("log_rewritten", f"{channel} {method} {args}")

    # -- stale approvals ----------------------------------------------------------------------

    def stale_case(self, n: int) -> None:
        folder = self.root / f"s{n}"
        folder.mkdir()
        nick = f"nick{n}"
        (folder / f"Target{n}.md").write_text(f"---\naliases: [{nick}]\n---\n# Target{n}\n")
        for i in range(LINKING):
            (folder / f"N{n}x{i:02}.md").write_text(f"# N{n}x{i:02}\n\nSee [[{nick}]].\n")
        self.person.call("note.search", {"query": f"Target{n}", "fresh": True})
        preview = self.agent.call("lint.fix", {"code": "L01"})
        if not preview.ok or preview.value.get("outcome") != "preview":
            self.counts["stale.setup_failed"] += 1
            return
        proposed = self.agent.call("lint.fix", {"code": "L01", "confirm": True, "fingerprint": preview.value["fingerprint"]})
        if not proposed.ok or proposed.value.get("outcome") != "proposed":
            self.counts["stale.setup_failed"] += 1
            return
        pid = proposed.value["proposal"]
        shown = {d["path"]: d["after_sha"] for d in self.person.call("proposal.show", {"id": pid}).value["diffs"]}
        kind = self.rnd.choice(["none", "unrelated_edit", "written_edit", "alias_moved", "alias_shared"])
        stale_expected = kind in ("written_edit", "alias_moved", "alias_shared")
        if kind == "unrelated_edit":
            ok = self.person.call("note.append", {"target": "Page", "section": "Edits", "markdown": f"edit {n}\n"}).ok
        elif kind == "written_edit":
            ok = self.person.call("note.append", {"target": f"N{n}x03", "section": "Edits", "markdown": f"edit {n}\n"}).ok
        elif kind == "alias_moved":
            ok = self.agent.call("note.set_frontmatter", {"target": f"Target{n}", "unset": ["aliases"]}).ok
            ok = ok and self.agent.call("note.create", {"path": f"s{n}/Evil{n}", "frontmatter": {"aliases": [nick]}, "body": "# Evil\n"}).ok
        elif kind == "alias_shared":
            ok = self.agent.call("note.create", {"path": f"s{n}/Twin{n}", "frontmatter": {"aliases": [nick]}, "body": "# Twin\n"}).ok
        else:
            ok = True
        if not ok:
            self.counts["stale.interference_failed"] += 1
            return
        written = {p: (self.root / p).read_bytes() for p in shown}
        applied = self.person.call("proposal.apply", {"id": pid})
        self.counts["stale.tried"] += 1
        self.counts[f"stale.{kind}.{'applied' if applied.ok else applied.code}"] += 1
        if applied.ok:
            now = {p: hashlib.sha256((self.root / p).read_bytes()).hexdigest() for p in shown}
            if stale_expected:
                self.fail("stale_applied", f"{kind}: proposal {pid} applied after the interference")
            elif now != shown:
                self.fail("stale_applied", f"{kind}: proposal {pid} wrote other bytes than shown")
        else:
            if any((self.root / p).read_bytes() != data for p, data in written.items()):
                self.fail("stale_wrote", f"{kind}: a refused apply of {pid} changed a file")
            if not stale_expected:
                self.counts["false_stale"] += 1
                if len(self.failures) < 20:
                    self.failures.append(f"false stale: {kind}: {applied.value}")
        # Leave no fixable link behind for the next case's fix: the alias goes from every note.
        for name in (f"Target{n}", f"s{n}/Evil{n}", f"s{n}/Twin{n}"):
            if (self.root / f"{name}.md").exists() or (folder / f"{name}.md").exists():
                self.person.call("note.set_frontmatter", {"target": name, "unset": ["aliases"]})

    # -- spellings ----------------------------------------------------------------------------

    def spelling_case(self, n: int) -> None:
        anchored = self.rnd.random() < 0.15
        flow = self.rnd.random() < 0.2
        pairs = [("ledger", "claim"), ("claim", f"Journals recover writes {n}"), ("state", "accepted")]
        # The stamps a create adds, already there: the header is then written as spelled.
        today = time.strftime("%Y-%m-%d")
        extra = [f"support: ['[[{self.source}]]']", "page: '[[Page]]'", f"created: {today}", f"updated: {today}"]
        header = mapping(pairs, self.rnd.choice, flow=flow, anchor="state" if anchored else None, extra=extra)
        body = f"---\n{header}---\n# Claim {n}\n"
        reply = self.agent.call("note.create", {"path": f"claims/C{n}", "body": body})
        self.counts["spellings.tried"] += 1
        form = "anchored" if anchored else "flow" if flow else "block"
        if reply.ok:
            outcome = reply.value.get("outcome")
            self.counts[f"spellings.{form}.{outcome}"] += 1
            path = self.root / "claims" / f"C{n}.md"
            if outcome == "applied" and path.exists():
                data = frontmatter.parse(path.read_text()).data or {}
                if data.get("ledger") == "claim" and data.get("state") == "accepted":
                    self.fail("verdict_applied", f"an agent wrote an accepted claim with {header!r}")
        else:
            issues = [i.get("code") for i in reply.value.get("issues", [])]
            self.counts[f"spellings.{form}.refused.{reply.code}" + (f".{issues[0]}" if issues else "")] += 1

    # -- hellos -------------------------------------------------------------------------------

    def hello_case(self, n: int) -> None:
        raw = RawClient(self.home.socket)
        try:
            second = self.rnd.choice(["cli", "editor", "mcp"])
            pipelined = self.rnd.random() < 0.5
            first = {"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"client": "agent", "version": "1", "channel": "mcp"}}
            again = {"jsonrpc": "2.0", "id": 2, "method": "hello", "params": {"client": "person", "version": "1", "channel": second}}
            if pipelined:
                raw.send_bytes(json.dumps(first).encode() + b"\n" + json.dumps(again).encode() + b"\n")
                replies = {m["id"]: m for m in (raw.recv_message(), raw.recv_message())}
            else:
                raw.send_bytes(json.dumps(first).encode() + b"\n")
                replies = {1: raw.recv_message()}
                raw.send_bytes(json.dumps(again).encode() + b"\n")
                replies[2] = raw.recv_message()
            self.counts["hellos.tried"] += 1
            if "result" in replies[2]:
                self.fail("second_hello_opened", f"second hello as {second} (pipelined: {pipelined}) was answered {replies[2]}")
            else:
                self.counts["hellos.second_refused"] += 1
            person_only = raw.request("vault.set", {"id": VAULT_ID, "agents": {"delete": "apply"}})
            if (person_only.get("error", {}).get("data") or {}).get("code") != "POLICY":
                self.fail("channel_changed", f"after a second hello as {second}, vault.set answered {person_only}")
        finally:
            raw.close()


def run(home: Home, *, owned: int, stale: int, spellings: int, hellos: int, seed: int) -> dict[str, Any]:
    started = time.monotonic()
    r = Round(home, seed)
    try:
        r.setup()
        for n in range(owned):
            r.owned_case(n)
        for n in range(stale):
            r.stale_case(n)
        for n in range(spellings):
            r.spelling_case(n)
        for n in range(hellos):
            r.hello_case(n)
    finally:
        r.close()
    violations = sum(v for k, v in r.counts.items() if k.startswith("violation."))
    return {
        "seed": seed,
        "seconds": round(time.monotonic() - started, 1),
        "cases": r.counts["owned.tried"] + r.counts["stale.tried"] + r.counts["spellings.tried"] + r.counts["hellos.tried"],
        "violations": violations,
        "counts": dict(sorted(r.counts.items())),
        "failures": r.failures,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--owned", type=int, default=160)
    parser.add_argument("--stale", type=int, default=30)
    parser.add_argument("--spellings", type=int, default=120)
    parser.add_argument("--hellos", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    home = Home.create()
    daemon = Daemon(home)
    try:
        report = run(home, owned=args.owned, stale=args.stale, spellings=args.spellings, hellos=args.hellos, seed=args.seed)
    finally:
        daemon.stop()
        home.cleanup()
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0 if report["violations"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
