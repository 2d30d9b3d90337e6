"""A counted adversarial round for the agent-host guard: drawn shell lines and tool payloads,
judged by the real hook entry point against a real daemon, and an oracle that runs every line
the guard lets through and checks whether a vault byte changed.

The generator composes wrapper x compound form x writer x path spelling from a seed (so a round
repeats exactly). A line the guard refuses is not run (the host would not run it); a line it
lets through is run by ``bash`` in a scratch layout, with ``HOME`` set to the scratch home, and
the vault is compared byte for byte with its copy before the line (then put back). File-tool
payloads let through are judged by where their path resolves. Read-only commands over the same
spellings give the false-refusal rate.

``python -m reliability.guard_round [--draws N] [--seed S]`` prints the counts; the regular
suite runs a slice (``tests/reliability/test_guard_round.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.guard_driver import bash, edit, judge

if TYPE_CHECKING:
    from collections.abc import Mapping

EXIT_BLOCK = 2
RUN_TIMEOUT_S = 10

WRAPPERS = ["", "timeout 60 ", "nice -n 5 ", "env A=1 ", "setsid -w ", "nohup ", "command ", "stdbuf -oL ", "flock {T}/lock "]
FORMS = [
    "{c}",
    "if true; then {c}; fi",
    "{{ {c}; }}",
    "for i in 1; do {c}; done",
    "! {c}",
    "echo `{c}`",
    "true && {c}",
    "false || {c}",
    "({c})",
    "true | {c}",
    "bash -c {q}",
    "sh -c {q}",
    "eval {q}",
    "echo {q} | sh",
    "x=$({c})",
    "f() {{ {c}; }}; f",
    "case a in a) {c};; esac",
    "while true; do {c}; break; done",
]
FILE_WRITERS = [
    "rm -f {F}",
    "mv {F} {T}/moved.md",
    "cp {T}/src.md {F}",
    "sed -i s/Alpha/Beta/ {F}",
    "echo x > {F}",
    "echo x >> {F}",
    "echo x >& {F}",
    "truncate -s 0 {F}",
    "chmod 000 {F}",
    "ln -f {F} {T}/hl.md && echo x >> {T}/hl.md",
    "awk -i inplace '{{print \"x\"}}' {F}",
    "sort -o {F} {F}",
    "gzip -f {F}",
    "patch {F} {T}/p.diff",
    "dd if=/dev/zero of={F} count=1",
    "python3 -c {pq}",
    "perl -pi -e s/Alpha/Beta/ {F}",
    "tee {F} < /dev/null",
    "install -m 644 {T}/src.md {F}",
    "cp /dev/null {F}",
]
FOLDER_WRITERS = [
    "rm -rf {D}",
    "find {D} -name '*.md' -delete",
    "mv {D} {T}/moved",
    "chmod -R 000 {D}",
    "tar -C {D} -xf {T}/a.tar",
    "cd {D} && rm -rf *",
    "cd {D} && patch -p0 < {T}/p.diff",
    "git -C {D} init -q && git -C {D} clean -fdxq",
    "git --work-tree={D} --git-dir={T}/g checkout -- .",
    "pushd {D} && rm -f Alpha.md",
]
FILES = [
    "{V}/Alpha.md",
    "{L}/../Alpha.md",
    "~/docs/vault/Alpha.md",
    "$HOME/docs/vault/Alpha.md",
    '"${{HOME}}/docs/vault/Alpha.md"',
    "{V}/./sub/../Alpha.md",
    "{V}//Alpha.md",
    "{V}/Al*.md",
    "{V}/{{Alpha,Zed}}.md",
    "{R}/Alpha.md",
    "'{V}/Alpha.md'",
]
FOLDERS = ["{V}", "{P}", "{V}/..", "{L}/..", "~/docs", "{V}/sub", "$HOME/docs/vault", "{R}"]
VAULTCTL = [
    "vaultctl proposals apply p20260101000000-00000000",
    "vaultctl vault policy v move=apply",
    "vaultctl undo last",
    "vaultctl delete Alpha --confirm",
]
READS = [
    "cat {F}",
    "grep -n Alpha {F}",
    "rg Alpha {D}",
    "ls -la {D}",
    "head -3 {F}",
    "tail -3 {F}",
    "wc -l {F}",
    "stat {F}",
    "git -C {V} log --oneline",
    "git -C {V} status",
    "git -C {V} diff",
    "find {D} -name '*.md'",
    "diff {F} {T}/src.md",
    "du -sh {D}",
    "vaultctl search alpha",
    "vaultctl show Alpha",
    "sed -n 1,5p {F}",
]
TOOLS = ["Edit", "Write", "MultiEdit", "NotebookEdit"]
TOOL_PATHS = [
    "{V}/Alpha.md",
    "{L}/../Alpha.md",
    "{V}/sub/New.md",
    "{H}/config.json",
    "{H}/journal.key",
    "{V}/.vaultd/x",
    "{U}/.claude/settings.json",
]


@dataclass
class Tally:
    lines: int = 0
    refused: int = 0
    ran: int = 0
    reached: list[str] = field(default_factory=list)  #: lines let through that changed a vault byte
    vaultctl: int = 0
    vaultctl_through: list[str] = field(default_factory=list)
    payloads: int = 0
    payloads_through: list[str] = field(default_factory=list)
    let_through: list[str] = field(default_factory=list)  #: writer lines the guard let through (all run)
    reads: int = 0
    false_refusals: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.lines} shell lines: {self.refused} refused, {self.ran} let through and run, "
            f"{len(self.reached)} reached a vault; {self.vaultctl} vaultctl lines: {len(self.vaultctl_through)} let through; "
            f"{self.payloads} file-tool payloads: {len(self.payloads_through)} let through to a vault or vaultd's files; "
            f"{self.reads} read-only lines: {len(self.false_refusals)} refused "
            f"({100 * len(self.false_refusals) / max(self.reads, 1):.1f}% false refusals)"
        )


class Layout:
    """The scratch home: a vault in a parent folder in the user's home, a link into the vault,
    and a folder outside holding the inputs the writers use."""

    def __init__(self, user: Path, vaultd_home: Path, outside: Path) -> None:
        self.user = user
        self.parent = user / "docs"
        self.vault = self.parent / "vault"
        self.outside = outside
        self.link = outside / "link"
        self.pristine = outside.parent / "pristine"
        self.names = {
            "V": str(self.vault),
            "P": str(self.parent),
            "L": str(self.link),
            "T": str(outside),
            "U": str(user),
            "H": str(vaultd_home),
            "R": os.path.relpath(self.vault, outside),
        }

    def make(self) -> None:
        (self.vault / "sub").mkdir(parents=True, exist_ok=True)
        (self.vault / "Alpha.md").write_text("# Alpha\n")
        (self.vault / "sub" / "Beta.md").write_text("# Beta\n")
        self.outside.mkdir(parents=True, exist_ok=True)
        if not self.link.is_symlink():
            self.link.symlink_to(self.vault / "sub")
        (self.outside / "src.md").write_text("other\n")
        (self.outside / "p.diff").write_text("--- Alpha.md\n+++ Alpha.md\n@@ -1 +1 @@\n-# Alpha\n+# Patched\n")
        subprocess.run(["tar", "-cf", str(self.outside / "a.tar"), "-C", str(self.outside), "src.md"], check=True)
        shutil.rmtree(self.pristine, ignore_errors=True)
        shutil.copytree(self.vault, self.pristine, symlinks=True)

    def digest(self) -> str:
        """Every name, mode and byte under the vault's parent (the vault moved away changes it too)."""
        h = hashlib.sha256()
        if not self.parent.exists():
            return "gone"
        for root, dirs, files in os.walk(self.parent):
            dirs[:] = sorted(d for d in dirs if d != ".vaultd")
            for name in sorted(files):
                path = Path(root) / name
                st = path.lstat()
                h.update(f"{path}\0{st.st_mode}\0".encode())
                try:
                    h.update(path.read_bytes())
                except OSError:
                    h.update(b"unreadable")
            h.update(f"{root}\0{os.lstat(root).st_mode}".encode())
        return h.hexdigest()

    def restore(self) -> None:
        for root, dirs, _ in os.walk(self.user):
            for d in dirs:
                os.chmod(Path(root) / d, 0o755)
        for root, _, files in os.walk(self.parent):
            for f in files:
                os.chmod(Path(root) / f, 0o644)
        moved = self.outside / "moved"
        if moved.exists() and not self.parent.exists():
            shutil.move(str(moved), str(self.parent))
        for name in ("moved", "moved.md", "hl.md", "g", "lock"):
            p = self.outside / name
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()
        keep = self.vault / ".vaultd"
        for child in list(self.vault.iterdir()) if self.vault.exists() else []:
            if child != keep:
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        self.vault.mkdir(parents=True, exist_ok=True)
        for child in self.pristine.iterdir():
            if child.name != ".vaultd":
                (shutil.copytree if child.is_dir() else shutil.copy2)(child, self.vault / child.name)
        for extra in self.parent.iterdir():
            if extra != self.vault:
                shutil.rmtree(extra) if extra.is_dir() and not extra.is_symlink() else extra.unlink()
        if not self.link.is_symlink():
            self.link.symlink_to(self.vault / "sub")


