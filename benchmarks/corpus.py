"""Generated vaults: made once per (notes, seed) under the bench folder, never inside the repo.

The generator is ``/work/shared/bench/gen_vault.py`` (``$VAULTD_BENCH_GEN`` overrides it); it is
deterministic, so a corpus folder that holds its ``queries.txt`` is reused as it is. Vaults past
what the generator can write (:data:`GENERATOR_MAX`) are composed of generated 10,000-note vaults
side by side (:func:`composite`); :func:`for_size` picks the one way or the other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

GENERATOR = Path(os.environ.get("VAULTD_BENCH_GEN", "/work/shared/bench/gen_vault.py"))
REPO = Path(__file__).resolve().parents[1]


def bench_dir() -> Path:
    """``$VAULTD_BENCH_DIR``, else ``<tmp>/vaultd-bench``; refused inside the repository."""
    folder = Path(os.environ.get("VAULTD_BENCH_DIR") or Path(tempfile.gettempdir()) / "vaultd-bench").resolve()
    if folder == REPO or REPO in folder.parents:
        raise SystemExit(f"the bench folder {folder} is inside the repository; set VAULTD_BENCH_DIR elsewhere")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True)
class Corpus:
    root: Path  #: the generator's OUTDIR
    notes: int
    seed: int

    @property
    def vault(self) -> Path:
        """The folder of notes: the vault every system indexes (through a copy)."""
        return self.root / "notes"

    def queries(self) -> list[str]:
        lines = (self.root / "queries.txt").read_text(encoding="utf-8").splitlines()
        return [q for q in lines if q.strip()]

    def paths(self) -> list[str]:
        """Vault-relative paths of the notes, in manifest order."""
        out = []
        with open(self.root / "manifest.jsonl", encoding="utf-8") as f:
            for line in f:
                path = json.loads(line)["path"]
                out.append(path.removeprefix("notes/"))
        return out

    def files(self) -> list[Path]:
        return sorted(self.vault.rglob("*.md"))

    def copy_to(self, dest: Path) -> Path:
        """A private copy of the vault (systems under test write state folders or rewrite notes)."""
        shutil.copytree(self.vault, dest, symlinks=True)
        return dest


#: The largest vault the generator writes: 8 % of its notes are people, and its 63 first and 59
#: last names give 3,717 distinct people, so past about 46,000 notes it looks for a new name forever.
GENERATOR_MAX = 40_000
PART = 10_000  #: the notes of each generated vault a composite is made of


@dataclass(frozen=True)
class Composite(Corpus):
    """Generated 10,000-note vaults (seeds ``seed`` to ``seed + parts - 1``) in one folder each.

    Same link shapes as a generated vault; the parts' people share names across folders, so bare
    links to them are ambiguous, as in a big real vault. Queries are taken from every part in
    turn, so a search run touches the whole vault.
    """

    parts: tuple[Corpus, ...] = ()

    @property
    def vault(self) -> Path:
        return self.root

    def queries(self) -> list[str]:
        each = [part.queries() for part in self.parts]
        return [q for group in zip(*each, strict=False) for q in group]

    def paths(self) -> list[str]:
        return [f"{_folder(k)}/{path}" for k, part in enumerate(self.parts) for path in part.paths()]


def _folder(k: int) -> str:
    return f"part{k + 1:02d}"


def composite(notes: int, seed: int) -> Composite:
    """A vault of ``notes`` (a multiple of 10,000) made of generated vaults side by side.

    The folders hold hard links to the generated files (no copy; nothing in the repository), and
    the composite is complete once its marker file exists.
    """
    if notes % PART:
        raise SystemExit(f"a vault of {notes:,} notes is composed of {PART:,}-note parts: ask for a multiple of {PART:,}")
    parts = tuple(ensure(PART, seed + k) for k in range(notes // PART))
    root = bench_dir() / "corpora" / f"n{notes}-s{seed}-composite"
    done = root.parent / (root.name + ".complete")
    if not done.exists():
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        for k, part in enumerate(parts):
            shutil.copytree(part.vault, root / _folder(k), copy_function=os.link)
        done.write_text("")
    return Composite(root, notes, seed, parts)


def for_size(notes: int, seed: int) -> Corpus:
    """The corpus of ``notes`` notes: generated when the generator can write it, else composed."""
    return ensure(notes, seed) if notes <= GENERATOR_MAX else composite(notes, seed)


def ensure(notes: int, seed: int, where: Path | None = None) -> Corpus:
    root = (where or bench_dir() / "corpora") / f"n{notes}-s{seed}"
    if not (root / "queries.txt").exists():
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {notes} notes (seed {seed}) into {root}", file=sys.stderr, flush=True)
        subprocess.run(
            [sys.executable, str(GENERATOR), str(root), "--notes", str(notes), "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL
        )
    return Corpus(root, notes, seed)
