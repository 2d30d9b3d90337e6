"""Retrieval: passages, not notes. ``note.retrieve`` ranks heading-aware chunks by BM25 and, when
the optional local model is installed (``vaultd[rerank]``), reranks the best of them; without it,
or when it fails, the answer is BM25's order and scores, whole.

Each passage names its note, its heading path and its line range, and a citation ``path#heading``
an agent can quote and a person can open.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.limits import MAX_RETRIEVE_QUERY_CHARS
from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.reads import Fresh, IncludeExcluded
from protocol.methods.spec import Effect, Trait, spec

MAX_PASSAGES = 1000
MAX_PASSAGE_CHARS = 1200  #: a passage's text is cut here (its line range still names the whole chunk)


class Ranking(enum.StrEnum):
    BM25 = "bm25"  #: BM25 over chunks, heading weighted above text
    RERANKED = "reranked"  #: BM25's best candidates reordered with the local embedding model


class RerankStatus(enum.StrEnum):
    USED = "used"
    OFF = "off"  #: not asked for
    ABSENT = "absent"  #: the optional model is not installed
    FAILED = "failed"  #: it is installed but did not load or answer: BM25 order is returned


class RetrieveParams(Params):
    query: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=MAX_RETRIEVE_QUERY_CHARS,
            description=f"A question or keywords; any word may match (BM25 ranks). At most {MAX_RETRIEVE_QUERY_CHARS} characters.",
        ),
    ]
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PASSAGES, description="At most this many passages, best first.")] = 10
    per_note: Annotated[int, msgspec.Meta(ge=1, le=MAX_PASSAGES, description="At most this many passages from one note.")] = 3
    folder: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, description="Only notes below this folder.")] | None = None
    rerank: Annotated[bool, described("Rerank with the local embedding model when it is installed; false: BM25 order.")] = True
    fresh: Fresh = False
    include_excluded: IncludeExcluded = False


class Passage(msgspec.Struct, kw_only=True):
    path: Annotated[str, described("The note.")]
    title: Annotated[str, described("The note's title.")]
    heading: Annotated[list[str], described("The headings above the passage, outermost first; empty before the first heading.")]
    line_start: Annotated[int, described("The passage's first line in the file (1-based).")]
    line_end: Annotated[int, described("Its last line.")]
    text: Annotated[str, described(f"The passage, cut at {MAX_PASSAGE_CHARS} characters.")]
    score: Annotated[float, described("Higher is better; comparable within one answer only.")]
    citation: Annotated[str, described("path#heading (the path alone before the first heading): cite it with line_start-line_end.")]


class RetrieveResult(Result):
    passages: list[Passage]
    ranking: Annotated[Ranking, described("How the passages are ordered.")]
    rerank: Annotated[RerankStatus, described("What became of the rerank step.")]
    note: Annotated[str, described("Why the rerank was not used, when it was not.")] = ""


RETRIEVE = spec(
    "note.retrieve",
    RetrieveParams,
    RetrieveResult,
    "Find passages that answer a question: heading-aware chunks with their note, heading path, line range and a citation.",
    Effect.READ,
    Trait.MCP,
)
SPECS = (RETRIEVE,)
