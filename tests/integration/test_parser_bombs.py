"""Parser bombs in a vault, through a real daemon: each is one finding, one indexing issue or one
metadata problem naming the file, found in one bounded pass, and the other clients' reads and
writes are answered meanwhile.

The waits are generous bounds, not timings: the old parsers took minutes to hours on these files
(ruamel.yaml 94 s for each parse of a header nested 8,000 levels deep, 9^9 strings for a base's
alias bomb), so a client that waits CLIENT_WAIT_S fails on them and passes on bounded ones.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from protocol.parse_limits import MAX_JSON_DEPTH, MAX_YAML_ALIAS_NODES, MAX_YAML_DEPTH, MAX_ZIP_ENTRIES
from tests.support.bombs import alias_bomb, central_directory_flood, unclosed_calls_line
from tests.support.harness import Daemon, RawClient

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

CLIENT_WAIT_S = 60.0  #: every call below is answered well within it once parsers are bounded
DEEP = 8000  #: levels: 16 KB of brackets

DEEP_HEADER = "---\nrelated: " + "[" * DEEP + "x" + "]" * DEEP + "\n---\n# Deep\n\nBody of the deep note.\n"
DEEP_BASE = "filters: " + "[" * DEEP + "]" * DEEP + "\n"
DEEP_CANVAS = '{"nodes": ' + "[" * DEEP + "]" * DEEP + ', "edges": []}'


def client(home: Home) -> RawClient:
    c = RawClient(home.socket, timeout=CLIENT_WAIT_S)
    c.hello()
    return c


def add_vault(home: Home, name: str, files: dict[str, str]) -> Path:
    root = home.root / name
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    client(home).call("vault.add", {"id": name, "path": str(root)})
    return root


def test_an_alias_bomb_base_is_one_lint_finding(daemon: Daemon, home: Home) -> None:
    """A 600-byte base of nine alias levels: lint expanded 9^9 strings with the index held."""
    add_vault(home, "bomb", {"Bomb.base": alias_bomb(), "Home.md": "# Home\n\nSee [[Other]].\n", "Other.md": "# Other\n"})
    result = client(home).call("vault.lint", {"vault": "bomb", "code": "L15", "fresh": True})
    [finding] = [f for f in result["findings"] if f["note"] == "Bomb.base"]
    assert f"aliases that repeat more than {MAX_YAML_ALIAS_NODES} values" in finding["finding"]
    writer = client(home)
    assert writer.call("note.create", {"vault": "bomb", "path": "After", "body": "written after the lint\n"})["outcome"] == "applied"
    assert "written after the lint" in client(home).call("note.read", {"vault": "bomb", "target": "After", "fresh": True})["body"]


def test_deeply_nested_canvases_and_bases_are_lint_findings_not_internal(daemon: Daemon, home: Home) -> None:
    """The C JSON decoder and PyYAML's pure-Python loader recursed: lint answered INTERNAL."""
    add_vault(home, "deep", {"Deep.canvas": DEEP_CANVAS, "Deep.base": DEEP_BASE, "Home.md": "# Home\n"})
    reply = client(home).request("vault.lint", {"vault": "deep", "fresh": True})
    assert "result" in reply, reply
    found = {f["note"]: f["finding"] for f in reply["result"]["findings"] if f["code"] in ("L14", "L15")}
    assert f"deeper than {MAX_JSON_DEPTH} levels" in found["Deep.canvas"]
    assert f"deeper than {MAX_YAML_DEPTH} levels" in found["Deep.base"]


def test_a_deeply_nested_header_is_an_indexing_issue_and_others_are_answered(daemon: Daemon, home: Home) -> None:
    """16 KB of nesting cost ruamel.yaml 94 s at each parse: the index, a hand edit's refresh and
    every fresh read waited on it."""
    root = add_vault(home, "hdr", {"Deep.md": DEEP_HEADER, "Plain.md": "---\ntags: [a]\n---\n# Plain\n"})
    c = client(home)
    issues = c.call("vault.issues", {"vault": "hdr"})["issues"]
    assert [(i["path"], i["code"]) for i in issues] == [("Deep.md", "N01")]
    assert f"deeper than {MAX_YAML_DEPTH} levels" in issues[0]["message"]
    # The note is still there, its body searchable; only its header is not read.
    assert c.call("note.read", {"vault": "hdr", "target": "Deep"})["body"].startswith("# Deep")
    # A hand edit that keeps the bomb is re-read at once, and every other client goes on.
    (root / "Deep.md").write_text(DEEP_HEADER.replace("Body of", "Edited body of"))
    assert "Edited body" in client(home).call("note.read", {"vault": "hdr", "target": "Deep", "fresh": True})["body"]
    assert client(home).call("note.create", {"vault": "hdr", "path": "New", "body": "x\n"})["outcome"] == "applied"
    assert client(home).call("note.read", {"vault": "hdr", "target": "Plain", "fresh": True})["frontmatter"] == {"tags": ["a"]}


@pytest.mark.parametrize("bomb", ["Deep.base", "Deep.canvas", "Long.base"])
def test_a_move_beside_a_deep_base_or_canvas_is_answered(daemon: Daemon, home: Home, bomb: str) -> None:
    """A move re-reads every base (and each canvas that may name the note) under the writer:
    ruamel.yaml spent 94 s on the deep base at each move, and a base line of 300,000 unclosed
    ``link("`` calls cost over five minutes (each call's line was counted from the file's start)."""
    text = {
        "Deep.base": DEEP_BASE,
        "Deep.canvas": DEEP_CANVAS.replace('"edges": []', '"edges": [], "x": "Hub"'),
        "Long.base": unclosed_calls_line(300_000),
    }[bomb]
    add_vault(home, "mv", {bomb: text, "Hub.md": "# Hub\n", "Spoke.md": "# Spoke\n\nSee [[Hub]].\n"})
    c = client(home)
    preview = c.call("note.move", {"vault": "mv", "target": "Hub", "to": "Hub Renamed"})
    done = c.call(
        "note.move", {"vault": "mv", "target": "Hub", "to": "Hub Renamed", "confirm": True, "fingerprint": preview["fingerprint"]}
    )
    assert done["outcome"] == "applied"
    assert "[[Hub Renamed]]" in c.call("note.read", {"vault": "mv", "target": "Spoke", "fresh": True})["body"]


def _peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024


PEAK_CAP_MIB = 450  #: the daemon's peak while it captures a 63 MiB file; zipfile's directory of it alone took 760 MiB


def test_an_epub_directory_flood_is_captured_without_metadata_in_bounded_memory(daemon: Daemon, home: Home) -> None:
    """1.3 million directory entries in 63 MiB: zipfile built an object for each, 810 MiB."""
    add_vault(home, "cap", {"Home.md": "# Home\n"})
    flood = home.root / "flood.epub"
    flood.write_bytes(central_directory_flood(1_300_000))
    c = client(home)
    reply = c.request("source.capture", {"vault": "cap", "items": [{"path": str(flood)}]})
    assert "result" in reply, reply
    [source] = reply["result"]["detail"]["sources"]
    assert source["kind"] == "epub"
    assert f"more than {MAX_ZIP_ENTRIES} entries" in json.dumps(reply["result"])
    assert _peak_mib(daemon.proc.pid) < PEAK_CAP_MIB
    assert client(home).call("daemon.status")["pid"] == daemon.proc.pid
