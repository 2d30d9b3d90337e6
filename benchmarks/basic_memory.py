"""basic-memory, measured on the same corpus: installed from PyPI into its own venv under the
bench folder, indexing a COPY of the vault (it rewrites frontmatter), searched and written
through its stdio MCP server with the same ``mcp`` client that drives ``vaultctl mcp``.

Its index time is ``basic-memory project add NAME PATH``, which indexes before it returns; it is
capped, and a capped run reports the measured rate and an extrapolated full time, marked so.
"""

from __future__ import annotations

import glob
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.client.stdio import StdioServerParameters

from benchmarks import mcp_drive
from benchmarks.stats import Figure, missing, tree_rss_bytes

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from benchmarks.corpus import Corpus

VERSION = os.environ.get("VAULTD_BENCH_BM_VERSION", "0.24.1")  #: newest on PyPI when this was written
PROJECT = "bench"


@dataclass(frozen=True)
class Plan:
    index_cap_s: float = 600.0
    queries: int = 200
    writes: int = 20


def _log(msg: str) -> None:
    print(f"  basic-memory: {msg}", file=sys.stderr, flush=True)


def runs_python312(candidate: str) -> bool:
    """Whether ``candidate`` really is a Python >= 3.12: a pyenv shim for a version that is not
    selected is on PATH under that name but only prints "command not found", so the name proves
    nothing until the interpreter answers."""
    try:
        answered = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return answered.returncode == 0 and answered.stdout.strip() == "True"


def _python312() -> str | None:
    """A Python >= 3.12 (basic-memory requires it): on PATH, else a pyenv version, each one asked."""
    named = [found for name in ("python3.13", "python3.12") if (found := shutil.which(name))]
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    installed = sorted(glob.glob(str(root / "versions" / "3.1[2-9]*" / "bin" / "python3")), reverse=True)
    return next((candidate for candidate in [*named, *installed] if runs_python312(candidate)), None)


def install(bench: Path) -> tuple[Path | None, str]:
    """The ``basic-memory`` executable in ``bench/basic-memory-VERSION``, installing it when absent."""
    venv = bench / f"basic-memory-{VERSION}"
    exe = venv / "bin" / "basic-memory"
    if not exe.exists():
        python = _python312()
        if python is None:
            return None, "cannot install: basic-memory needs Python >= 3.12 and none was found"
        _log(f"installing basic-memory=={VERSION} into {venv} with {python}")
        shutil.rmtree(venv, ignore_errors=True)
        log = bench / f"basic-memory-{VERSION}-install.log"
        with open(log, "w") as out:
            made = subprocess.run([python, "-m", "venv", str(venv)], stdout=out, stderr=out, check=False)
            if made.returncode == 0:
                made = subprocess.run(
                    [str(venv / "bin" / "python"), "-m", "pip", "install", f"basic-memory=={VERSION}"], stdout=out, stderr=out, check=False
                )
        if made.returncode != 0 or not exe.exists():
            return None, f"cannot install basic-memory=={VERSION}: pip failed, see {log}"
    shown = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False).stdout.split()
    return exe, shown[-1] if shown else "unknown"


class Sandbox:
    """An isolated home and config folder; the project is a copy of the corpus."""

    def __init__(self, exe: Path, work: Path) -> None:
        self.exe = exe
        self.root = Path(tempfile.mkdtemp(prefix="bm", dir=work))
        self.vault = self.root / "vault"
        (self.root / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "BASIC_MEMORY_", "VAULTD_"))}
        env.update(HOME=str(self.root / "home"), BASIC_MEMORY_CONFIG_DIR=str(self.root / "config"), HF_HUB_OFFLINE="1", DO_NOT_TRACK="1")
        self.env = env
        self.index_cpu = 0.0

    def indexed_notes(self) -> int:
        db = self.root / "config" / "memory.db"
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
                return int(con.execute("SELECT count(*) FROM entity").fetchone()[0])
        except sqlite3.Error:
            return 0

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def measure(corpus: Corpus, plan: Plan, bench: Path, work: Path) -> tuple[dict[str, Figure], dict[str, Any]]:
    exe, version = install(bench)
    if exe is None:
        _log(version)
        return {k: missing("s", version) for k in ("cold_build", "mcp_search", "create")}, {"error": version}
    facts: dict[str, Any] = {"version": version, "pinned": VERSION}
    box = Sandbox(exe, work)
    try:
        corpus.copy_to(box.vault)
        figs = {"cold_build": _index(box, corpus, plan)}
        figs["cold_build_cpu"] = Figure(
            "s", [box.index_cpu], "CPU time of `project add` (its process tree, reaped)", extrapolated=figs["cold_build"].extrapolated
        )
        if figs["cold_build"].extrapolated and figs["cold_build"].samples:
            capped = box.indexed_notes()
            figs["cold_build_cpu"].samples = [box.index_cpu * corpus.notes / capped] if capped else []
        figs.update(_mcp(box, corpus, plan))
    finally:
        box.cleanup()
    return figs, facts


