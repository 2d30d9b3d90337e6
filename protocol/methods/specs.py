"""Spec sources: specification files a vault registers beside its notes, read by id.

A spec is a Markdown file whose frontmatter names it (``id``, ``type``, ``title``) and ties it to
others (``parent``, ``depends-on``, ``references``, ``implements``, ``superseded-by``). A source is
a folder or one file; outside the vault it is read-only to vaultd (edit it in its repository),
inside the vault its specs are written by ``spec.create``, ``spec.update`` and ``spec.delete`` on
the vault's write path, journaled and undoable like every note write.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec

from protocol.limits import MAX_NOTE_BYTES
from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import EditParams, TwoStepParams, WriteParams

MAX_SPEC_FILES = 10_000  #: Markdown files one source may hold; more is refused (LIMIT)
MAX_SPEC_FOLDER_DEPTH = 32  #: folders below a source's own that a read enters; deeper ones are skipped and reported
MAX_SPEC_FILE_BYTES = MAX_NOTE_BYTES  #: one spec file, as large as a note may be; a larger one is skipped and reported
MAX_SPEC_TOTAL_BYTES = 64 * 1024 * 1024  #: all of one source's specs read together
MAX_SPEC_EDGES = 100_000
MAX_SPEC_DEPTH = 3
MAX_SPEC_ROWS = 500  #: rows in one graph, grep or validate answer
MAX_SPEC_OFFSET = 10_000
MAX_SPEC_SOURCES = 16  #: spec sources one vault may register
MAX_SPEC_PAGE_BYTES = 65_536

SpecSourceId = Annotated[
    str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="A spec source id: a lowercase letter, then letters, digits or '-'.")
]
SpecId = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$", description="A spec's frontmatter id.")]
SpecTitle = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]+$")]
SpecList = Annotated[list[Annotated[str, msgspec.Meta(min_length=1, max_length=512)]], msgspec.Meta(max_length=64)]


class SpecType(enum.StrEnum):
    """A spec's rank, from the widest: a parent's type comes before its child's."""

    GOAL = "goal"
    ARCHITECTURE = "architecture"
    MODULE = "module"
    SUBMODULE = "submodule"


class SpecStatus(enum.StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    DEPRECATED = "deprecated"


class EdgeKind(enum.StrEnum):
    """How one spec names another in its frontmatter."""

    PARENT = "parent"
    DEPENDS_ON = "depends-on"
    REFERENCES = "references"
    IMPLEMENTS = "implements"
    SUPERSEDED_BY = "superseded-by"


class Direction(enum.StrEnum):
    SUBTREE = "subtree"  #: the spec and its children, down to the depth
    ANCESTORS = "ancestors"  #: its parents, up to the depth
    NEIGHBORS = "neighbors"  #: every spec it names or that names it, to the depth


class SpecSource(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A registered spec source, as stored in the vault's entry in config.json."""

    id: SpecSourceId
    path: str  #: canonical absolute path of a folder or of one Markdown file


def source_gone(vault: str, source: str, path: str) -> str:
    """Doctor's finding for a registered source whose folder is gone, with or without a daemon."""
    return f"{path}: the spec source's folder is gone; put it back, or 'vaultctl spec remove {source} --vault {vault}'"


class SpecSourceInfo(Result):
    vault: str
    source: SpecSource
    inside: bool  #: inside the vault: its specs are written through the vault's write path
    specs: int  #: specs found now
    skipped: list[str] = []  #: files left out, each with why (a link, too large, not UTF-8)


class SpecAddParams(Params, kw_only=True):
    vault: OptionalVault = None
    id: SpecSourceId
    path: Annotated[str, msgspec.Meta(min_length=1, max_length=4096, description="An absolute path to a folder or one Markdown file.")]


class SpecRemoveParams(Params, kw_only=True):
    vault: OptionalVault = None
    id: SpecSourceId


class SpecListParams(Params, kw_only=True):
    vault: OptionalVault = None


class SpecListResult(Result):
    sources: list[SpecSourceInfo]


SourceOpt = Annotated[SpecSourceId | None, msgspec.Meta(description="The spec source; omitted, every one.")]


class SpecGetParams(Params, kw_only=True):
    vault: OptionalVault = None
    source: SourceOpt = None
    id: Annotated[
        str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$", description="A spec's id, or its title (any case).")
    ]
    section: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=200, description="A heading of the spec: only that section's text.")] | None
    ) = None
    body: Annotated[bool, msgspec.Meta(description="Include the body (or the section), a page at a time.")] = False
    offset: Annotated[int, msgspec.Meta(ge=0, le=MAX_SPEC_FILE_BYTES, description="A UTF-8 byte offset into the body.")] = 0
    max_bytes: Annotated[int, msgspec.Meta(ge=1, le=MAX_SPEC_PAGE_BYTES, description="At most this many bytes of body.")] = 16_384


