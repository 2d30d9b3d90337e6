"""Sources and evidence: capture with provenance, the source and claim ledgers, the evidence view.

A **source** is a note (``ledger: source``) describing one captured thing: the bytes' identity
(sha256, size, media type), where the user said it came from, its authority and independence,
its state and review. The bytes themselves are a content-addressed raw copy in the vault's
attachment folder, named by their sha256, created once and never rewritten. A URL, a YouTube
video or an OCR request is a **consent plan**: a source note saying what would be fetched and by
which runner; vaultd never fetches anything.

A **claim** is a note (``ledger: claim``) holding one falsifiable statement about a page, the
sources that support it and those that contradict it, its state, confidence and risk. The ledger
rules are write validation: an accepted claim needs current, active, non-synthetic support, a
high-risk accepted claim two sources with distinct independence keys, and every cited source
must exist (unsupported is a valid state; an invented citation is not).
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.limits import MAX_CAPTURE_BYTES, MAX_INLINE_CAPTURE_BYTES, describe
from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.reads import Fresh, Target
from protocol.methods.receipts import WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import EditParams, NotePath, TwoStepParams, WriteParams

MAX_CAPTURE_ITEMS = 64
MAX_CITATIONS = 32  #: sources one claim cites for or against
MAX_CLAIM_CHARS = 500
MAX_LISTED = 1000  #: sources, claims or findings one listing returns at most


OneLine = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_CLAIM_CHARS, pattern=r"^[^\x00-\x1f\x7f]*$")]
Label = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]


class SourceKind(enum.StrEnum):
    """What a source holds; the ``*-plan`` kinds are consent plans, nothing captured yet."""

    PDF = "pdf"
    EPUB = "epub"
    IMAGE = "image"
    TEXT = "text"
    FILE = "file"
    URL_PLAN = "url-plan"
    YOUTUBE_PLAN = "youtube-plan"
    OCR_PLAN = "ocr-plan"


class Authority(enum.StrEnum):
    PRIMARY = "primary"  #: the original: the paper, the dataset, the statute, the recording
    SECONDARY = "secondary"  #: a report about a primary source
    TERTIARY = "tertiary"  #: a summary of summaries (an encyclopedia, a digest)
    UNKNOWN = "unknown"


class SourceState(enum.StrEnum):
    ACTIVE = "active"  #: captured and usable as support
    PLANNED = "planned"  #: a consent plan: nothing captured, so no support yet
    RETRACTED = "retracted"  #: withdrawn by its author or found wrong: supports nothing
    SUPERSEDED = "superseded"  #: replaced by a newer version: supports nothing


class Review(enum.StrEnum):
    UNREVIEWED = "unreviewed"
    REVIEWED = "reviewed"
    DISPUTED = "disputed"


class ClaimState(enum.StrEnum):
    PROPOSED = "proposed"  #: stated, not yet judged; may be unsupported
    ACCEPTED = "accepted"  #: judged true: needs current support (two independent sources at high risk)
    DISPUTED = "disputed"  #: contradicted and unresolved
    REJECTED = "rejected"  #: judged false


class Confidence(enum.StrEnum):
    """The typed schema's confidence scale."""

    SPECULATIVE = "speculative"
    TENTATIVE = "tentative"
    LIKELY = "likely"
    PROVEN = "proven"


