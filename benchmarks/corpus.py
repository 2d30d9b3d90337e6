"""Generated vaults: made once per (notes, seed) under the bench folder, never inside the repo.

The generator is ``/work/shared/bench/gen_vault.py`` (``$VAULTD_BENCH_GEN`` overrides it); it is
deterministic, so a corpus folder that holds its ``queries.txt`` is reused as it is.
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
        """A private copy of the vault (systems under test write runtime folders or rewrite notes)."""
        shutil.copytree(self.vault, dest, symlinks=True)
        return dest


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