class SpecEdge(msgspec.Struct, kw_only=True):
    source: str  #: the spec that names the other (an id)
    target: str  #: the id it names
    kind: EdgeKind
    resolved: bool  #: a spec with that id exists


class Freshness(msgspec.Struct, kw_only=True):
    """Whether the code a spec covers changed since the commit it was verified against."""

    id: str
    verified_against: str
    commits_since: int | None  #: commits touching its paths since; None when it could not be told
    changed_files: int = 0  #: uncommitted changes under its paths
    stale: bool
    note: str = ""  #: why freshness is unknown, when it is


class SpecGetResult(Result):
    source: str
    id: str
    path: str  #: relative to the source's root
    sha256: str
    frontmatter: dict[str, Any]
    outgoing: list[SpecEdge]
    backlinks: list[SpecEdge]
    children: list[str]
    notes: list[str]  #: vault notes that name this spec in their ``specs`` property
    sections: list[str]  #: the body's headings
    freshness: Freshness | None
    truncated: bool = False  #: a list above was cut at 500 entries
    body: str | None = None
    offset: int = 0
    next_offset: int | None = None  #: where the next page starts, while there is one
    size: int = 0  #: the body's (or the section's) size in bytes


class SpecGraphParams(Params, kw_only=True):
    vault: OptionalVault = None
    source: SourceOpt = None
    id: SpecId
    direction: Annotated[Direction, described("subtree (children), ancestors (parents) or neighbors (every reference).")] = (
        Direction.SUBTREE
    )
    edge: Annotated[EdgeKind | None, msgspec.Meta(description="Follow only this kind of reference.")] = None
    depth: Annotated[int, msgspec.Meta(ge=0, le=MAX_SPEC_DEPTH, description=f"Steps from the spec (0..{MAX_SPEC_DEPTH}).")] = 1
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_SPEC_ROWS, description=f"At most this many specs (1..{MAX_SPEC_ROWS}).")] = 100


class SpecNode(msgspec.Struct, kw_only=True):
    id: str
    source: str
    path: str
    type: str | None
    title: str | None
    status: str | None
    depth: int


class NoteRef(msgspec.Struct, kw_only=True):
    note: str  #: the vault note
    spec: str  #: the spec id its ``specs`` property names


class SpecGraphResult(Result):
    nodes: list[SpecNode]
    edges: list[SpecEdge]
    notes: list[NoteRef]  #: vault notes naming a spec of the slice
    truncated: bool


class SpecGrepParams(Params, kw_only=True):
    vault: OptionalVault = None
    source: SourceOpt = None
    query: Annotated[
        str, msgspec.Meta(max_length=1024, description="Words all found in a spec (any case), or with literal an exact substring.")
    ] = ""
    literal: Annotated[bool, described("Match query as an exact substring.")] = False
    type: Annotated[SpecType | None, described("Only specs of this type.")] = None
    status: Annotated[SpecStatus | None, described("Only specs with this status.")] = None
    tag: Annotated[str, msgspec.Meta(min_length=1, max_length=128, description="Only specs with this tag.")] | None = None
    parent: SpecId | None = None
    offset: Annotated[int, msgspec.Meta(ge=0, le=MAX_SPEC_OFFSET, description="Skip this many matches (next_offset).")] = 0
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_SPEC_ROWS, description=f"At most this many hits (1..{MAX_SPEC_ROWS}).")] = 20


class SpecHit(msgspec.Struct, kw_only=True):
    source: str
    id: str
    path: str
    title: str | None
    type: str | None
    status: str | None
    line: int | None  #: the first line matching the query (None: matched by its metadata alone)
    excerpt: str


class SpecGrepResult(Result):
    hits: list[SpecHit]
    total: int  #: every match, before offset and limit
    next_offset: int | None


class SpecCode(enum.StrEnum):
    """What ``spec.validate`` finds; errors unless marked a warning."""

    MISSING = "missing-field"  #: id, type or title absent
    BAD_VALUE = "bad-value"  #: an unknown type or status, a list field that is not a list of strings
    DUPLICATE = "duplicate-id"  #: a second spec with an id (the first in path order keeps it)
    DANGLING = "dangling"  #: a reference to no spec
    RANK = "rank"  #: a parent whose type is not wider than its child's
    CYCLE = "cycle"  #: parents that lead back to the spec
    REPLACEMENT = "replacement"  #: superseded-by on a spec not deprecated, or naming itself
    STALE = "stale"  #: code it covers changed since verified-against (a warning unless require_fresh)
    UNREADABLE = "unreadable"  #: a candidate file that cannot be read or parsed


