"""The limits: what the same work costs with nothing of vaultd's around it.

* read loop: ``Path.read_text`` of every note, in-process (files already in the page cache);
* bare FTS5: one apsw connection, one FTS5 table (title, meta, body; unicode61 with diacritics
  removed, as vaultd's), read + crude frontmatter split + one ``executemany``; queries ranked by
  bm25 with vaultd's column weights, with a snippet, limit 20, every word a quoted phrase (AND);
* ripgrep: a literal, case-insensitive AND: ``rg -l -i -F`` for the first word over the vault,
  then each further word over the files still matching (one process per word);
* durable create: the least a journaled, crash-safe create of a new note can do on this disk: a
  journal file written and synced with its folder, the note written to a temporary file, synced,
  renamed into place and its folder synced, then a commit marker made and its folder synced.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from benchmarks.stats import Figure, Stopwatch, missing

if TYPE_CHECKING:
    from benchmarks.corpus import Corpus

_SEARCH = (
    "SELECT rowid, -bm25(fts, 5.0, 2.0, 1.0), snippet(fts, -1, '**', '**', '…', 16) FROM fts "
    "WHERE fts MATCH ? ORDER BY bm25(fts, 5.0, 2.0, 1.0) LIMIT 20"
)


def _split(text: str, stem: str) -> tuple[str, str, str]:
    """(title, meta, body): the frontmatter's title, its other lines, and the rest; no YAML parse."""
    if text.startswith("---\n") and (end := text.find("\n---\n", 4)) != -1:
        title, meta = stem, []
        for line in text[4:end].splitlines():
            if line.startswith("title:"):
                title = line[6:].strip().strip('"')
            else:
                meta.append(line)
        return title, "\n".join(meta), text[end + 5 :]
    return stem, "", text


def _match(query: str) -> str:
    return " ".join('"' + word.replace('"', '""') + '"' for word in query.split())


def read_loop(corpus: Corpus, runs: int) -> Figure:
    files = corpus.files()
    fig = Figure("s", note=f"read_text of all {len(files)} notes in one Python loop (page cache warm)")
    for _ in range(runs):
        with Stopwatch() as sw:
            for f in files:
                f.read_text(encoding="utf-8")
        fig.samples.append(sw.seconds)
    return fig


def durable_create(work: Path, writes: int) -> Figure:
    """Timed in the same run as vaultd's creates, in a folder of the same disk."""
    root = Path(tempfile.mkdtemp(prefix="durable-", dir=work))
    journal, notes = root / "journal", root / "notes"
    journal.mkdir()
    notes.mkdir()
    fig = Figure("s", note="journal file + fsync + folder fsync; temp note + fsync, rename, folder fsync; marker + folder fsync")

    def write_synced(path: Path, data: bytes) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def sync_folder(path: Path) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    try:
        for i in range(writes):
            body = f"---\ntitle: Bench write {i}\n---\nA benchmark note, number {i}, with the word benchpatchold{i}.\n".encode()
            with Stopwatch() as sw:
                write_synced(journal / f"{i}.json", b'{"op":"create","path":"w%d.md"}' % i)
                sync_folder(journal)
                write_synced(notes / f".w{i}.tmp", body)
                os.rename(notes / f".w{i}.tmp", notes / f"w{i}.md")
                sync_folder(notes)
                os.close(os.open(journal / f"{i}.done", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                sync_folder(journal)
            fig.samples.append(sw.seconds)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return fig


def fts(corpus: Corpus, runs: int, queries: int, work: Path) -> dict[str, Figure]:
    files = corpus.files()
    build = Figure("s", note="read + frontmatter split + FTS5 executemany in one transaction (WAL, sync NORMAL)")
    build_cpu = Figure("s", note="process CPU time of the same build")
    folder = Path(tempfile.mkdtemp(prefix="fts", dir=work))
    try:
        for run in range(runs):
            path = folder / f"bare{run}.sqlite"
            cpu = time.process_time()
            with Stopwatch() as sw:
                con = apsw.Connection(str(path))
                con.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
                con.execute("CREATE VIRTUAL TABLE fts USING fts5(title, meta, body, tokenize='unicode61 remove_diacritics 2')")
                rows = [_split(f.read_text(encoding="utf-8"), f.stem) for f in files]
                with con:
                    con.executemany("INSERT INTO fts(title, meta, body) VALUES (?, ?, ?)", rows)
            build.samples.append(sw.seconds)
            build_cpu.samples.append(time.process_time() - cpu)
            if run < runs - 1:
                con.close()
        size = sum(p.stat().st_size for p in folder.glob(f"bare{runs - 1}.sqlite*"))
        search = Figure("s", note="in-process bm25 + snippet, limit 20, words ANDed as quoted phrases")
        qs = corpus.queries()[:queries]
        for q in qs[:20]:
            con.execute(_SEARCH, (_match(q),)).fetchall()
        hits = 0
        for q in qs:
            with Stopwatch() as sw:
                hits += len(con.execute(_SEARCH, (_match(q),)).fetchall())
            search.samples.append(sw.seconds)
        search.note += f"; {hits / len(qs):.1f} hits/query"
        con.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "cold_build": build,
        "cold_build_cpu": build_cpu,
        "search": search,
        "index_cache": Figure("B", [float(size)], "the bare FTS5 file"),
    }


def ensure_ripgrep() -> str | None:
    """rg on PATH; when it is missing and this runs as root with apt-get, Debian's package is
    installed first (the run compares against ripgrep, so it brings it), else None."""
    rg = shutil.which("rg")
    if rg is None and shutil.which("apt-get") and os.geteuid() == 0:
        print("installing ripgrep: apt-get install ripgrep", file=sys.stderr, flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for step in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "ripgrep"]):
            subprocess.run(step, env=env, capture_output=True, check=False)
        rg = shutil.which("rg")
    return rg


RG_NAMES = 2000  #: file names per rg call: the kernel bounds a command line (E2BIG at 30,000)


def ripgrep(corpus: Corpus, queries: int) -> Figure:
    rg = ensure_ripgrep()
    if rg is None:
        return missing("s", "rg not found and not installable here (apt-get install ripgrep as root)")
    fig = Figure("s", note="literal AND: `rg -l -i -F WORD` over the vault, then over the files left, per word")
    root = str(corpus.vault)
    env = dict(os.environ, RIPGREP_CONFIG_PATH="")
    grep = [rg, "-l", "-i", "-F", "--"]
    for q in corpus.queries()[:queries]:
        words = q.split()
        with Stopwatch() as sw:
            found = subprocess.run([rg, "-l", "-i", "-F", "--", words[0], root], capture_output=True, env=env, check=False).stdout
            for word in words[1:]:
                names = found.decode().splitlines()
                if not names:
                    break
                found = b"".join(  # as xargs would: a command line holds only so many names
                    subprocess.run([*grep, word, *names[i : i + RG_NAMES]], capture_output=True, env=env, check=False).stdout
                    for i in range(0, len(names), RG_NAMES)
                )
        fig.samples.append(sw.seconds)
    return fig
