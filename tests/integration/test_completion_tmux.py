"""Tab completion as a person gets it: an interactive shell in tmux, with the script
``vaultctl completion SHELL`` prints, completing commands, options, vault ids and note names
against a real daemon.

tmux comes from Debian's packages (.ci/run installs it). Without it the tests are skipped on a
developer's machine, and fail under CI (``CI=true``), where a skip would hide that they never ran.
bash is required; zsh and fish are tried where they are installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import REPO, Daemon, Home, vaultctl
from tests.support.wait import WaitTimeout, wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def _tmux() -> str:
    found = shutil.which("tmux")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is missing under CI; .ci/run installs it from Debian's packages")
        pytest.skip("tmux is not installed (apt-get install tmux)")
    return found


class Pane:
    """One interactive shell in a private tmux server, its prompt ``$ ``."""

    def __init__(self, tmux: str, socket: Path, env: dict[str, str], shell: str) -> None:
        self.tmux, self.socket = tmux, socket
        self._tmux("new-session", "-d", "-x", "160", "-y", "40", "-s", "t", shell, env=env)
        wait_until(lambda: self.screen().rstrip().endswith("$"), 20, "the shell's prompt")

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        out = subprocess.run([self.tmux, "-S", str(self.socket), *args], env=env, capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def line(self) -> str:
        """The last non-empty line: the prompt and what is typed after it."""
        return [ln for ln in self.screen().splitlines() if ln.strip()][-1]

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)

    def key(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def complete(self, typed: str, expected: str) -> None:
        """Type ``typed``, press Tab, and wait for the line to read ``$ expected``; then clear it.

        tmux drops a line's trailing spaces, so a completion's closing space is seen by typing a
        mark after it: ``expected`` ending in a space must be followed by the mark, not touch it."""
        self.type(typed)
        self.key("Tab")
        want = f"$ {expected}"
        try:
            wait_until(lambda: self.line() == want.rstrip(), 20, f"'{typed}<Tab>' to become '{expected}'")
            self.type("@")
            wait_until(lambda: self.line() == want + "@", 10, f"'{expected}@' after the completion")
        except WaitTimeout as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen()}") from exc
        finally:
            self.key("C-u")
            wait_until(lambda: self.line() == "$", 10, "the cleared prompt")

    def close(self) -> None:
        subprocess.run([self.tmux, "-S", str(self.socket), "kill-server"], capture_output=True, timeout=30)


def _shell(name: str, script: Path, sample_vault: Path, tmp_path: Path, env: dict[str, str]) -> str:
    """The command that starts ``name`` interactively with the completion script loaded and ``$ `` as prompt."""
    if name == "bash":
        rcfile = tmp_path / "bashrc"
        rcfile.write_text(f"PS1='$ '\nsource {script}\ncd {sample_vault}\n")
        env["INPUTRC"] = str(tmp_path / "inputrc")  # the machine's readline settings stay out
        (tmp_path / "inputrc").write_text("set bell-style none\n")
        return f"bash --noprofile --rcfile {rcfile} -i"
    if name == "zsh":
        (tmp_path / "zdot").mkdir()
        (tmp_path / "zdot" / ".zshrc").write_text(
            f"PS1='$ '\nautoload -Uz compinit\ncompinit -u -d {tmp_path}/zcompdump\nsource {script}\ncd {sample_vault}\n"
        )
        env["ZDOTDIR"] = str(tmp_path / "zdot")
        return "zsh -i"
    init = tmp_path / "init.fish"
    init.write_text(
        "set -g fish_autosuggestion_enabled 0\nfunction fish_prompt; echo -n '$ '; end\nfunction fish_greeting; end\n"
        f"source {script}\ncd {sample_vault}\n"
    )
    env["XDG_CONFIG_HOME"] = str(tmp_path / "fish-config")
    return f"fish --no-config -C 'source {init}'"


@pytest.fixture(params=["bash", "zsh", "fish"])
def pane(request: pytest.FixtureRequest, home: Home, daemon: Daemon, sample_vault: Path, tmp_path: Path) -> Iterator[Pane]:
    name: str = request.param
    tmux = _tmux()
    if name != "bash" and shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")
    assert vaultctl(home, "vault", "add", "sample", str(sample_vault)).code == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vaultctl").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vaultctl.main "$@"\n')
    (bin_dir / "vaultctl").chmod(0o755)
    script = tmp_path / f"vaultctl.{name}"
    printed = vaultctl(home, "completion", name)
    assert printed.code == 0 and "vaultctl __complete" in printed.out
    script.write_text(printed.out)
    env = {
        **home.env,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHONPATH": str(REPO),
        "VAULTD_NO_AUTOSTART": "1",
        "TERM": "xterm",
    }
    p = Pane(tmux, tmp_path / "tmux.sock", env, _shell(name, script, sample_vault, tmp_path, env))
    yield p
    p.close()


def test_a_shell_completes_commands_options_vaults_and_notes_under_tmux(pane: Pane) -> None:
    pane.complete("vaultctl sea", "vaultctl search ")
    pane.complete("vaultctl log ta", "vaultctl log tail ")
    pane.complete("vaultctl show --no-p", "vaultctl show --no-pager ")
    pane.complete("vaultctl --color ne", "vaultctl --color never ")
    pane.complete("vaultctl search x --vault sa", "vaultctl search x --vault sample ")
    pane.complete("vaultctl show Alp", "vaultctl show Alpha\\ Plan ")
    pane.complete("vaultctl show alp", "vaultctl show Alpha\\ Plan ")  # names compare case-insensitively
    pane.complete("vaultctl show 'Grace H", "vaultctl show 'Grace Hopper' ")
    pane.complete("vaultctl links projects/al", "vaultctl links projects/alpha/")
    pane.complete("vaultctl help lo", "vaultctl help log ")
    pane.complete("vaultctl --color=ne", "vaultctl --color=never ")
    pane.complete("vaultctl new x --body REA", "vaultctl new x --body README.md ")  # a file: the shell completes it