class Risk(enum.StrEnum):
    """What being wrong would cost; a high-risk claim needs two independent sources to be accepted."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


# -- capture --------------------------------------------------------------------------------


class CaptureItem(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One thing to capture: exactly one of path, vault_path, text, data or url."""

    path: Annotated[
        str | None,
        described(
            "An absolute path of a file to copy in. Read only for a person (cli, editor): an agent may not name files outside the vault."
        ),
    ] = None
    vault_path: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1, max_length=1024, description="A vault-relative file to capture, left unchanged. For example one in the inbox."
            ),
        ]
        | None
    ) = None
    text: Annotated[str, msgspec.Meta(max_length=MAX_INLINE_CAPTURE_BYTES, description="Text to capture as is.")] | None = None
    data: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=(MAX_INLINE_CAPTURE_BYTES * 4) // 3 + 4,
                description=f"Bytes to capture, base64; at most {describe(MAX_INLINE_CAPTURE_BYTES)} decoded.",
            ),
        ]
        | None
    ) = None
    url: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=2048,
                description="An http(s) URL, recorded as a consent plan; nothing is fetched. A YouTube URL makes a YouTube plan.",
            ),
        ]
        | None
    ) = None
    ocr: Annotated[bool, described("Also plan OCR of this image or PDF; nothing is run. The plan is a consent plan, as for a URL.")] = False
    name: (
        Annotated[
            str, msgspec.Meta(min_length=1, max_length=255, description="A file name for text or data (its extension sets the media type).")
        ]
        | None
    ) = None
    title: Annotated[Label | None, described("The source note's title. Default: the document's own title, else the file name.")] = None
    origin: (
        Annotated[
            str,
            msgspec.Meta(min_length=1, max_length=2048, description="Where it came from (a URL or words); default: the path."),
        ]
        | None
    ) = None
    authority: Annotated[Authority, described("primary, secondary, tertiary or unknown.")] = Authority.UNKNOWN
    independence: Annotated[
        Label | None,
        described("Sources sharing this key count as one line of evidence. Default: the origin's host, else the content hash."),
    ] = None
    synthetic: Annotated[bool, described("Made by a model or a tool: it never supports a claim.")] = False
    doi: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="A DOI (stored lowercase).")] | None = None
    arxiv_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description="An arXiv id (YYMM.NNNNN[vN]).")] | None = None
    citekey: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=64, description="A citation key, unique in the vault. Case is ignored.")]
        | None
    ) = None


class CaptureParams(TwoStepParams, kw_only=True):
    items: Annotated[
        list[CaptureItem],
        msgspec.Meta(
            min_length=1,
            max_length=MAX_CAPTURE_ITEMS,
            description=f"What to capture; more than one item is two-step. One operation for all, at most {describe(MAX_CAPTURE_BYTES)} "
            "of bytes in all.",
        ),
    ]
    note: Annotated[Target | None, described("The page these sources are for. Recorded in each source note's pages.")] = None
    runner: Annotated[
        Label | None,
        described("The runner a plan names, configured outside vaultd. A URL, YouTube or OCR plan names it; default: none configured."),
    ] = None

    def needs_preview(self) -> bool:
        """One item applies at once; several are previewed first."""
        return len(self.items) > 1


class CapturedSource(msgspec.Struct, kw_only=True):
    note: Annotated[str, described("The source note (created or updated).")]
    kind: Annotated[SourceKind, described("What the source holds.")]
    raw: Annotated[str | None, described("The content-addressed raw copy; null for a plan.")] = None
    sha256: Annotated[str | None, described("The captured bytes' sha256; null for a plan.")] = None
    size: Annotated[int, described("The captured bytes' size.")] = 0
    media_type: Annotated[str | None, described("The media type, from the bytes and the name.")] = None
    deduplicated: Annotated[bool, described("The same bytes were captured before: no second raw copy.")] = False
    metadata: Annotated[dict[str, str], described("What the format's metadata says (title, author, pages), read locally.")] = {}


class CaptureDetail(msgspec.Struct, kw_only=True):
    sources: Annotated[list[CapturedSource], described("One per item, in order.")]


# -- claims -----------------------------------------------------------------------------------

Citations = Annotated[list[Target], msgspec.Meta(max_length=MAX_CITATIONS, description="Source notes, by path, name or alias.")]


class ClaimAddParams(WriteParams, kw_only=True):
    page: Annotated[Target, described("The note the claim is about.")]
    claim: Annotated[OneLine, described("The claim: one falsifiable statement, one line.")]
    support: Annotated[Citations, described("Source notes that support it; may be empty. Unsupported is a valid state.")] = []
    contradictions: Annotated[Citations, described("Source notes that contradict it.")] = []
    state: Annotated[ClaimState, described("proposed, accepted (needs current support), disputed or rejected.")] = ClaimState.PROPOSED
    confidence: Annotated[Confidence | None, described("speculative, tentative, likely or proven.")] = None
    risk: Annotated[Risk, described("low, medium or high (high needs two independent sources to be accepted).")] = Risk.LOW
    assessment: Annotated[OneLine | None, described("Why the claim stands as it does, in one line.")] = None
    path: Annotated[NotePath | None, described("Where the claim note goes. Default: the claims folder, named after the claim.")] = None


