"""The benchmark finds basic-memory's interpreter by asking it, not by its name on PATH."""

from __future__ import annotations

import stat
import sys
from typing import TYPE_CHECKING

from benchmarks.basic_memory import runs_python312

if TYPE_CHECKING:
    from pathlib import Path


def _script(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_pyenv_shim_for_an_unselected_version_is_not_a_python(tmp_path: Path) -> None:
    shim = _script(tmp_path / "python3.12", 'echo "pyenv: python3.12: command not found" >&2; exit 127')
    assert not runs_python312(shim)


def test_a_shim_that_exits_zero_without_answering_is_not_a_python(tmp_path: Path) -> None:
    assert not runs_python312(_script(tmp_path / "python3.12", "echo hello"))


def test_a_missing_file_is_not_a_python(tmp_path: Path) -> None:
    assert not runs_python312(str(tmp_path / "absent"))


def test_the_interpreter_is_judged_by_its_version() -> None:
    assert runs_python312(sys.executable) is (sys.version_info >= (3, 12))


def test_a_python_312_answers_yes(tmp_path: Path) -> None:
    # The interpreter itself stands in for 3.12 here: a wrapper that reports a new enough version.
    fake = _script(tmp_path / "python3.12", f'exec {sys.executable} -c "print(True)"')
    assert runs_python312(fake)
