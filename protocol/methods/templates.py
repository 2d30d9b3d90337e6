"""Templates: the notes in the vault's templates folder (``templates.json``), listed and inserted
with Obsidian's core Templates variables rendered (``{{title}}``, ``{{date}}``, ``{{time}}``,
``{{date:FORMAT}}``, ``{{time:FORMAT}}``, in the vault's formats). Templater's ``<% %>`` is
inserted as written, with a warning. ``note.create`` takes a template too."""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.daily import Heading
from protocol.methods.reads import Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import EditParams

MAX_TEMPLATES_LISTED = 1000  #: template.list answers at most this many

TemplateName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=1024,
        description="A template's name or vault path. Its name as template.list gives it.",
    ),
]


class TemplateListParams(Params, kw_only=True):
    vault: OptionalVault = None


class TemplateInfo(msgspec.Struct, kw_only=True):
    name: str  #: as Obsidian lists it: the path below the templates folder, without .md
    path: str
    size: int


class TemplateListResult(Result):
    folder: str  #: the templates folder ('' when the vault has none set)
    templates: list[TemplateInfo]
    truncated: bool


class TemplateInsertParams(EditParams, kw_only=True):
    target: Annotated[Target, msgspec.Meta(description="The note to insert into (a path, name or alias).")]
    template: TemplateName
    under: Heading | None = None


TEMPLATE_LIST = spec(
    "template.list",
    TemplateListParams,
    TemplateListResult,
    "The templates in the vault's templates folder.",
    Effect.READ,
    Trait.MCP,
)
TEMPLATE_INSERT: MethodSpec[TemplateInsertParams, WriteReceipt[NoDetail]] = MethodSpec(
    "template.insert",
    TemplateInsertParams,
    receipt_type(NoDetail),
    "Insert a rendered template into a note, at its end or under a heading.",
    Effect.WRITE,
    Trait.MCP,
)
SPECS = (TEMPLATE_LIST, TEMPLATE_INSERT)
