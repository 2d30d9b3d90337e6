"""Retrieval: passages, not notes. ``note.retrieve`` ranks heading-aware chunks by BM25 and, when
the optional local model is installed (``vaultd[rerank]``), reranks the best of them; without it,
or when it fails, the answer is BM25's order and scores, whole. When the meaning model is
installed (``vaultd[meaning]``), the passages it has covered so far are ranked by meaning too,
and the two rankings are fused by reciprocal rank.

An answer is bounded in bytes (``max_bytes``, sized for an agent's context by default): what did
not fit is counted in ``left_out`` and ``cursor`` continues from it.

Each passage names its note, its heading path and its line range, and a citation ``path#heading``
an agent can quote and a person can open.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.limits import DEFAULT_ANSWER_BYTES, MAX_ANSWER_BYTES, MAX_RETRIEVE_QUERY_CHARS, MIN_ANSWER_BYTES
from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.indexing import MeaningCoverage
from protocol.methods.reads import AnswerCursor, Fresh, IncludeExcluded
from protocol.methods.spec import Effect, Trait, spec

MAX_PASSAGES = 1000
MAX_PASSAGE_CHARS = 1200  #: a passage's text is cut here (its line range still names the whole chunk)


class Ranking(enum.StrEnum):
    BM25 = "bm25"  #: BM25 over chunks, heading weighted above text
    RERANKED = "reranked"  #: BM25's best candidates reordered with the local embedding model
    HYBRID = "hybrid"  #: BM25's order (reranked when asked) fused with the meaning model's by reciprocal rank


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
    rerank: Annotated[bool, described("Rerank with the local model when installed; false: BM25 order.")] = True
    meaning: Annotated[bool, described("Fuse with the meaning ranking; false: BM25 alone.")] = True
    explain: Annotated[bool, described("Each passage's BM25 and meaning ranks and scores, and the fused score.")] = False
    max_bytes: Annotated[
        int,
        msgspec.Meta(
            ge=MIN_ANSWER_BYTES,
            le=MAX_ANSWER_BYTES,
            description=("Fit the passages in this many bytes; the rest is counted in left_out."),
        ),
    ] = DEFAULT_ANSWER_BYTES
    cursor: AnswerCursor | None = None
    fresh: Fresh = False
    include_excluded: IncludeExcluded = False


class Parts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Where a passage's place came from (``explain: true``)."""

    bm25_rank: Annotated[int | None, described("Its rank in BM25's order (after the rerank when it ran); null: not a BM25 candidate.")] = (
        None
    )
    bm25: Annotated[float | None, described("Its BM25 score (blended with the rerank's when it ran).")] = None
    meaning_rank: Annotated[int | None, described("Its rank by meaning; null: not among the nearest, or no vector yet.")] = None
    cosine: Annotated[float | None, described("The meaning model's cosine similarity to the question.")] = None
    fused: Annotated[
        float | None, described("The reciprocal-rank fusion of the two ranks (the passage's score when both rankings ran).")
    ] = None


class Passage(msgspec.Struct, kw_only=True):
    path: Annotated[str, described("The note.")]
    title: Annotated[str, described("The note's title.")]
    heading: Annotated[list[str], described("The headings above the passage, outermost first; empty before the first heading.")]
    line_start: Annotated[int, described("The passage's first line in the file (1-based).")]
    line_end: Annotated[int, described("Its last line.")]
    text: Annotated[str, described(f"The passage, cut at {MAX_PASSAGE_CHARS} characters.")]
    score: Annotated[float, described("Higher is better; comparable within one answer only.")]
    citation: Annotated[str, described("path#heading (the path alone before the first heading): cite it with line_start-line_end.")]
    parts: Annotated[Parts | None, described("With explain: where its place came from.")] = None


class RetrieveResult(Result):
    passages: list[Passage]
    ranking: Annotated[Ranking, described("How the passages are ordered.")]
    rerank: Annotated[RerankStatus, described("What became of the rerank step.")]
    note: Annotated[str, described("Why the rerank or the meaning model was not used, when it was not.")] = ""
    meaning: Annotated[
        MeaningCoverage | None, described("How much of the vault the meaning model covered for this answer; null without it.")
    ] = None
    left_out: Annotated[int, described("Passages ranked within limit but left out of this answer to fit max_bytes.")] = 0
    cursor: Annotated[str | None, described("Pass it back as cursor to get the passages left out.")] = None


RETRIEVE = spec(
    "note.retrieve",
    RetrieveParams,
    RetrieveResult,
    "Find passages that answer a question, each with its note and a citation. The citation gives the heading path and lines.",
    Effect.READ,
    Trait.MCP,
)
SPECS = (RETRIEVE,)