def _fill(template: str, names: Mapping[str, str], **more: str) -> str:
    return template.format(**names, **more)


def draw_lines(rng: random.Random, n: int, names: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        if rng.random() < 0.6:
            target = _fill(rng.choice(FILES), names)
            plain_target = target.strip("'\"")
            code = f"open('{plain_target}','a').write('x')" if "$" not in plain_target and "*" not in plain_target else "open('x','a')"
            writer = _fill(rng.choice(FILE_WRITERS), names, F=target, pq=shlex.quote(code))
        else:
            writer = _fill(rng.choice(FOLDER_WRITERS), names, D=_fill(rng.choice(FOLDERS), names))
        command = _fill(rng.choice(WRAPPERS), names) + writer
        form = rng.choice(FORMS)
        out.append(form.format(c=command, q=shlex.quote(command)))
    return out


def run_round(env: Mapping[str, str], layout: Layout, draws: int, seed: int, *, execute: bool = True) -> Tally:
    """Judge ``draws`` writer lines (and proportionate vaultctl lines, payloads and reads)."""
    rng = random.Random(seed)
    names = layout.names
    tally = Tally()
    cwd = names["T"]
    shell_env = {**env, "HOME": names["U"], "PATH": env.get("PATH", os.defpath)}
    ran_line: list[str] = []
    for line in draw_lines(rng, draws, names):
        tally.lines += 1
        code, _ = judge(bash(line, cwd), env)
        if code == EXIT_BLOCK:
            tally.refused += 1
            continue
        if not execute:
            continue
        before = layout.digest()
        ran_line.append(line)
        subprocess.run(["bash", "-c", line], cwd=cwd, env=shell_env, capture_output=True, timeout=RUN_TIMEOUT_S, check=False)
        tally.ran += 1
        if layout.digest() != before:
            tally.reached.append(line)
        layout.restore()
    for _ in range(max(draws // 10, 8)):
        form = rng.choice(FORMS)
        command = _fill(rng.choice(WRAPPERS), names) + rng.choice(VAULTCTL)
        line = form.format(c=command, q=shlex.quote(command))
        tally.vaultctl += 1
        if judge(bash(line, cwd), env)[0] != EXIT_BLOCK:
            tally.vaultctl_through.append(line)
    for tool in TOOLS:
        for template in TOOL_PATHS:
            tally.payloads += 1
            if judge(edit(tool, _fill(template, names), cwd), env)[0] != EXIT_BLOCK:
                tally.payloads_through.append(f"{tool} {template}")
    for template in READS:
        for spelling in FILES[:7]:
            line = _fill(template, names, F=_fill(spelling, names), D=names["V"])
            tally.reads += 1
            code, err = judge(bash(line, cwd), env)
            if code != 0:
                tally.false_refusals.append(f"{line}: {err.strip()[:200]}")
    tally.let_through = ran_line
    return tally


def main() -> None:
    from tests.support.harness import Daemon, Home, vaultctl

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    home = Home.create()
    daemon = Daemon(home)
    try:
        layout = Layout(home.root / "user", home.home, Path(tempfile.mkdtemp(prefix="guard-round-")) / "outside")
        layout.make()
        added = vaultctl(home, "vault", "add", "v", str(layout.vault))
        assert added.code == 0, added.err
        env: dict[str, Any] = {**home.env, "VAULTD_NO_AUTOSTART": "1"}
        tally = run_round(env, layout, args.draws, args.seed)
        print(tally.summary())
        for line in tally.reached + tally.vaultctl_through + tally.payloads_through + tally.false_refusals:
            print("  ", line)
    finally:
        daemon.stop()
        home.cleanup()


if __name__ == "__main__":
    main()
