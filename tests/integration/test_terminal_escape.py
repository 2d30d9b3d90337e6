"""A shared vault's file names and titles cannot drive the reader's terminal through vaultctl.

The vault holds a note whose file name carries an OSC title change (``ESC ] 0 ; pwned BEL``), a
screen clear (``ESC [ 2 J``), a C1 CSI and a right-to-left override, and whose title, body and
links carry them too. Every text command prints them escaped; ``--json`` decodes to the exact name.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import REPO, Daemon, Home

if TYPE_CHECKING:
    from pathlib import Path

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\x7f"
STEM = f"shared {HOSTILE} note"
NAME = f"{STEM}.md"
TITLE = f"Title {HOSTILE}"
# What must never reach a terminal raw: C0 but newline, DEL, C1, bidi embeddings/overrides/isolates.
ACTIVE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _vaultctl(home: Home, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "vaultctl.main", *args], env=home.env, capture_output=True, cwd=REPO, timeout=60)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


@pytest.fixture
def hostile_vault(home: Home, daemon: Daemon) -> Path:
    vault = home.root / "shared"
    vault.mkdir()
    yaml_title = TITLE.translate({0x1B: "\\e", 0x07: "\\a", 0x9B: "\\x9b", 0x202E: "\\u202e", 0x7F: "\\x7f"})
    (vault / NAME).write_text(
        f'---\ntitle: "{yaml_title}"\ntags: [shared]\n---\n# {TITLE}\n\nquokka words {HOSTILE} more quokka words\n\nSee [[other]].\n',
        encoding="utf-8",
    )
    (vault / f"broken {HOSTILE}.md").write_text("---\ntitle: [unclosed\n---\nquokka\n", encoding="utf-8")
    (vault / "other.md").write_text(f"# Other\n\nBack to [[{STEM}]] and quokka.\n", encoding="utf-8")
    code, _, err = _vaultctl(home, "vault", "add", "shared", str(vault))
    assert code == 0, err
    return vault


def _clean(out: str, err: str) -> None:
    for stream, text in (("stdout", out), ("stderr", err)):
        found = ACTIVE.findall(text)
        assert not found, f"raw terminal controls on {stream}: {found!r} in {text!r}"


@pytest.mark.parametrize(
    "args",
    [
        ("list", "--fresh"),
        ("search", "quokka", "--fresh"),
        ("show", NAME, "--fresh"),
        ("links", NAME, "--fresh"),
        ("links", "other", "--fresh"),
        ("issues",),  # a note with malformed frontmatter and a hostile name
        ("show", f"missing {HOSTILE}"),  # the daemon's refusal echoes the name
    ],
)
def test_text_output_escapes_terminal_controls(hostile_vault: Path, home: Home, args: tuple[str, ...]) -> None:
    code, out, err = _vaultctl(home, *args)
    _clean(out, err)
    if args[0] == "show" and args[1].startswith("missing"):
        assert code == 1 and "\\x1b]0;pwned\\x07" in err, err
        return
    assert code == 0, err
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eevil\\x7f" in out, out


def test_table_columns_line_up_around_an_escaped_name(hostile_vault: Path, home: Home) -> None:
    code, out, _ = _vaultctl(home, "list", "--fresh")
    assert code == 0
    header, *rows = out.split("\n\n")[0].splitlines()
    title_col = header.index("TITLE")
    for row in rows:
        assert row[title_col - 2 : title_col] == "  ", (header, row)


@pytest.mark.parametrize(
    "args, pick",
    [
        (("list", "--fresh"), lambda r: {n["path"] for n in r["notes"]}),
        (("search", "quokka", "--fresh"), lambda r: {h["path"] for h in r["hits"]}),
        (("show", NAME, "--fresh"), lambda r: {r["path"]}),
        (("links", "other", "--fresh"), lambda r: {i["path"] for i in r["incoming"]}),
    ],
)
def test_json_output_is_exact(hostile_vault: Path, home: Home, args: tuple[str, ...], pick: object) -> None:
    code, out, err = _vaultctl(home, *args, "--json")
    assert code == 0, err
    _clean(out, err)  # JSON escapes them: \u001b, \u009b, \u202e
    assert NAME in pick(json.loads(out))  # type: ignore[operator]


def test_json_title_and_body_are_exact(hostile_vault: Path, home: Home) -> None:
    code, out, _ = _vaultctl(home, "list", "--fresh", "--json")
    assert code == 0
    assert TITLE in {n["title"] for n in json.loads(out)["notes"]}
    code, out, _ = _vaultctl(home, "show", NAME, "--json")
    body = json.loads(out)["body"]
    assert HOSTILE in body and (hostile_vault / NAME).read_text(encoding="utf-8").endswith(body)


def test_a_daemon_log_line_is_escaped(hostile_vault: Path, home: Home) -> None:
    """`daemon logs` prints the daemon's own log, which may quote a file name."""
    with open(home.home / "logs" / "vaultd.log", "a", encoding="utf-8") as fh:
        fh.write(f"a line naming {NAME}\n")
    code, out, err = _vaultctl(home, "daemon", "logs", "-n", "5")
    assert code == 0, err
    _clean(out, err)
    assert "\\x1b]0;pwned" in out
