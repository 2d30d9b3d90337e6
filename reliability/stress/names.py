"""Hostile file names: a shared vault may hold any name Linux allows, and vaultd must serve it.

    .venv/bin/python -m reliability.stress.hostile --frames 0 --params 0 --vault-rounds 0 --names-rounds 3 \
        --names-drawn 150 --seed 2

A round writes a vault whose files and folders carry a fixed list of hostile names and names
drawn by hypothesis (invalid UTF-8, every C0 control, ESC sequences, C1, DEL, bidi and zero-width
characters, 255-byte names in 1- to 4-byte UTF-8, case and NFC/NFD twins, Obsidian's link
breakers, leading ``-`` and ``.``, trailing space and dot, ``.md`` alone, names that look like
options or paths), then:

(a) registers it with ``vault.add``; (b) creates, renames and deletes more such files while the
daemon watches; (c) calls every read method over the raw socket; (d) runs the real ``vaultctl``
text and ``--json`` output; (e) drives ``vaultctl mcp`` with the official ``mcp`` SDK client;
(f) asks for writes (create, move) to such names.

Checks: no INTERNAL reply, no dropped session, no daemon exit; every name that is not UTF-8 is
reported by ``vault.issues`` as S07 (with everything below a folder so named left out); every
other note is listed exactly as its bytes on disk; no raw terminal control reaches vaultctl's
text output and ``--json`` decodes to the exact name; a write to a hostile name is applied inside
the vault under that exact name or refused with a structured code; reading and watching change no
byte of the vault. The fast slice is tests/reliability/test_hostile_names.py.

The names and what the index should make of each are in :mod:`reliability.stress.name_catalogue`;
the vault on disk and the round's tally in :mod:`reliability.stress.name_vault`; this module talks
to the daemon and its clients and runs the round.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from reliability.stress.name_catalogue import NAME_MAX, draw_names, fixed_names
from reliability.stress.name_vault import NameTally, NameVault, at_path, build_name_vault, disk_state
from tests.support.harness import REPO, VAULTCTL, Daemon, Home, RawClient

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

SOCKET_TIMEOUT = 30.0
#: What must never reach a terminal raw from vaultctl's text output: C0 but newline, DEL, C1,
#: bidi embeddings/overrides/isolates, lone surrogates.
ACTIVE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The same for a note body (``vaultctl show``), whose tabs and CRLF line ends are the author's layout.
ACTIVE_IN_BODY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


# -- talking to the daemon -------------------------------------------------------------------------


def client(home: Home) -> RawClient:
    c = RawClient(home.socket, timeout=SOCKET_TIMEOUT)
    RawClient.open_clients.remove(c)  # owned here, not by the test fixture
    c.hello()
    return c


class Session:
    """One raw connection; a dropped one is a failure and is reopened."""

    def __init__(self, home: Home, tally: NameTally) -> None:
        self.home, self.tally = home, tally
        self.c = client(home)

    def ask(self, where: str, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        try:
            reply = self.c.request(method, params)
        except (OSError, ValueError) as exc:
            self.tally.counts["sessions.dropped"] += 1
            self.tally.fail(f"{where}: {method} dropped the session: {exc!r}")
            self.c.close()
            self.c = client(self.home)
            return None
        return self.tally.reply(where, reply)

    def pages(self, where: str, method: str, params: dict[str, Any], key: str) -> list[Any] | None:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):
            result = self.ask(where, method, {**params, **({"cursor": cursor} if cursor else {})})
            if result is None:
                return None
            items += result[key]
            cursor = result.get("next_cursor")
            if not cursor:
                return items
        self.tally.fail(f"{where}: {method} pages never ended")
        return None

    def close(self) -> None:
        self.c.close()


def check_listing(s: Session, nv: NameVault, where: str) -> None:
    """note.list and vault.issues against what is on disk: exact names, every skip with its code."""
    tally = s.tally
    notes = s.pages(where, "note.list", {"vault": nv.vid, "limit": 500}, "notes")
    if notes is not None:
        listed = [n["path"] for n in notes]
        want = nv.notes()
        if len(listed) != len(set(listed)):
            tally.fail(f"{where}: note.list lists a path twice: {[p for p, k in Counter(listed).items() if k > 1]!r:.300}")
        missing, extra = set(want) - set(listed), set(listed) - set(want)
        tally.counts["checks.listed_names"] += len(want)
        if missing or extra:
            tally.fail(f"{where}: note.list differs from the disk: missing {sorted(missing)!r:.300}, extra {sorted(extra)!r:.300}")
    issues = s.pages(where, "vault.issues", {"vault": nv.vid, "limit": 500}, "issues")
    if issues is not None:
        found: dict[str, set[str]] = {}
        for i in issues:
            found.setdefault(i["path"], set()).add(i["code"])
        for path, code in nv.skips().items():
            tally.counts["checks.skips_reported"] += 1
            if code not in found.get(path, set()):
                tally.fail(f"{where}: {path!r} should be reported as {code}, got {found.get(path)}")
            else:
                tally.counts[f"skips.{code}"] += 1
        for path, codes in found.items():
            if "S07" in codes and path not in nv.skips():
                tally.fail(f"{where}: S07 reported for {path!r}, which is valid UTF-8 or not on disk")


def _targets(nv: NameVault, limit: int | None) -> list[tuple[str, bytes]]:
    items = sorted(nv.notes().items())
    if limit is not None and len(items) > limit:
        step = len(items) / limit
        items = [items[int(i * step)] for i in range(limit)]
    return items


def check_reads(s: Session, nv: NameVault, where: str, limit: int | None = None) -> None:
    """Every read method, once per note name (or a spread of ``limit``) and once for the vault."""
    tally, v = s.tally, nv.vid
    for path, rel in _targets(nv, limit):
        tally.counts["checks.read_names"] += 1
        r = s.ask(f"{where} read {path!r}", "note.read", {"vault": v, "target": path})
        if r is not None and r["path"] != path:
            tally.fail(f"{where}: note.read {path!r} answered for {r['path']!r}")
        elif r is not None and nv.files[rel] not in r["body"]:
            tally.fail(f"{where}: note.read {path!r}: the body is another note's")
        hits = s.ask(f"{where} search {path!r}", "note.search", {"vault": v, "query": nv.files[rel]})
        if hits is not None and [h["path"] for h in hits["hits"]] != [path]:
            tally.fail(f"{where}: search for {path!r}'s word found {[h['path'] for h in hits['hits']]!r:.300}")
        s.ask(f"{where} links {path!r}", "note.links", {"vault": v, "target": path})
        stem = path.rpartition("/")[2][:-3]
        if stem:
            s.ask(f"{where} read-by-name {path!r}", "note.read", {"vault": v, "target": stem})
        folder = path.rpartition("/")[0]
        if folder:
            s.ask(f"{where} list-folder {folder!r}", "note.list", {"vault": v, "folder": folder})
            s.ask(f"{where} search-folder {folder!r}", "note.search", {"vault": v, "query": "body", "folder": folder})
    for method, params in (
        ("vault.tags", {}),
        ("vault.stats", {"fresh": True}),
        ("log.tail", {}),
        ("note.search", {"query": "body", "limit": 500}),
        ("note.search", {"query": "heading"}),
    ):
        s.ask(f"{where} {method}", method, {"vault": v, **params})
    s.ask(f"{where} doctor", "doctor", {"vault": v})
    s.ask(f"{where} doctor-all", "doctor", {})
    stats = s.ask(f"{where} stats", "vault.stats", {"vault": v})
    if stats is not None:
        want_notes, want_skips = len(nv.notes()), len(nv.skips())
        if stats["notes"] != want_notes:
            tally.fail(f"{where}: vault.stats counts {stats['notes']} notes, the disk holds {want_notes}")
        if stats["skipped"] < want_skips:
            tally.fail(f"{where}: vault.stats counts {stats['skipped']} skipped, expected at least {want_skips}")


def check_links(s: Session, nv: NameVault, where: str) -> None:
    """A hub note links to every note by path; backlinks of each resolvable one name the hub."""
    tally, v = s.tally, nv.vid
    safe = [p for p in nv.notes() if not re.search(r"[\[\]#^|\n\r]", p) and "/" not in p]
    if not safe:
        return
    hub = nv.root / "zz-hub.md"
    hub.write_text("# Hub\n\n" + "\n".join(f"- [[{p[:-3]}]]" for p in sorted(safe)) + "\n", encoding="utf-8")
    nv.files[b"zz-hub.md"] = "hub"
    out = s.ask(f"{where} hub links", "note.links", {"vault": v, "target": "zz-hub.md", "fresh": True, "limit": 500})
    if out is None:
        return
    resolved = {o["resolved"] for o in out["out"] if o.get("resolved")}
    for p in safe[:200]:
        tally.counts["checks.backlinks"] += 1
        back = s.ask(f"{where} backlinks {p!r}", "note.links", {"vault": v, "target": p})
        if back is not None and p in resolved and "zz-hub.md" not in {i["path"] for i in back["incoming"]}:
            tally.fail(f"{where}: the hub links {p!r} but its backlinks miss the hub")


# -- (b) the watcher -------------------------------------------------------------------------------


def _wait_listed(s: Session, nv: NameVault, where: str) -> None:
    """fresh: true makes every change before the call visible; then the listing must match."""
    s.ask(f"{where} fresh", "vault.stats", {"vault": nv.vid, "fresh": True})
    check_listing(s, nv, where)


def watch_round(s: Session, nv: NameVault, names: list[bytes], where: str) -> None:
    """Create, rename and delete hostile names while the daemon watches, checking the index each time."""
    tally = s.tally
    created: list[bytes] = []
    for name in names:
        rel = b"watched/" + name
        tally.counts["names.tried"] += 1
        if nv.add(rel):
            created.append(rel)
    _wait_listed(s, nv, f"{where} created")
    for i, rel in enumerate(created):
        new = b"watched/r" + str(i).encode() + b"-" + rel.rpartition(b"/")[2]
        new = new[: len(b"watched/") + NAME_MAX]
        if new in nv.files:
            continue
        try:
            os.rename(at_path(nv.root, rel), at_path(nv.root, new))
        except OSError:
            continue
        nv.files[new] = nv.files.pop(rel)
        tally.counts["watch.renamed"] += 1
    _wait_listed(s, nv, f"{where} renamed")
    for rel in [r for r in nv.files if r.startswith(b"watched/")][::2]:
        os.unlink(at_path(nv.root, rel))
        del nv.files[rel]
        tally.counts["watch.deleted"] += 1
    _wait_listed(s, nv, f"{where} deleted")


# -- (f) writes ------------------------------------------------------------------------------------


def _on_disk(root: Path, rel: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(at_path(root, os.fsencode(rel))).st_mode)
    except OSError:
        return False


def write_round(s: Session, nv: NameVault, names: list[bytes], where: str) -> None:
    """note.create and note.move to each name: applied under that exact name, or refused with a code."""
    tally, v = s.tally, nv.vid
    base = nv.root / "move-source.md"
    for i, name in enumerate(names):
        try:
            text = name.decode("utf-8")
        except UnicodeDecodeError:
            text = name.decode("utf-8", "surrogateescape")  # sent as JSON \udcxx escapes: lone surrogates
        for folder in ("", "made/"):
            path = folder + text
            tally.counts["writes.tried"] += 1
            r = s.ask(f"{where} create {path!r}", "note.create", {"vault": v, "path": path, "body": f"made {i}\n"})
            if r is not None:
                _check_applied(s, nv, r, path, where)
    for name in names[:: max(1, len(names) // 40)]:
        try:
            text = name.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not base.exists():
            base.write_text("# Move source\n\nmovable\n")
            nv.files[b"move-source.md"] = "movable"
            s.ask(f"{where} fresh", "vault.stats", {"vault": v, "fresh": True})
        tally.counts["writes.tried"] += 1
        pre = s.ask(f"{where} move-preview {text!r}", "note.move", {"vault": v, "target": "move-source.md", "to": text})
        if pre is None:
            continue
        r = s.ask(
            f"{where} move {text!r}",
            "note.move",
            {"vault": v, "target": "move-source.md", "to": text, "confirm": True, "fingerprint": pre["fingerprint"]},
        )
        if r is not None:
            _check_applied(s, nv, r, text, where)
            if r.get("outcome") == "applied":
                nv.files.pop(b"move-source.md", None)


def _check_applied(s: Session, nv: NameVault, r: dict[str, Any], asked: str, where: str) -> None:
    tally = s.tally
    if r.get("outcome") != "applied":
        tally.counts["writes.not_applied"] += 1
        return
    tally.counts["writes.applied"] += 1
    made = [c["path"] for c in r["changes"] if c["action"] == "create"]
    for path in made:
        rel = os.fsencode(path)
        if not _on_disk(nv.root, path):
            tally.fail(f"{where}: {asked!r} applied as {path!r}, which is not a file in the vault")
        else:
            nv.files.setdefault(rel, "made")
    want = asked if asked.endswith(".md") else asked + ".md"
    notes = [p for p in made if p != "log.md"]
    if notes and want not in notes:
        tally.counts["writes.applied_under_another_name"] += 1
        if len(nv.renamed_writes) < 20:
            nv.renamed_writes.append((asked, notes))


# -- (d) vaultctl and (e) the MCP shim -------------------------------------------------------------


def run_vaultctl(home: Home, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([*VAULTCTL, *args], env={**home.env, "VAULTD_NO_AUTOSTART": "1"}, capture_output=True, cwd=REPO, timeout=120)
    return proc.returncode, proc.stdout.decode("utf-8", "surrogateescape"), proc.stderr.decode("utf-8", "surrogateescape")


def _assert_clean(tally: NameTally, where: str, out: str, err: str, body: bool = False) -> None:
    for stream, text in (("stdout", out), ("stderr", err)):
        tally.counts["cli.streams_checked"] += 1
        found = (ACTIVE_IN_BODY if body and stream == "stdout" else ACTIVE).findall(text)
        if found:
            tally.fail(f"{where}: raw terminal controls on {stream}: {sorted(set(found))!r}")
        if re.search("[\udc80-\udcff]", text):
            tally.fail(f"{where}: {stream} is not clean UTF-8")


def cli_round(home: Home, nv: NameVault, tally: NameTally, where: str, shows: int) -> None:
    """vaultctl's text output carries no raw control; --json round-trips every name exactly."""
    v = ["--vault", nv.vid]
    want = nv.notes()
    commands: list[tuple[list[str], Callable[[Any], set[str]] | None]] = [
        (["list", "--limit", "500"], lambda r: {n["path"] for n in r["notes"]}),
        (["search", "body", "--limit", "500"], lambda r: {h["path"] for h in r["hits"]}),
        (["issues", "--limit", "500"], None),
        (["tags"], None),
        (["stats"], None),
        (["log", "tail"], None),
        (["doctor"], None),
    ]
    for path, _ in _targets(nv, shows):
        commands.append((["show", "--", path], lambda r: {r["path"]}))
        commands.append((["links", "--", path], lambda r: {r["path"]}))
    for args, pick in commands:
        for as_json in (False, True):
            words = 2 if args[0] == "log" else 1
            argv = [*args[:words], *v, *(["--json"] if as_json else []), *args[words:]]
            code, out, err = run_vaultctl(home, *argv)
            tally.counts["cli.runs"] += 1
            label = f"{where} vaultctl {' '.join(argv)!r:.200}"
            _assert_clean(tally, label, out, err, body=args[0] == "show" and not as_json)
            if code not in (0, 1):
                tally.fail(f"{label}: exit {code}: {err[-300:]}")
                continue
            if code != 0:
                tally.counts[f"cli.refused.{code}"] += 1
                continue
            if as_json:
                try:
                    result = json.loads(out)
                except ValueError:
                    tally.fail(f"{label}: stdout is not JSON: {out[:200]!r}")
                    continue
                if pick is not None:
                    got = pick(result)
                    tally.counts["cli.json_names_checked"] += len(got)
                    strange = got - set(want)
                    if strange:
                        tally.fail(f"{label}: --json names not on disk: {sorted(strange)!r:.300}")
                    if args[0] == "list" and got != set(want) and len(want) <= 500:
                        tally.fail(f"{label}: --json list differs: {sorted(set(want) - got)!r:.300}")
                    if args[0] in ("show", "links") and got != {args[-1]}:
                        tally.fail(f"{label}: answered for {got!r}")