class ClaimUpdateParams(EditParams, kw_only=True):
    target: Annotated[Target, described("The claim note.")]
    state: Annotated[ClaimState | None, described("The new state.")] = None
    confidence: Annotated[Confidence | None, described("The new confidence.")] = None
    risk: Annotated[Risk | None, described("The new risk.")] = None
    assessment: Annotated[OneLine | None, described("The new assessment.")] = None
    add_support: Annotated[Citations, described("Sources to add to its support.")] = []
    remove_support: Annotated[Citations, described("Sources to drop from its support.")] = []
    add_contradictions: Annotated[Citations, described("Sources to add to its contradictions. They stay visible: none is removed.")] = []


class ClaimDetail(msgspec.Struct, kw_only=True):
    claim: Annotated[str, described("The claim note's path.")]


class SupportStatus(enum.StrEnum):
    """What one citation of a claim is worth."""

    CURRENT = "current"  #: an active, non-synthetic, unexpired source whose raw copy is as captured
    INACTIVE = "inactive"  #: retracted, superseded, only planned, or past its expiry
    SYNTHETIC = "synthetic"  #: generated: supports nothing
    DRIFTED = "drifted"  #: its raw copy no longer holds the captured bytes
    MISSING = "missing"  #: names no source note (an invented citation)


class Citation(msgspec.Struct, kw_only=True):
    cited: Annotated[str, described("The citation as written in the claim.")]
    path: Annotated[str | None, described("The source note it names; null when it names none.")] = None
    title: Annotated[str | None, described("The source's title.")] = None
    status: Annotated[SupportStatus, described("What it is worth as evidence.")]
    independence: Annotated[str | None, described("The source's independence key.")] = None


class Verdict(enum.StrEnum):
    """How well a claim's support holds up, whatever its state says."""

    SUPPORTED = "supported"  #: enough current support for its risk
    UNDER_SUPPORTED = "under-supported"  #: current support from fewer independent lines than its risk needs
    UNSUPPORTED = "unsupported"  #: no current support
    INVENTED = "invented"  #: cites something that is not a source note


class ClaimView(msgspec.Struct, kw_only=True):
    path: Annotated[str, described("The claim note.")]
    claim: Annotated[str, described("The statement.")]
    page: Annotated[str | None, described("The page it is about (a path); null when the link resolves to no note.")] = None
    state: Annotated[str, described("Its state as written.")]
    confidence: Annotated[str | None, described("Its confidence.")] = None
    risk: Annotated[str, described("Its risk.")]
    assessment: Annotated[str | None, described("Its assessment.")] = None
    support: Annotated[list[Citation], described("What supports it.")] = []
    contradictions: Annotated[list[Citation], described("What contradicts it; always shown.")] = []
    verdict: Annotated[Verdict, described("How its support holds up.")]
    independent_lines: Annotated[int, described("Distinct independence keys among its current support.")] = 0


class ClaimListParams(Params):
    vault: OptionalVault = None
    page: Annotated[Target | None, described("Only claims about this note.")] = None
    state: Annotated[ClaimState | None, described("Only those in this state.")] = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LISTED, description="At most this many claims, by path.")] = 100
    fresh: Fresh = False


class ClaimListResult(Result):
    claims: list[ClaimView]
    total: int


# -- the source ledger --------------------------------------------------------------------------


class DriftState(enum.StrEnum):
    UNCHECKED = "unchecked"  #: not hashed in this call
    INTACT = "intact"  #: the raw copy holds the bytes its sha256 names
    CHANGED = "changed"  #: the raw copy's bytes differ from the captured ones
    MISSING = "missing"  #: the raw copy is gone (or is not a regular file)
    NONE = "none"  #: a plan: no raw copy