class SpecFinding(msgspec.Struct, kw_only=True):
    severity: str  #: error or warning
    code: SpecCode
    source: str
    path: str
    message: str
    id: str | None = None
    field: str | None = None
    target: str | None = None


class SpecValidateParams(Params, kw_only=True):
    vault: OptionalVault = None
    source: SourceOpt = None
    require_fresh: Annotated[bool, msgspec.Meta(description="Stale specs are errors, not warnings.")] = False
    limit: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_SPEC_ROWS, description=f"At most this many findings, errors first (1..{MAX_SPEC_ROWS}).")
    ] = 100


class SpecValidateResult(Result):
    ok: bool  #: no errors
    errors: int
    warnings: int
    specs: int
    findings: list[SpecFinding]  #: errors first, at most limit
    freshness: list[Freshness]
    skipped: list[str]
    truncated: bool


class SpecCreateParams(WriteParams, kw_only=True):
    source: SourceOpt = None
    path: Annotated[
        str, msgspec.Meta(min_length=4, max_length=512, pattern=r"\.md$", description="The new file, relative to the source's folder.")
    ]
    id: SpecId
    type: Annotated[SpecType, described("goal, architecture, module or submodule.")]
    title: Annotated[SpecTitle, described("One line.")]
    status: Annotated[SpecStatus, described("draft, active or deprecated.")] = SpecStatus.DRAFT
    parent: SpecId | None = None
    depends_on: Annotated[SpecList, described("Spec ids.")] = []
    references: Annotated[SpecList, described("Spec ids.")] = []
    implements: Annotated[SpecList, described("Spec ids.")] = []
    covers: Annotated[SpecList, described("What it covers.")] = []
    tags: Annotated[SpecList, described("Tags.")] = []
    paths: Annotated[SpecList, described("Repository paths it covers.")] = []


class SpecUpdateParams(EditParams, kw_only=True):
    source: SourceOpt = None
    id: SpecId
    set: Annotated[
        dict[str, str], msgspec.Meta(description="Scalars to set: title, type, status, parent, superseded-by, verified-against.")
    ] = {}
    unset: Annotated[list[str], msgspec.Meta(max_length=16, description="Optional fields to remove.")] = []
    add: Annotated[dict[str, SpecList], msgspec.Meta(description="Entries to add to list fields (depends-on, tags, ...).")] = {}
    remove: Annotated[dict[str, SpecList], msgspec.Meta(description="Entries to remove from list fields.")] = {}


class SpecDeleteParams(TwoStepParams, kw_only=True):
    source: SourceOpt = None
    id: SpecId


SPEC_ADD = spec("spec.add", SpecAddParams, SpecSourceInfo, "Register a spec source (a folder or file) for a vault.", Effect.WRITE)
SPEC_REMOVE = spec("spec.remove", SpecRemoveParams, SpecSourceInfo, "Unregister a spec source; its files stay.", Effect.DESTRUCTIVE)
SPEC_LIST = spec("spec.list", SpecListParams, SpecListResult, "A vault's spec sources.", Effect.READ)
SPEC_GET = spec("spec.get", SpecGetParams, SpecGetResult, "Read a spec by id: metadata, links, body or a section.", Effect.READ, Trait.MCP)
SPEC_GRAPH = spec("spec.graph", SpecGraphParams, SpecGraphResult, "Specs around one spec, and notes naming them.", Effect.READ, Trait.MCP)
SPEC_GREP = spec("spec.grep", SpecGrepParams, SpecGrepResult, "Search specs by words and metadata.", Effect.READ, Trait.MCP)
SPEC_VALIDATE = spec("spec.validate", SpecValidateParams, SpecValidateResult, "Check specs: broken references, staleness.", Effect.READ)
SPEC_CREATE: MethodSpec[SpecCreateParams, WriteReceipt[NoDetail]] = MethodSpec(
    "spec.create", SpecCreateParams, receipt_type(NoDetail), "Create a spec in a source inside the vault.", Effect.WRITE
)
SPEC_UPDATE: MethodSpec[SpecUpdateParams, WriteReceipt[NoDetail]] = MethodSpec(
    "spec.update", SpecUpdateParams, receipt_type(NoDetail), "Change a spec's frontmatter.", Effect.IDEMPOTENT_WRITE, Trait.MCP
)
SPEC_DELETE: MethodSpec[SpecDeleteParams, WriteReceipt[NoDetail]] = MethodSpec(
    "spec.delete", SpecDeleteParams, receipt_type(NoDetail), "Delete a spec (two-step).", Effect.DESTRUCTIVE, Trait.TWO_STEP
)
SPECS = (SPEC_ADD, SPEC_REMOVE, SPEC_LIST, SPEC_GET, SPEC_GRAPH, SPEC_GREP, SPEC_VALIDATE, SPEC_CREATE, SPEC_UPDATE, SPEC_DELETE)