async def _mcp_calls(home: Home, nv: NameVault, tally: NameTally, where: str, limit: int | None, errlog: TextIO) -> None:
    import sys

    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "vaultctl.main", "mcp"], env={**home.env, "VAULTD_NO_AUTOSTART": "1"}, cwd=str(REPO)
    )
    want = nv.notes()
    async with stdio_client(server, errlog=errlog) as (read, write), ClientSession(read, write, read_timeout_seconds=60) as session:
        await session.initialize()

        async def tool(name: str, args: dict[str, Any]) -> dict[str, Any] | None:
            tally.counts["mcp.calls"] += 1
            result = await session.call_tool(name, {"vault": nv.vid, **args})
            content = result.structured_content
            if not isinstance(content, dict):
                tally.fail(f"{where} mcp {name} {args!r:.200}: no structured content")
                return None
            if result.is_error:
                code = content.get("code")
                tally.counts[f"mcp.refusals.{code}"] += 1
                if code == "INTERNAL" or not isinstance(code, str):
                    tally.fail(f"{where} mcp {name} {args!r:.200}: {content!r:.300}")
                return None
            return content

        listed: set[str] = set()
        cursor: str | None = None
        while True:
            page = await tool("note_list", {"limit": 500, **({"cursor": cursor} if cursor else {})})
            if page is None:
                break
            listed |= {n["path"] for n in page["notes"]}
            cursor = page.get("next_cursor")
            if not cursor:
                break
        if listed != set(want):
            tally.fail(
                f"{where} mcp note_list differs: missing {sorted(set(want) - listed)!r:.300}, extra {sorted(listed - set(want))!r:.300}"
            )
        tally.counts["mcp.names_listed"] += len(listed)
        for path, rel in _targets(nv, limit):
            r = await tool("note_read", {"target": path})
            if r is not None and r["path"] != path:
                tally.fail(f"{where} mcp note_read {path!r} answered {r['path']!r}")
            hits = await tool("note_search", {"query": nv.files[rel]})
            if hits is not None and [h["path"] for h in hits["hits"]] != [path]:
                tally.fail(f"{where} mcp search {path!r}: {[h['path'] for h in hits['hits']]!r:.200}")
            await tool("note_links", {"target": path})
        for name, args in (("vault_issues", {"limit": 500}), ("vault_stats", {}), ("vault_tags", {}), ("log_tail", {})):
            await tool(name, args)