class SourceView(msgspec.Struct, kw_only=True):
    path: Annotated[str, described("The source note.")]
    title: Annotated[str, described("Its title.")]
    kind: Annotated[str | None, described("What it holds.")] = None
    state: Annotated[str, described("active, planned, retracted or superseded.")]
    review: Annotated[str | None, described("Its review state.")] = None
    authority: Annotated[str | None, described("Its authority.")] = None
    independence: Annotated[str, described("Its independence key (explicit, else derived from the origin or the hash).")]
    origin: Annotated[str | None, described("Where it came from, as recorded.")] = None
    sha256: Annotated[str | None, described("The captured bytes' sha256.")] = None
    size: Annotated[int | None, described("The captured bytes' size.")] = None
    media_type: Annotated[str | None, described("Its media type.")] = None
    captured: Annotated[str | None, described("When it was captured (YYYY-MM-DD).")] = None
    raw: Annotated[str | None, described("The raw copy's path.")] = None
    synthetic: Annotated[bool, described("Generated, not an outside source.")] = False
    pages: Annotated[list[str], described("The pages it is linked to, as written.")] = []
    drift: Annotated[DriftState, described("Whether the raw copy still holds the captured bytes.")] = DriftState.UNCHECKED


class SourceListParams(Params):
    vault: OptionalVault = None
    kind: Annotated[SourceKind | None, described("Only those of this kind.")] = None
    state: Annotated[SourceState | None, described("Only those in this state.")] = None
    verify: Annotated[bool, described("Hash the raw copies involved, to report drift. The ledger reads every captured file.")] = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LISTED, description="At most this many sources, by path.")] = 100
    fresh: Fresh = False


class SourceListResult(Result):
    sources: list[SourceView]
    total: int


class EvidenceParams(Params):
    vault: OptionalVault = None
    target: Annotated[
        Target | None,
        described(
            "A page: its claims, their support and contradictions. Omitted: the vault's unsupported accepted claims and drifted sources."
        ),
    ] = None
    verify: Annotated[bool, described("Hash the raw copies involved, to report drift.")] = True
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_LISTED, description="At most this many claims and sources each.")] = 200
    fresh: Fresh = False


class EvidenceResult(Result, kw_only=True):
    page: Annotated[str | None, described("The page shown; null for the vault-wide check.")] = None
    claims: Annotated[list[ClaimView], described("The page's claims (vault-wide: every accepted claim whose support does not hold).")]
    drifted: Annotated[list[SourceView], described("Sources whose raw copy changed or vanished since capture.")]
    sources_checked: Annotated[int, described("Source notes looked at.")]
    claims_checked: Annotated[int, described("Claim notes looked at.")]


CAPTURE: MethodSpec[CaptureParams, WriteReceipt[CaptureDetail]] = MethodSpec(
    "source.capture",
    CaptureParams,
    receipt_type(CaptureDetail),
    "Capture files or text as content-addressed raw copies with a source note each (URLs and OCR become consent plans, "
    "never fetched). One item applies at once; more than one answers a preview with a fingerprint: call again with the "
    "same items, confirm=true and that fingerprint.",
    Effect.WRITE,
    Trait.MCP,
)
SOURCE_LIST = spec(
    "source.list",
    SourceListParams,
    SourceListResult,
    "Captured sources and plans with their origin, independence and drift: the source ledger, with their identity too.",
    Effect.READ,
    Trait.MCP,
)
CLAIM_ADD: MethodSpec[ClaimAddParams, WriteReceipt[ClaimDetail]] = MethodSpec(
    "claim.add",
    ClaimAddParams,
    receipt_type(ClaimDetail),
    "Record a claim about a page, with its sources. The sources support or contradict it (an accepted claim needs current support).",
    Effect.WRITE,
    Trait.MCP,
)
CLAIM_UPDATE: MethodSpec[ClaimUpdateParams, WriteReceipt[ClaimDetail]] = MethodSpec(
    "claim.update",
    ClaimUpdateParams,
    receipt_type(ClaimDetail),
    "Change a claim's state, confidence, risk, assessment or sources. Sources are added to its support or "
    "contradictions, or dropped from its support.",
    Effect.WRITE,
    Trait.MCP,
)
CLAIM_LIST = spec(
    "claim.list",
    ClaimListParams,
    ClaimListResult,
    "Claims with their support, contradictions and verdict. Optionally of one page or state: the claim ledger.",
    Effect.READ,
    Trait.MCP,
)
EVIDENCE = spec(
    "source.evidence",
    EvidenceParams,
    EvidenceResult,
    "A page's claims with their support and contradictions; without a page, unsupported accepted claims and drifted sources.",
    Effect.READ,
    Trait.MCP,
)
SPECS = (CAPTURE, SOURCE_LIST, CLAIM_ADD, CLAIM_UPDATE, CLAIM_LIST, EVIDENCE)
