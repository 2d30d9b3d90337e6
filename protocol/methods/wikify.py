"""Wikify: links suggested where a note names another note, proposed for a person to accept one by one.

``wikify.suggest`` finds, in a note's prose, the first mention of each other note's name or alias
(whole words, any case; never in the frontmatter, a heading, a table row, code, a comment, a link,
a URL or a tag), each with the link the vault's link format writes for it, keeping the note's own
spelling. ``wikify.propose`` turns the chosen suggestions into one proposal; a person applies it
whole (``proposal.apply``) or accepts only some of its links (``wikify.accept``). Each link is a
replacement of the mention's exact characters in the note as reviewed, so a subset applies
exactly the hunks the person chose, or nothing when the note changed since.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Reason, Result
from protocol.methods.proposals import ProposalId
from protocol.methods.reads import Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import WriteParams

MAX_SUGGESTIONS = 200  #: links suggested in one note


class WikifySuggestParams(Params, kw_only=True):
    vault: OptionalVault = None
    target: Target


class Suggestion(msgspec.Struct, kw_only=True):
    number: Annotated[int, msgspec.Meta(description="Its number, to choose it (1-based).")]
    line: Annotated[int, msgspec.Meta(description="The 1-based line of the mention.")]
    text: Annotated[str, msgspec.Meta(description="The mention, as the note spells it.")]
    target: Annotated[str, msgspec.Meta(description="The note it names.")]
    link: Annotated[str, msgspec.Meta(description="What replaces the mention, in the vault's link format.")]


class WikifySuggestResult(Result):
    path: str
    sha: Annotated[str, msgspec.Meta(description="The sha256 of the note the suggestions were found in.")]
    suggestions: list[Suggestion]


class WikifyProposeParams(Params, kw_only=True):
    vault: OptionalVault = None
    target: Target
    choose: (
        Annotated[
            list[Annotated[int, msgspec.Meta(ge=1, le=MAX_SUGGESTIONS)]],
            msgspec.Meta(max_length=MAX_SUGGESTIONS, description="Suggestion numbers; omitted: all."),
        ]
        | None
    ) = None
    reason: Annotated[Reason | None, msgspec.Meta(description="Why, in one line, for the person.")] = None


class WikifyProposeResult(Result):
    path: str
    links: Annotated[list[Suggestion], msgspec.Meta(description="The proposal's links, numbered as wikify.accept takes them.")]
    proposal: Annotated[str | None, msgspec.Meta(description="The proposal; none when nothing was suggested.")] = None


class WikifyAcceptParams(Params, kw_only=True):
    vault: OptionalVault = None
    id: ProposalId
    links: Annotated[
        list[Annotated[int, msgspec.Meta(ge=1, le=MAX_SUGGESTIONS)]],
        msgspec.Meta(min_length=1, max_length=MAX_SUGGESTIONS, description="The numbers of the links to write; the rest are dropped."),
    ]


class WikifyAcceptResult(Result):
    proposal: str
    path: str
    accepted: list[int]
    op_id: Annotated[str, msgspec.Meta(description="The operation that wrote them; op.undo reverses it.")]


class LinkEdit(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    start: Annotated[int, msgspec.Meta(ge=0, description="The mention's character offset in the note.")]
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
    link: Annotated[str, msgspec.Meta(min_length=1, max_length=3000)]
    line: int = 0


class WikifyLinkParams(WriteParams, kw_only=True):
    """What a wikify proposal holds: the note, its bytes' sha as reviewed, and each replacement."""

    path: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
    sha: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
    links: Annotated[list[LinkEdit], msgspec.Meta(min_length=1, max_length=MAX_SUGGESTIONS)]


WIKIFY_SUGGEST = spec(
    "wikify.suggest",
    WikifySuggestParams,
    WikifySuggestResult,
    "Suggest links where a note names other notes (their names or aliases).",
    Effect.READ,
    Trait.MCP,
)
WIKIFY_PROPOSE = spec(
    "wikify.propose",
    WikifyProposeParams,
    WikifyProposeResult,
    "Propose suggested links to your user, who accepts them one by one.",
    Effect.WRITE,
    Trait.MCP,
)
WIKIFY_ACCEPT = spec(
    "wikify.accept",
    WikifyAcceptParams,
    WikifyAcceptResult,
    "Write only the chosen links of a wikify proposal (a person only); the proposal is then applied.",
    Effect.WRITE,
)
#: Not a method: the operation a wikify proposal holds, applied only by a person (proposal.apply or
#: wikify.accept). Declared as a spec so that its operation is typed and catalogued.
WIKIFY_LINK: MethodSpec[WikifyLinkParams, WriteReceipt[NoDetail]] = MethodSpec(
    "wikify.link",
    WikifyLinkParams,
    receipt_type(NoDetail),
    "Replace mentions in a note with links to the notes they name, exactly as reviewed.",
    Effect.WRITE,
)
SPECS = (WIKIFY_SUGGEST, WIKIFY_PROPOSE, WIKIFY_ACCEPT)