def _index(box: Sandbox, corpus: Corpus, plan: Plan) -> Figure:
    cmd = [str(box.exe), "project", "add", PROJECT, str(box.vault)]
    with open(box.root / "index.out", "w") as out:
        cpu = _children_cpu()
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=box.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            proc.wait(plan.index_cap_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        elapsed = time.perf_counter() - started
    box.index_cpu = _children_cpu() - cpu
    done = box.indexed_notes()
    tail = (box.root / "index.out").read_text(errors="replace").strip().splitlines()[-1:]
    if proc.returncode == 0:
        _log(f"indexed {done} notes in {elapsed:.0f} s ({done / elapsed:.2f} notes/s)")
        return Figure("s", [elapsed], f"`basic-memory project add` (indexes before it returns): {done} notes, {done / elapsed:.2f} notes/s")
    if proc.returncode is not None and proc.returncode > 0:
        return missing("s", f"`project add` failed ({proc.returncode}): {' '.join(tail)[:200]}")
    rate = done / elapsed if done else 0.0
    if not rate:
        return missing("s", f"capped at {plan.index_cap_s:.0f} s with no note indexed")
    full = corpus.notes / rate
    _log(f"capped at {elapsed:.0f} s: {done} notes indexed ({rate:.2f}/s), full time extrapolated {full:.0f} s")
    return Figure(
        "s",
        [full],
        f"EXTRAPOLATED: capped at {elapsed:.0f} s with {done}/{corpus.notes} notes "
        f"indexed ({rate:.2f} notes/s measured); its MCP server then indexes the rest while it "
        "answers the searches below",
        extrapolated=True,
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _mcp(box: Sandbox, corpus: Corpus, plan: Plan) -> dict[str, Figure]:
    server = StdioServerParameters(command=str(box.exe), args=["mcp", "--project", PROJECT], env=box.env)
    queries = corpus.queries()[: plan.queries]
    searches = [("search_notes", {"query": q, "project": PROJECT}) for q in queries]
    rss: list[float] = []
    writes = Figure("s", note="tools/call write_note of a new note, sequential")
    write_errors: list[str] = []

    async def after(session: ClientSession, times: mcp_drive.CallTimes) -> None:
        pid = mcp_drive.child_pid(b"basic-memory", b"mcp")
        if pid is not None:
            rss.append(float(tree_rss_bytes(pid)))
        for i in range(plan.writes):
            args = {
                "title": f"Bench write {i}",
                "content": f"# Bench write {i}\n\nA benchmark note, number {i}.\n",
                "directory": "bench-writes",
                "project": PROJECT,
            }
            t = time.perf_counter()
            result = await session.call_tool("write_note", args)
            writes.samples.append(time.perf_counter() - t)
            if result.is_error:
                write_errors.append(mcp_drive.text_of(result)[:200])

    try:
        times = mcp_drive.drive(server, searches, box.root / "mcp.err", read_timeout_s=600, warmup=5, after=after)
    except Exception as exc:  # noqa: BLE001 - a product under test failed: report it, run on
        cause: BaseException = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) else exc
        why = f"MCP server failed: {type(cause).__name__}: {str(cause)[:200]}"
        return {
            "mcp_search": missing("s", why),
            "create": missing("s", why),
            "rss_indexed": missing("B", why),
            "rss_mcp": missing("B", why),
        }
    empty = sum(1 for t in times.texts if t.startswith("No results"))
    search = Figure(
        "s",
        times.latencies,
        f"tools/call search_notes via `basic-memory mcp` (mcp SDK client, stdio); "
        f"handshake {times.handshake:.1f} s; {empty}/{len(queries)} queries found nothing",
    )
    if times.errors:
        search.note += f"; {len(times.errors)} tool errors, first: {times.errors[0][:120]}"
    if write_errors:
        writes.note += f"; {len(write_errors)} errors, first: {write_errors[0]}"
    _log(f"search p50 {search.p50 * 1e3:.1f} ms, write_note p50 {writes.p50 * 1e3:.0f} ms")
    return {
        "mcp_search": search,
        "create": writes,
        "rss_indexed": Figure("B", rss, "VmRSS of the MCP server process tree after the searches")
        if rss
        else missing("B", "MCP server process not found"),
        "rss_mcp": Figure("B", rss, "the same process: its MCP server is the whole of it")
        if rss
        else missing("B", "MCP server process not found"),
    }