def mcp_round(home: Home, nv: NameVault, tally: NameTally, where: str, limit: int | None) -> None:
    import anyio

    with open(home.root / f"mcp-{nv.vid}.err", "w") as errlog:
        anyio.run(_mcp_calls, home, nv, tally, where, limit, errlog)


# -- the round -------------------------------------------------------------------------------------


def _unchanged(tally: NameTally, before: dict[bytes, tuple[int, bytes]], root: Path, where: str) -> dict[bytes, tuple[int, bytes]]:
    """Every file of ``before`` still there has its mode and bytes; returns the state now."""
    after = disk_state(root)
    for rel, was in before.items():
        if rel in after:
            tally.counts["checks.bytes_unchanged"] += 1
            if after[rel] != was:
                tally.fail(f"{where} changed {rel!r:.200}")
    return after


@dataclass
class RoundSize:
    drawn: int = 40  #: hypothesis names besides the fixed list
    read_limit: int | None = None  #: note names each read method is asked about (None: all)
    cli_shows: int = 6  #: names vaultctl show/links is run on (text and --json)
    mcp_limit: int | None = 40
    watch_names: int = 40
    write_names: int | None = None  #: None: every name


def names_round(
    home: Home, daemon: Daemon, vid: str, tally: NameTally, size: RoundSize, seed: int | None = None, cli: bool = True, mcp: bool = True
) -> dict[str, Any]:
    started = time.monotonic()
    names = [n for _, n in fixed_names()] + draw_names(size.drawn, seed)
    names = list(dict.fromkeys(names))
    nv = build_name_vault(home.root / f"nv-{vid}", vid, names, tally)
    s = Session(home, tally)
    try:
        if s.ask("vault.add", "vault.add", {"id": vid, "path": str(nv.root)}) is None:
            return {}
        state = disk_state(nv.root)
        check_listing(s, nv, "(a) add")
        check_reads(s, nv, "(c) reads", size.read_limit)
        check_links(s, nv, "(c) links")  # writes its hub note: a new file, so not compared
        state = _unchanged(tally, state, nv.root, "(a) add and (c) reads")
        watch_round(s, nv, names[: size.watch_names] + names[-size.watch_names :], "(b) watch")
        state = _unchanged(tally, state, nv.root, "(b) watching")  # the files it renamed or deleted are gone
        if cli:
            cli_round(home, nv, tally, "(d) cli", size.cli_shows)
        if mcp:
            mcp_round(home, nv, tally, "(e) mcp", size.mcp_limit)
        _unchanged(tally, state, nv.root, "(d) vaultctl and (e) MCP")
        write_names = names if size.write_names is None else names[:: max(1, len(names) // size.write_names)]
        write_round(s, nv, write_names, "(f) writes")
        if (nv.root / "log.md").is_file():
            nv.files.setdefault(b"log.md", "log")  # the operations' log, a note like any other
        check_listing(s, nv, "(f) after writes")
        if daemon.proc.poll() is not None:
            tally.counts["daemon.crashes"] += 1
            tally.fail("the daemon exited")
        tally.counts["rounds"] += 1
        return {
            "vault": vid,
            "names": len(names),
            "files": len(nv.files),
            "notes": len(nv.notes()),
            "skips": len(nv.skips()),
            "seconds": round(time.monotonic() - started, 1),
            "written_under_another_name": nv.renamed_writes,
        }
    finally:
        s.close()
