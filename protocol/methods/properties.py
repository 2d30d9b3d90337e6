"""Properties with types, and a note's outline.

Obsidian keeps one type per property name for the whole vault: the types a person chose, in
``.obsidian/types.json``, and for the rest the type inferred from the values. vaultd reads that
file live and never writes it.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.reads import Fresh, Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import FrontmatterKey, WriteParams


class PropertyType(enum.StrEnum):
    """A property's type, spelled as ``.obsidian/types.json`` spells it."""

    TEXT = "text"
    MULTITEXT = "multitext"  #: Obsidian's "List"
    NUMBER = "number"
    CHECKBOX = "checkbox"
    DATE = "date"
    DATETIME = "datetime"
    ALIASES = "aliases"
    TAGS = "tags"
    UNKNOWN = "unknown"  #: a nested mapping, which no Obsidian type holds


class PropertiesParams(Params):
    vault: OptionalVault = None
    fresh: Fresh = False


class PropertyInfo(msgspec.Struct, kw_only=True):
    name: Annotated[str, described("The property's name, as first written in the vault.")]
    type: Annotated[PropertyType, described("Its type: declared in .obsidian/types.json, else inferred from most of its values.")]
    declared: Annotated[bool, described("Whether the type comes from .obsidian/types.json or is built in (tags, aliases, cssclasses).")]
    notes: Annotated[int, described("How many notes have it.")]


class PropertiesResult(Result):
    properties: Annotated[list[PropertyInfo], described("Every property, by name (case-insensitive).")]
    notes: Annotated[int, described("Notes counted.")]
    words: Annotated[int, described("Words in those notes' bodies, as note.outline counts them.")]
    characters: Annotated[int, described("Characters in those notes' bodies, line breaks left out.")]
    tasks: Annotated[int, described("Checklist items in those notes.")]
    open_tasks: Annotated[int, described("Those of them still open.")]


class PropertyRenameParams(WriteParams, kw_only=True):
    old: Annotated[FrontmatterKey, described("The property to rename (matched case-insensitively, as Obsidian does).")]
    new: Annotated[FrontmatterKey, described("Its new name.")]


class OutlineParams(Params):
    target: Target
    vault: OptionalVault = None
    fresh: Fresh = False


class OutlineHeading(msgspec.Struct, kw_only=True):
    level: int
    text: str
    line: Annotated[int, described("1-based line in the note's file.")]


class OutlineBlock(msgspec.Struct, kw_only=True):
    id: Annotated[str, described("The block id, without the caret.")]
    line: int


class OutlineResult(Result):
    path: str
    headings: list[OutlineHeading]
    blocks: list[OutlineBlock]
    words: Annotated[int, described("Words in the body (frontmatter and code left out; each Chinese or Japanese character counts as one).")]
    characters: Annotated[int, described("Characters in the body, line breaks left out.")]
    tasks: Annotated[int, described("Checklist items.")]


VAULT_PROPERTIES = spec(
    "vault.properties",
    PropertiesParams,
    PropertiesResult,
    "Every frontmatter property with its type (Obsidian's) and note count, and word, character and task totals.",
    Effect.READ,
    Trait.MCP,
)
PROPERTY_RENAME: MethodSpec[PropertyRenameParams, WriteReceipt[NoDetail]] = MethodSpec(
    "property.rename",
    PropertyRenameParams,
    receipt_type(NoDetail),
    "Rename a frontmatter property in every note that has it (try dry_run first); other keys keep their bytes; undoable.",
    Effect.WRITE,
    Trait.MCP,
)
NOTE_OUTLINE = spec(
    "note.outline",
    OutlineParams,
    OutlineResult,
    "A note's headings (level, text, line), block ids, and word and character counts. Counted as Obsidian counts them.",
    Effect.READ,
    Trait.MCP,
)
SPECS = (VAULT_PROPERTIES, PROPERTY_RENAME, NOTE_OUTLINE)
