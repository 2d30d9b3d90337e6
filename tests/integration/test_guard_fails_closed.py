"""The shell guard fails closed: every reproduced way around it, through the real hook entry point
against a real daemon, is refused, and plain reads still go through.

The vault sits in a parent folder (``docs/vault``) in the user's home; a link into the vault's
``sub`` folder sits outside it. Placeholders: {V} the vault, {P} its parent, {L} the link,
{H} vaultd's home, {U} the user's home, {T} a folder holding no vault.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.guard_driver import bash, edit, judge
from tests.support.harness import register

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

EXIT_BLOCK = 2

REFUSED = [
    # a folder that holds the vault, or the vault through ..
    "find {P} -delete",
    "rm -rf {V}/..",
    "cd {P} && rm -rf *",
    "mv {P} {T}/moved",
    "chmod -R 000 {P}",
    "git -C {P} clean -fdx",
    "cd {U} && git clean -fdx",
    # compound commands and ordinary grammar
    "if true; then rm {V}/Alpha.md; fi",
    "{{ rm {V}/Alpha.md; }}",
    "for f in Alpha.md; do rm {V}/$f; done",
    "! rm {V}/Alpha.md",
    "echo `rm {V}/Alpha.md`",
    "echo x >& {V}/Alpha.md",
    "true;>{V}/Alpha.md",
    "(>{V}/Alpha.md)",
    "true|>{V}/Alpha.md",
    "case x in x) rm {V}/Alpha.md;; esac",
    "f() {{ rm {V}/Alpha.md; }}; f",
    "x=$(rm {V}/Alpha.md)",
    # wrappers and interpreters, around vaultctl and around writers
    "timeout 60 vaultctl proposals apply p20260101000000-00000000",
    "setsid vaultctl proposals apply p1",
    "flock {T}/lock vaultctl proposals apply p1",
    "busybox rm {V}/Alpha.md",
    "nice -n 5 env A=1 vaultctl vault policy v move=apply",
    "bash -c 'rm {V}/Alpha.md'",
    "sh -c 'vaultctl proposals apply p1'",
    "echo 'rm {V}/Alpha.md' | sh",
    "echo vaultctl proposals apply p1 | bash",
    'eval "rm {V}/Alpha.md"',
    "eval vaultctl proposals apply p1",
    "python3 -c \"import os; os.remove('{V}/Alpha.md')\"",
    "python3 -m vaultctl proposals apply p1",
    "echo {V}/Alpha.md | xargs rm",
    # hard links
    "ln {V}/Alpha.md {T}/x",
    "cp -l {V}/Alpha.md {T}/x",
    # writers in place
    "awk -i inplace '{{print}}' {V}/Alpha.md",
    "sort -o {V}/Alpha.md {V}/Alpha.md",
    "gzip {V}/Alpha.md",
    "tar -C {V} -xf {T}/a.tar",
    "patch {V}/Alpha.md {T}/p.diff",
    "cd {V} && patch -p1 < {T}/p.diff",
    "curl -o {V}/Alpha.md https://example.com/",
    "pushd {V} && rm Alpha.md",
    "git --work-tree={V} checkout -- .",
    "sed -i s/a/b/ {V}/Alpha.md",
    "dd if=/dev/zero of={V}/Alpha.md",
    # a link followed by ..
    "rm -rf {L}/..",
    "rm -rf {L}/../Alpha.md",
    # vaultd's own state and the hosts' hook files, through the shell
    "sed -i s/guard/off/ {H}/config.json",
    "rm -rf {U}/.claude",
    "echo '{{}}' > {U}/.codex/hooks.json",
    # a line the parser cannot read that names the vault
    "rm {V}/Alpha.md 'unclosed",
]

ALLOWED = [
    "cat {V}/Alpha.md",
    "grep -rn Alpha {V}",
    "rg Alpha {P}",
    "ls -la {P} {V}",
    "head -5 {V}/Alpha.md && tail {V}/Alpha.md",
    "git -C {V} log --oneline && git -C {V} status && git -C {V} diff",
    "find {P} -name '*.md'",
    "vaultctl search alpha --json",
    "vaultctl show Alpha",
    "echo hi > {T}/out.txt",
    "cd {T} && rm -rf *",
    "rm -rf {T}/junk",
    "pytest -q tests/",
]


@pytest.fixture
def layout(daemon: Daemon, home: Home, tmp_path: Path) -> dict[str, str]:
    user = home.root / "user"
    parent = user / "docs"
    vault = parent / "vault"
    (vault / "sub").mkdir(parents=True)
    (vault / "Alpha.md").write_text("# Alpha\n")
    (user / ".codex").mkdir(parents=True, exist_ok=True)
    register(home, vault)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = outside / "link"
    link.symlink_to(vault / "sub")
    return {"V": str(vault), "P": str(parent), "L": str(link), "H": str(home.home), "U": str(user), "T": str(outside)}


@pytest.fixture
def env(home: Home) -> dict[str, str]:
    return {**home.env, "VAULTD_NO_AUTOSTART": "1"}


def test_every_way_around_the_guard_is_refused(layout: dict[str, str], env: dict[str, str]) -> None:
    """One daemon for the whole table (a daemon per line would cost a start each)."""
    passed = []
    for line in REFUSED:
        code, err = judge(bash(line.format(**layout), cwd=layout["T"]), env)
        if code != EXIT_BLOCK or "refused by vaultd's guard" not in err:
            passed.append(line)
    assert passed == []


def test_reads_and_writes_elsewhere_go_through(layout: dict[str, str], env: dict[str, str]) -> None:
    refused = [
        (line, err) for line in ALLOWED for code, err in [judge(bash(line.format(**layout), cwd=layout["T"]), env)] if code != 0 or err
    ]
    assert refused == []


FILE_TOOLS = [
    ("Edit", "{H}/config.json"),
    ("Write", "{H}/journal.key"),
    ("Write", "{H}/setup/claude-x.json"),
    ("Edit", "{U}/.claude/settings.json"),
    ("Write", "{U}/.claude.json"),
    ("Write", "{U}/.codex/hooks.json"),
    ("Edit", "{U}/.codex/config.toml"),
    ("Edit", "{U}/.gemini/settings.json"),
    ("MultiEdit", "{T}/.claude/settings.local.json"),
    ("NotebookEdit", "{L}/../Alpha.md"),
]


def test_the_file_tools_cannot_turn_the_guard_off(layout: dict[str, str], env: dict[str, str]) -> None:
    let_through = [
        (tool, path) for tool, path in FILE_TOOLS if judge(edit(tool, path.format(**layout), cwd=layout["T"]), env)[0] != EXIT_BLOCK
    ]
    assert let_through == []


def test_an_edit_in_a_project_folder_goes_through(layout: dict[str, str], env: dict[str, str]) -> None:
    assert judge(edit("Write", layout["T"] + "/src/app.py", cwd=layout["T"]), env) == (0, "")
