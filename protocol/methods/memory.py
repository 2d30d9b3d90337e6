"""Agent memory brought into a vault: an agent's own memory entries (Claude Code's ``MEMORY.md``
and project memory files, or any Markdown list of entries) listed as candidates, and each one
imported as a reviewed note that records where it came from.

An entry's id is a hash of its text, so the same entry has the same id on every run; the note an
import creates carries it in ``imported_from``, and a second import of it is refused. The memory
files are read, bounded, and never changed.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import PERSON_ONLY, OptionalVault, Params, Result
from protocol.methods.reads import Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import TwoStepParams

MAX_MEMORY_FILE_BYTES = 256 * 1024  #: one memory file; a larger one is skipped and reported
MAX_MEMORY_FILES = 1_000  #: memory files read in one call
MAX_MEMORY_ENTRIES = 2_000  #: entries taken from them, in file order; the rest are counted as left out
MAX_CANDIDATES = 200
IMPORTED_FROM = "imported_from"  #: the property that records an imported entry's id
IMPORTED_AT = "imported_at"

EntryId = Annotated[str, msgspec.Meta(pattern=r"^mem-[0-9a-f]{16}$", description="A memory entry's id, from memory.candidates.")]
MemoryPath = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=4096,
        description=(
            "An absolute memory file or folder (a person's call only: agents are not offered it); "
            "omitted, Claude Code's ~/.claude/projects/*/memory/."
        ),
        extra={PERSON_ONLY: True},
    ),
]


class MemoryCandidatesParams(Params, kw_only=True):
    vault: OptionalVault = None
    path: MemoryPath | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_CANDIDATES, description=f"At most this many entries (1..{MAX_CANDIDATES}).")] = 50


class MemoryEntry(msgspec.Struct, kw_only=True):
    id: str
    title: str
    excerpt: str  #: the entry's first characters
    origin: str  #: the memory file, ``~`` for the home folder
    kind: str  #: claude-memory (a memory file), claude-index (a MEMORY.md line) or list (an item of a list)


class MemoryCandidatesResult(Result):
    entries: list[MemoryEntry]  #: not yet imported, in file order
    imported: int  #: entries found that a note already records
    total: int  #: candidates before the limit
    skipped: list[str]  #: files left out, each with why
    truncated: bool  #: more entries than read (a bound was reached)


class MemoryImportParams(TwoStepParams, kw_only=True):
    entry: EntryId
    path: MemoryPath | None = None
    folder: Annotated[str, msgspec.Meta(max_length=512, description="The vault folder for the new note; omitted, the vault's top.")] = ""
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=200, description="The note's title; omitted, the entry's.")] | None = None
    link_to: Annotated[Target | None, msgspec.Meta(description="Record the entry on this existing note instead of creating one.")] = None


MEMORY_CANDIDATES = spec(
    "memory.candidates",
    MemoryCandidatesParams,
    MemoryCandidatesResult,
    "Agent memory entries not yet in the vault.",
    Effect.READ,
    Trait.MCP,
)
MEMORY_IMPORT: MethodSpec[MemoryImportParams, WriteReceipt[NoDetail]] = MethodSpec(
    "memory.import",
    MemoryImportParams,
    receipt_type(NoDetail),
    "Import a memory entry as a note: a preview, then confirm=true with its fingerprint.",
    Effect.WRITE,
    Trait.MCP,
)
SPECS = (MEMORY_CANDIDATES, MEMORY_IMPORT)
