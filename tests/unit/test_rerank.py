"""The optional rerank model: loads from the installed wheel with no network, and falls back to
BM25 (None, with why) when it is absent or cannot load. Each case runs in a fresh interpreter,
since the model is loaded once per process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

from tests.support.harness import REPO

if TYPE_CHECKING:
    from pathlib import Path


def _run(code: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=REPO, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]  # the answer; an unconfigured log may print before it


def test_the_model_loads_and_ranks_with_no_network() -> None:
    out = _run(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("no network here")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from vaultd.retrieve import rerank
        scores, status, note = rerank.rerank(
            "how does the journal recover after a crash",
            ["tomatoes grow in the garden", "the journal rolls back an interrupted operation after a crash"],
            [1.0, 1.0],
        )
        print(status.value, scores[1] > scores[0], note == "")
        """
    )
    assert out == "used True True"


def test_an_absent_model_falls_back() -> None:
    out = _run(
        """
        import sys
        sys.modules["wordllama"] = None  # import fails as if the extra were not installed
        from vaultd.retrieve import rerank
        scores, status, note = rerank.rerank("q", ["a", "b"], [2.0, 1.0])
        print(scores, status.value, "vaultd[rerank]" in note)
        """
    )
    assert out == "None absent True"


def test_a_model_that_does_not_load_falls_back(tmp_path: Path) -> None:
    out = _run(
        """
        from vaultd.retrieve import rerank
        first = rerank.rerank("q", ["a"], [1.0])
        second = rerank.rerank("q", ["a"], [1.0])
        print(first[0], first[1].value, second[1].value)
        """,
        env={**os.environ, "VAULTD_RERANK_WEIGHTS": str(tmp_path)},
    )
    assert out == "None failed failed"
