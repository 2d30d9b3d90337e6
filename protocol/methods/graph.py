"""The link graph: neighbours, communities, paths, hubs, maps of content, the topic navigator,
and a neighbourhood drawn as a JSON Canvas.

Every read here answers from the in-memory index; a note private to the caller's channel is not
in the graph it sees (not a node, not an edge, not a count). ``graph.canvas`` is the one write:
it creates a ``.canvas`` file through the ordinary operation path.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.indexing import MAX_VAULT_WORK
from protocol.methods.reads import Fresh, Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, P, R, Trait, spec
from protocol.methods.writes import WriteParams

Relation = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$",
        description=(
            "Only edges of this relation: link, embed, a note.link relation (supports, ...) or a frontmatter key of "
            "links (up, ...). A link is a body link; the typed relations are supports, contradicts, extends, applies-to "
            "and context-for; up and related are examples of keys."
        ),
    ),
]


class Direction(enum.StrEnum):
    """Which way along a link a walk may go."""

    BOTH = "both"
    OUT = "out"  #: from a note to what it links to
    IN = "in"  #: from a note to what links to it


class NeighborsParams(Params):
    target: Target
    vault: OptionalVault = None
    hops: Annotated[int, msgspec.Meta(ge=1, le=3, description="How many links away to go.")] = 1
    relation: Relation | None = None
    direction: Annotated[Direction, msgspec.Meta(description="Follow links out of a note, into it, or both.")] = Direction.BOTH
    limit: Annotated[int, msgspec.Meta(ge=1, le=1000, description="At most this many neighbours, nearest first.")] = 200
    canvas: Annotated[bool, msgspec.Meta(description="Also return it as a JSON Canvas 1.0 document.")] = False
    fresh: Fresh = False


class Neighbor(msgspec.Struct, kw_only=True):
    path: str
    title: str
    hops: int  #: links away from the centre
    via: str  #: the note it was reached from
    direction: Direction  #: out: ``via`` links to it; in: it links to ``via``
    relation: str


class GraphEdge(msgspec.Struct, kw_only=True):
    source: str
    target: str
    relation: str


class NeighborsResult(Result):
    path: str
    title: str
    neighbors: list[Neighbor]  #: by hops, then path
    edges: list[GraphEdge]  #: every edge among the centre and the listed neighbours
    total: int  #: neighbours found within the hops, before the limit
    truncated: bool
    canvas: dict[str, Any] | None = None  #: the JSON Canvas document, when asked for


class CommunitiesParams(Params):
    vault: OptionalVault = None
    resolution: Annotated[
        float, msgspec.Meta(ge=0.05, le=10.0, description="Leiden's resolution: higher finds more, smaller communities.")
    ] = 1.0
    min_size: Annotated[int, msgspec.Meta(ge=1, le=1000, description="Only communities of at least this many notes.")] = 2
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many communities, largest first.")] = 50
    members: Annotated[int, msgspec.Meta(ge=0, le=1000, description="At most this many members per community. The most central first.")] = (
        10
    )
    fresh: Fresh = False


class Community(msgspec.Struct, kw_only=True):
    id: int  #: 1 is the largest; ids are per answer, so cite a member, not the id
    name: str  #: the title of its most central note
    central: str  #: that note's path
    size: int
    members: list[str]  #: most central first, at most ``members``


class CommunitiesResult(Result):
    notes: int
    edges: int  #: distinct linked pairs, links in either direction counted once
    modularity: float
    seed: int  #: the fixed seed: the same vault gives the same communities
    resolution: float
    total: int  #: communities, singletons included
    singletons: int  #: notes linked to no other note, each its own community
    communities: list[Community]
    truncated: bool


class PathParams(Params):
    source: Annotated[Target, msgspec.Meta(description="Where the path starts (a path, name or alias).")]
    target: Annotated[Target, msgspec.Meta(description="Where it ends.")]
    vault: OptionalVault = None
    direction: Annotated[Direction, msgspec.Meta(description="out: follow links as written; both: either way.")] = Direction.BOTH
    fresh: Fresh = False


class PathStep(msgspec.Struct, kw_only=True):
    path: str
    title: str
    direction: Direction | None  #: how this step was reached from the one before; None for the start


class PathResult(Result):
    found: bool
    hops: int | None
    steps: list[PathStep]  #: from source to target, both included


class HubsParams(Params):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many notes, most central first.")] = 20
    fresh: Fresh = False


class Hub(msgspec.Struct, kw_only=True):
    path: str
    title: str
    incoming: int  #: distinct notes linking to it
    outgoing: int  #: distinct notes it links to
    pagerank: float


class HubsResult(Result):
    notes: int
    hubs: list[Hub]


class MocsParams(Params):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many maps, most linked first.")] = 100
    fresh: Fresh = False


class Moc(msgspec.Struct, kw_only=True):
    path: str
    title: str
    incoming: int  #: distinct notes linking to it
    outgoing: int  #: distinct notes it links to
    why: str  #: what makes it a map: its type, a tag, its name, or notes naming it as their parent


class MocsResult(Result):
    total: int
    mocs: list[Moc]
    truncated: bool


class NavParams(Params):
    target: Target
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many notes per group.")] = 100
    fresh: Fresh = False


class NavEntry(msgspec.Struct, kw_only=True):
    path: str
    title: str


class NavResult(Result):
    path: str
    title: str
    parent_keys: list[str]  #: the frontmatter keys read as parents
    up: list[NavEntry]  #: its parents
    below: list[NavEntry]  #: notes naming it as a parent
    sources: list[NavEntry]  #: notes it links to, not in the groups above
    cited_by: list[NavEntry]  #: notes linking to it, not in the groups above
    beside: list[NavEntry]  #: notes sharing a parent with it, not in the groups above
    truncated: bool
    warnings: list[str]  #: a topic cycle through the note, parent values that name nothing


CanvasPath = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=1024,
        pattern=r"(?i)\.canvas$",
        description="A vault-relative path ending in .canvas; it must not exist yet.",
    ),
]


class CanvasParams(WriteParams, kw_only=True):
    target: Annotated[Target, msgspec.Meta(description="The note at the centre (a path, name or alias).")]
    path: CanvasPath
    hops: Annotated[int, msgspec.Meta(ge=1, le=3, description="How many links away to go.")] = 1
    relation: Relation | None = None
    direction: Annotated[Direction, msgspec.Meta(description="Follow links out of a note, into it, or both.")] = Direction.BOTH
    limit: Annotated[int, msgspec.Meta(ge=1, le=1000, description="At most this many neighbours on the canvas, nearest first.")] = 200


def _read(name: str, params: type[P], result: type[R], summary: str) -> MethodSpec[P, R]:
    return spec(name, params, result, summary, Effect.READ, Trait.MCP)


NEIGHBORS = _read(
    "graph.neighbors",
    NeighborsParams,
    NeighborsResult,
    "Notes up to 3 links away from one note. Optionally of one relation or direction; optionally as a JSON Canvas.",
)
COMMUNITIES = _read(
    "graph.communities",
    CommunitiesParams,
    CommunitiesResult,
    "Clusters of closely linked notes (Leiden, fixed seed). Each is named by its most central note. "
    f"Vault-wide work unless already known for the vault as it is: LIMIT past {MAX_VAULT_WORK} such requests queued on the connection. "
    "UNAVAILABLE without the graph extra (vaultd[graph]).",
)
PATH = _read("graph.path", PathParams, PathResult, "The shortest link path between two notes.")
HUBS = _read(
    "graph.hubs",
    HubsParams,
    HubsResult,
    "The most central notes (PageRank over links). With their link counts; UNAVAILABLE without the graph extra (vaultd[graph]).",
)
MOCS = _read("graph.mocs", MocsParams, MocsResult, "Maps of content and topic-map roots. With how many notes link to each.")
NAV = _read(
    "graph.nav",
    NavParams,
    NavResult,
    "The topic navigator of one note: Up (its parents), Below, Sources, Cited by and Beside (siblings).",
)
CANVAS: MethodSpec[CanvasParams, WriteReceipt[NoDetail]] = MethodSpec(
    "graph.canvas",
    CanvasParams,
    receipt_type(NoDetail),
    "Create a .canvas file (JSON Canvas 1.0) drawing a note's neighbourhood, as one operation.",
    Effect.WRITE,
)
SPECS = (NEIGHBORS, COMMUNITIES, PATH, HUBS, MOCS, NAV, CANVAS)
