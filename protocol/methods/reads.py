"""The read methods: search, read, read_many, links, list, tags, stats, issues.

Params are named alike across methods (``vault``, ``target``, ``query``, ``limit``, ``cursor``,
``offset``, ``max_bytes``, ``section``, ``fresh``). Every bound is declared here, so it is
enforced at decode time and published in the schemas; nothing is clamped silently.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec

from protocol.errors import ErrorCode
from protocol.limits import (
    DEFAULT_ANSWER_BYTES,
    DEFAULT_READ_PAGE_BYTES,
    MAX_ANSWER_BYTES,
    MAX_CURSOR_CHARS,
    MAX_QUERY_BYTES,
    MAX_READ_PAGE_BYTES,
    MIN_ANSWER_BYTES,
    describe,
)
from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.spec import Effect, MethodSpec, P, R, Trait, spec

Target = Annotated[
    str,
    msgspec.Meta(min_length=1, max_length=1024, description="A vault-relative path, note name or alias of exactly one note."),
]
Fresh = Annotated[bool, msgspec.Meta(description="First wait until every earlier file change is indexed.")]
Cursor = Annotated[str, msgspec.Meta(min_length=1, max_length=2048, description="The next_cursor the previous page returned.")]
Filter = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
IncludeExcluded = Annotated[
    bool,
    msgspec.Meta(description="Also notes Obsidian's Excluded files setting hides."),
]


#: The cursor of a bounded answer (search, retrieve): where the next answer continues.
AnswerCursor = Annotated[
    str, msgspec.Meta(min_length=1, max_length=MAX_CURSOR_CHARS, description="The cursor of the previous answer: continue after it.")
]


class SearchParams(Params):
    query: Annotated[
        str,
        msgspec.Meta(
            max_length=MAX_QUERY_BYTES,
            description=(
                'Words to find, all required; "a phrase" in quotes; OR between alternatives; -word or NOT word to exclude; '
                "( ) to group; tag:#t and path:folder/ to filter. Other punctuation is literal text. "
                "Korean, Japanese and Chinese words match inside longer words. May be empty when a filter is given. "
                f"At most {describe(MAX_QUERY_BYTES)} as UTF-8."
            ),
        ),
    ] = ""
    vault: OptionalVault = None
    type: Annotated[Filter, msgspec.Meta(description="Only notes whose frontmatter type is this.")] | None = None
    domain: Annotated[Filter, msgspec.Meta(description="Only notes whose frontmatter domain is this.")] | None = None
    tag: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="Only those with this tag; a/b counts as a.")] | None = None
    folder: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, description="Only notes below this folder.")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many hits, best first.")] = 20
    meaning: Annotated[
        bool,
        msgspec.Meta(
            description=(
                'When fewer than limit notes hold all the words, add hits by meaning; false: exact only. Those hits have match "meaning".'
            )
        ),
    ] = True
    max_bytes: Annotated[
        int,
        msgspec.Meta(
            ge=MIN_ANSWER_BYTES,
            le=MAX_ANSWER_BYTES,
            description=("Fit the hits in this many bytes; the rest is counted in left_out."),
        ),
    ] = DEFAULT_ANSWER_BYTES
    cursor: (
        Annotated[
            str,
            msgspec.Meta(min_length=1, max_length=MAX_CURSOR_CHARS, description="The cursor of the previous answer: continue after it."),
        ]
        | None
    ) = None
    fresh: Fresh = False
    include_excluded: IncludeExcluded = False


class Match(enum.StrEnum):
    ALL = "all"  #: the note holds what the query asks (every word, the phrase, the filters)
    MEANING = "meaning"  #: a plain-words query's continuation: ranked by any word and by meaning


class SearchHit(msgspec.Struct, kw_only=True):
    path: str
    title: str
    score: float  #: higher is better; 0 for a note found only by its filters
    snippet: str  #: bounded; matched terms are wrapped in ** ** (a matched link as a whole)
    excerpt: str = ""  #: the snippet's text without the ** marks: the note's own characters only
    highlights: list[tuple[int, int]] = []  #: [start, end) of each match in excerpt, in characters (code points)
    match: Match = Match.ALL  #: "meaning": found by the continuation of a plain-words query, not by every word


class SearchResult(Result):
    hits: list[SearchHit]
    did_you_mean: str | None = None  #: when nothing matches: a corrected query that finds notes
    left_out: int = 0  #: hits found within limit but left out of this answer to fit max_bytes
    cursor: str | None = None  #: pass it back as cursor to get the hits left out


class ReadParams(Params):
    target: Target
    vault: OptionalVault = None
    section: (
        Annotated[
            str,
            msgspec.Meta(min_length=1, max_length=512, description="Only this exact H2 heading's section. It runs to the next H1 or H2."),
        ]
        | None
    ) = None
    offset: Annotated[int, msgspec.Meta(ge=0, description="A UTF-8 byte offset into the body or section.")] = 0
    max_bytes: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_READ_PAGE_BYTES, description="At most this many UTF-8 bytes of text in this page.")
    ] = DEFAULT_READ_PAGE_BYTES
    fresh: Fresh = False
    at: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=256,
                pattern=r"^(?![-.])[A-Za-z0-9_./~^@{}+-]+$",
                description="A git revision to read it at (commit, branch, tag, HEAD~N).",
            ),
        ]
        | None
    ) = None


class ReadResult(Result):
    path: str
    title: str
    frontmatter: dict[str, Any] | None
    body: str  #: the body (or section) text from offset, at most max_bytes UTF-8 bytes
    sha256: str  #: of the whole file: compare across pages, pass as expected_sha to writes
    size: int  #: bytes in the whole file
    section: str | None
    offset: int
    truncated: bool
    next_offset: int | None  #: pass as offset to read the next page
    headings: list[str]  #: H1-H3 outline, bounded to 64 entries
    #: each frontmatter property's Obsidian type (text, multitext, number, checkbox, date, datetime,
    #: aliases, tags, unknown): declared in .obsidian/types.json, else inferred from its values
    property_types: dict[str, str] = {}


MAX_READ_MANY = 20  #: notes one note.read_many reads
DEFAULT_READ_MANY_BYTES = 4 * 1024  #: the page of each note when ``max_bytes`` is not given


class ReadManyParams(Params):
    """Several notes in one call, each paged as note.read pages one; a note that cannot be read
    is a failure in its own item, never the whole call's."""

    targets: Annotated[
        list[Target],
        msgspec.Meta(min_length=1, max_length=MAX_READ_MANY, description=f"Up to {MAX_READ_MANY} paths, names or aliases."),
    ]
    vault: OptionalVault = None
    max_bytes: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_READ_PAGE_BYTES, description="At most this many UTF-8 bytes of each note's body.")
    ] = DEFAULT_READ_MANY_BYTES
    fresh: Fresh = False


