"""The optional rerank: a small local embedding model that reorders BM25's best passages.

The model is WordLlama's ``l2_supercat`` (256 dimensions, 16 MB of weights inside the
``wordllama`` wheel, the ``vaultd[rerank]`` extra). It is loaded from the installed package's own
folder with downloads disabled, once per daemon, on the first rerank: nothing is fetched, ever.
``VAULTD_RERANK_WEIGHTS`` names another folder holding ``weights/`` and ``tokenizers/`` in the
package's layout (read when the model is first loaded).

Scores blend the two signals, each scaled to 0..1 over the candidates: half BM25, half cosine
similarity. When the package is missing, or loading or embedding fails, the caller gets
``None`` and keeps BM25's order and scores whole.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from protocol.methods.retrieve import RerankStatus

if TYPE_CHECKING:
    from collections.abc import Sequence

log = structlog.get_logger("vaultd.retrieve")

WEIGHTS_ENV = "VAULTD_RERANK_WEIGHTS"
BM25_SHARE = 0.5
MAX_CANDIDATES = 100  #: passages embedded per query at most
#: Of each passage, its head is embedded (the heading line and about 80 words): tokenizing costs
#: grow faster than linearly past this on 2 cores, and a static embedding of the head says most.
MAX_CANDIDATE_CHARS = 512
MAX_REMEMBERED = 20000  #: passage vectors kept (256 float32 each: about 20 MB at most)

_lock = threading.Lock()
_vectors: OrderedDict[bytes, Any] = OrderedDict()  #: a passage head's digest -> its vector, least recent first
_model: Any = None
_failure: tuple[RerankStatus, str] | None = None


def _load() -> Any:
    import wordllama  # the optional extra; ImportError when it is not installed

    folder = os.environ.get(WEIGHTS_ENV) or str(Path(wordllama.__file__).parent)
    return wordllama.WordLlama.load(cache_dir=Path(folder), disable_download=True)


def model() -> tuple[Any, RerankStatus, str]:
    """The loaded model, or None with why (absent or failed); loaded once, failures remembered."""
    global _model, _failure
    with _lock:
        if _model is not None:
            return _model, RerankStatus.USED, ""
        if _failure is not None:
            return None, *_failure
        try:
            _model = _load()
        except ImportError:
            _failure = (RerankStatus.ABSENT, "the rerank model is not installed (pip install 'vaultd[rerank]'); BM25 order")
        except Exception as exc:  # noqa: BLE001 - any load failure: BM25 order, and the reason once in the log
            _failure = (RerankStatus.FAILED, f"the rerank model did not load ({type(exc).__name__}); BM25 order")
            log.warning("rerank model failed to load", error=f"{type(exc).__name__}: {exc}"[:300])
        if _model is not None:
            return _model, RerankStatus.USED, ""
        assert _failure is not None
        return None, *_failure


def _passage_vectors(found: Any, heads: list[str]) -> list[Any]:
    """Each head's unit vector, embedding only those not seen lately (a passage's vector depends
    on its text alone, so it is remembered by the text's digest)."""
    keys = [hashlib.blake2b(h.encode("utf-8", "surrogatepass"), digest_size=16).digest() for h in heads]
    with _lock:
        known = {k: _vectors[k] for k in keys if k in _vectors}
        for k in known:
            _vectors.move_to_end(k)
    missing = [i for i, k in enumerate(keys) if k not in known]
    if missing:
        fresh = found.embed([heads[i] for i in missing], norm=True)
        with _lock:
            for row, i in enumerate(missing):
                known[keys[i]] = _vectors[keys[i]] = fresh[row]
            while len(_vectors) > MAX_REMEMBERED:
                _vectors.popitem(last=False)
    return [known[k] for k in keys]


def _scaled(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    span = high - low
    return [1.0 if span == 0 else (v - low) / span for v in values]


def rerank(query: str, texts: Sequence[str], bm25: Sequence[float]) -> tuple[list[float] | None, RerankStatus, str]:
    """Blended scores for ``texts`` (aligned with them), or None with why the caller keeps BM25's."""
    found, status, note = model()
    if found is None:
        return None, status, note
    if not texts:
        return [], RerankStatus.USED, ""
    try:
        import numpy as np

        vectors = np.stack(_passage_vectors(found, [t[:MAX_CANDIDATE_CHARS] for t in texts]))
        question = found.embed([query], norm=True)[0]
        cosine = [float(x) for x in np.nan_to_num(vectors @ question)]
    except Exception as exc:  # noqa: BLE001 - an embedding failure: BM25 order for this query
        log.warning("rerank failed", error=f"{type(exc).__name__}: {exc}"[:300])
        return None, RerankStatus.FAILED, f"the rerank model failed on this query ({type(exc).__name__}); BM25 order"
    lexical, semantic = _scaled(list(bm25)), _scaled(cosine)
    return [BM25_SHARE * a + (1 - BM25_SHARE) * b for a, b in zip(lexical, semantic, strict=True)], RerankStatus.USED, ""