class ReadFailure(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Why one note of a note.read_many was not read: the error note.read would have answered."""

    code: ErrorCode
    message: str
    candidates: list[str] = []


class ReadManyItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    target: str  #: as asked
    note: ReadResult | None = None  #: the first page of the note (``next_offset``: read the rest with note.read)
    error: ReadFailure | None = None  #: set instead of ``note`` when it could not be read


class ReadManyResult(Result):
    notes: list[ReadManyItem]  #: one per target, in the order asked


class LinkStatus(enum.StrEnum):
    RESOLVED = "resolved"
    MISSING = "missing"
    AMBIGUOUS = "ambiguous"
    BAD_ANCHOR = "bad-anchor"  #: the note exists but the heading or block does not


class LinkKind(enum.StrEnum):
    """How a link is written."""

    WIKI = "wiki"  #: ``[[t]]``
    EMBED = "embed"  #: ``![[t]]``
    MARKDOWN = "markdown"  #: ``[x](Note.md)``
    FRONTMATTER = "frontmatter"  #: ``"[[t]]"`` inside a frontmatter value


class OutLink(msgspec.Struct, kw_only=True, omit_defaults=True):
    target: str
    anchor: str | None = None
    kind: LinkKind
    line: int
    status: LinkStatus
    resolved: str | None = None
    reason: str | None = None
    candidates: list[str] = []
    suggestion: str | None = None  #: for a missing target, the closest existing title (a hint only)


class InLink(msgspec.Struct, kw_only=True):
    path: str
    line: int
    kind: LinkKind


class LinksParams(Params):
    target: Target
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many outgoing links, and as many backlinks.")] = 50
    fresh: Fresh = False


class LinksResult(Result):
    path: str
    out: list[OutLink]  #: in source order
    incoming: list[InLink]  #: backlinks, by path then line
    dead: list[OutLink]  #: the missing, ambiguous or bad-anchor subset of ``out``
    truncated: bool


class ListParams(Params):
    vault: OptionalVault = None
    folder: Annotated[str, msgspec.Meta(max_length=1024, description="Only notes whose path starts with this folder or prefix.")] | None = (
        None
    )
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many notes in this page.")] = 50
    cursor: Cursor | None = None
    fresh: Fresh = False
    include_excluded: IncludeExcluded = False


class NoteSummary(msgspec.Struct, kw_only=True):
    path: str
    title: str
    type: str | None
    size: int
    tags: list[str]


class ListResult(Result):
    notes: list[NoteSummary]
    total: int  #: notes matching the filter, all pages together
    next_cursor: str | None


class TagsParams(Params):
    vault: OptionalVault = None
    prefix: Annotated[str, msgspec.Meta(max_length=256, description="Only tags starting with this (any case; # optional).")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=5000, description="At most this many tags, most used first.")] = 500


class TagCount(msgspec.Struct, kw_only=True):
    tag: str
    notes: int


class TagsResult(Result):
    tags: list[TagCount]
    truncated: bool


class VaultParams(Params):
    vault: OptionalVault = None
    fresh: Fresh = False


MAX_STATS_DAYS = 3650


class StatsParams(VaultParams):
    days: Annotated[
        int,
        msgspec.Meta(ge=1, le=MAX_STATS_DAYS, description="Count log events of the last N days, today included. Local calendar days."),
    ] = 30


class SizeCount(msgspec.Struct, kw_only=True):
    notes: int
    bytes: int
    words: int  #: whitespace-separated tokens of the stored text, frontmatter included


class NoteSize(msgspec.Struct, kw_only=True):
    total: SizeCount
    by_type: dict[str, SizeCount]
    by_domain: dict[str, SizeCount]


class RecentNotes(msgspec.Struct, kw_only=True):
    """Notes whose file changed in the last 7 and 30 local calendar days, today included."""

    last_7_days: int
    last_30_days: int


class LogCounts(msgspec.Struct, kw_only=True):
    since: Annotated[str, msgspec.Meta(description="The first local date of the window (YYYY-MM-DD).")]
    days: int
    total: int | None  #: null when the log cannot be read (issues says why)
    by_type: dict[str, int] | None  #: every known type, 0 included; an unknown one counts as (other)
    issues: list[str] = []


class RatioNote(msgspec.Struct, kw_only=True):
    path: str
    ratio: float
    bytes: int
    source_bytes: int


class SourceRatio(msgspec.Struct, kw_only=True):
    """Each note with a ``source`` against the vault files it cites: note bytes over source bytes."""

    notes: int  #: notes with a ratio
    sources: int  #: source files counted behind them
    median: float | None
    p90: float | None  #: nearest rank
    over_one: int  #: notes larger than their sources
    largest: list[RatioNote]  #: up to five, by ratio
    skipped: int  #: source references left out: no file in the vault (a URL, a missing path)
    empty_source_notes: int  #: notes whose cited files total zero bytes


class StatsResult(Result):
    vault: str
    notes: int
    attachments: int
    bytes: int
    words: int
    links: int
    dead_links: int
    ambiguous_links: int
    orphans: int  #: notes with no link in or out
    by_type: dict[str, int]
    by_domain: dict[str, int]
    by_folder: dict[str, int]
    issues: int
    skipped: int
    by_status: dict[str, int] = {}
    recent: RecentNotes | None = None
    log: LogCounts | None = None
    size: NoteSize | None = None
    ratio: SourceRatio | None = None


class IssuesParams(Params):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many issues in this page.")] = 100
    cursor: Cursor | None = None


class FileIssue(msgspec.Struct, kw_only=True, omit_defaults=True):
    path: str
    code: str
    message: str
    line: int | None = None


class IssuesResult(Result):
    issues: list[FileIssue]
    total: int
    next_cursor: str | None


def _read(name: str, params: type[P], result: type[R], summary: str) -> MethodSpec[P, R]:
    return spec(name, params, result, summary, Effect.READ, Trait.MCP)


SEARCH = _read(
    "note.search",
    SearchParams,
    SearchResult,
    "Full-text search of notes (the query's syntax is in its description), by type, domain, tag and folder. Start here.",
)
READ = _read(
    "note.read",
    ReadParams,
    ReadResult,
    "Read a note by path, name or alias: frontmatter and body, or one H2 section, paged by bytes.",
)
READ_MANY = _read(
    "note.read_many",
    ReadManyParams,
    ReadManyResult,
    f"Read up to {MAX_READ_MANY} notes at once, each paged by bytes; one that cannot be read fails alone.",
)
LINKS = _read(
    "note.links",
    LinksParams,
    LinksResult,
    "A note's outgoing links (resolved, missing or ambiguous, with a suggestion) and its backlinks.",
)
LIST = _read(
    "note.list",
    ListParams,
    ListResult,
    "List notes in path order, optionally under a folder; page with the returned cursor.",
)
TAGS = _read("vault.tags", TagsParams, TagsResult, "Every tag with how many notes carry it.")
STATS = _read(
    "vault.stats",
    StatsParams,
    StatsResult,
    "Counts: notes by type, domain, status and folder; links, orphans, size, recent activity, log events, note-to-source ratio.",
)
ISSUES = _read(
    "vault.issues",
    IssuesParams,
    IssuesResult,
    "Problems found while indexing: malformed frontmatter, skipped files (too large, not UTF-8, links).",
)
SPECS = (SEARCH, READ, READ_MANY, LINKS, LIST, TAGS, STATS, ISSUES)
