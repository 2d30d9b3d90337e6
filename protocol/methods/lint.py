"""Vault-wide lint: every rule by its code, the read that reports findings, and the one write
that applies the mechanical fixes.

``vault.lint`` is a read: deterministic for a declared ``as_of`` date, it changes nothing.
``lint.fix`` is an ordinary two-step operation: its preview lists every rewrite it would make,
with a fingerprint; only the confirm call, carrying that fingerprint, writes, and ``op.undo``
reverses it. Only fixes that cannot change what a link means are ever applied (see
:class:`LintCode`, ``fixable``); every other finding names what a person should do.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.indexing import MAX_VAULT_WORK
from protocol.methods.reads import Fresh, Target
from protocol.methods.receipts import MAX_DETAIL_LINKS, WriteReceipt, receipt_type
from protocol.methods.service import Level
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import TwoStepParams


class LintLevel(enum.StrEnum):
    """How much a finding matters: an error breaks something Obsidian shows; a warning is upkeep."""

    ERROR = "error"
    WARN = "warn"


class LintCode(enum.StrEnum):
    """One lint rule. ``level`` is its findings' level, ``meaning`` what it finds, ``action`` the
    fix, and ``fixable`` whether ``lint.fix`` applies that fix where it is mechanical."""

    level: LintLevel
    meaning: str
    action: str
    fixable: bool

    def __new__(cls, value: str, level: LintLevel, meaning: str, action: str, fixable: bool = False) -> LintCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.level = level
        member.meaning = meaning
        member.action = action
        member.fixable = fixable
        return member

    L01 = (
        "L01",
        LintLevel.ERROR,
        "A link names no note or file (a dead link); a bare [[alias]] is one too, since aliases are not link targets.",
        "Create the note, or correct the link; lint --fix rewrites [[alias]] to [[Note|alias]] when one note has that alias.",
        True,
    )
    L02 = (
        "L02",
        LintLevel.ERROR,
        "A bare link name matches several files, so Obsidian opens one of them without saying so.",
        "Write the link with the folder path; lint --fix does it where one candidate shares the linking note's folder.",
        True,
    )
    L03 = (
        "L03",
        LintLevel.ERROR,
        "A link's #heading or #^block does not exist in the note it names.",
        "Link to an existing heading or block, or add it.",
    )
    L04 = ("L04", LintLevel.WARN, "A note with no link in or out (an orphan).", "Link it from a note that it belongs with.")
    L05 = (
        "L05",
        LintLevel.WARN,
        "A note that no map of content or topic map reaches, by links or parent properties.",
        "Link it from a MOC, or give it a parent (up) that is in the map.",
    )
    L06 = (
        "L06",
        LintLevel.ERROR,
        "The frontmatter is malformed, or breaks the vault's schema profile.",
        "Correct the frontmatter as the finding says.",
    )
    L07 = (
        "L07",
        LintLevel.WARN,
        "Several notes share a name (so [[Name]] is ambiguous) or a title.",
        "Rename one; meanwhile write links to them with the folder path (lint --fix does the clear ones).",
    )
    L08 = (
        "L08",
        LintLevel.WARN,
        "A review date has passed, or the last-edited date is older than a year, as of the lint's date.",
        "Review the note, then update the date.",
    )
    L09 = ("L09", LintLevel.WARN, "A note with no text beyond its headings.", "Write it, or delete it.")
    L10 = (
        "L10",
        LintLevel.WARN,
        "A note over 256 KiB, or a file too large to index at all.",
        "Split it into smaller notes.",
    )
    L11 = (
        "L11",
        LintLevel.WARN,
        "One tag spelled several ways: by letter case (#Project, #project) or nested and not (#method, #pkm/method).",
        "Pick one spelling and use it everywhere.",
    )
    L12 = ("L12", LintLevel.WARN, "An attachment that no note or canvas links or embeds.", "Embed it where it belongs, or remove it.")
    L13 = (
        "L13",
        LintLevel.ERROR,
        "An embed of an attachment that does not exist.",
        "Add the file, or correct the embed's name and extension.",
    )
    L14 = (
        "L14",
        LintLevel.ERROR,
        "A .canvas file is not valid JSON Canvas, or one of its cards names a missing file or holds a dead link.",
        "Point the card at an existing file, or remove it.",
    )
    L15 = (
        "L15",
        LintLevel.ERROR,
        "A .base file is not valid YAML, or it names a note or folder that does not exist.",
        "Correct the name in the base's filters or formulas.",
    )
    L16 = (
        "L16",
        LintLevel.WARN,
        "Parent properties (up) form a cycle: a note is its own ancestor.",
        "Remove one parent link of the cycle; writes that would close a new cycle are refused (V11).",
    )
    L17 = (
        "L17",
        LintLevel.WARN,
        "A parent property (up) holds a value that is not a link, or a link to no note, so it names no parent.",
        'Write the parent as a link: up: "[[Topic]]".',
    )
    L18 = (
        "L18",
        LintLevel.WARN,
        "Typed profile: a note's file name is not lowercase ASCII kebab-case (like 'my-note.md').",
        "Rename it with note.move ('vaultctl move'), which rewrites every link to it.",
    )
    L19 = (
        "L19",
        LintLevel.WARN,
        "Typed profile: a note says confidence: proven but names no source.",
        "Add the source that proves it, or lower the confidence.",
    )
    L20 = (
        "L20",
        LintLevel.ERROR,
        "Typed profile: a note's topics name no map of content (a note of type moc).",
        "Name an existing map in topics, or create the map.",
    )
    L21 = (
        "L21",
        LintLevel.WARN,
        "A note vaultd generates (a view, a session's note) that a person edited, so vaultd no longer refreshes it.",
        "Keep it as yours (drop the view from 'vault set --views'), or hand it back: delete it and vaultd writes it again.",
    )


AsOf = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        description=(
            "Lint as of this date (YYYY-MM-DD); omitted, today. Review and staleness rules compare with it: "
            "the same date gives the same findings."
        ),
    ),
]
MAX_LINT_FINDINGS = 2000
MAX_FINDING_CHARS = 500  #: a finding's text (it quotes links as written) is cut to this, with "…"


class LintParams(Params):
    vault: OptionalVault = None
    note: Annotated[Target | None, msgspec.Meta(description="Only this note's findings (a path, name or alias).")] = None
    code: Annotated[LintCode | None, msgspec.Meta(description="Report only the findings of this rule, e.g. L03.")] = None
    as_of: AsOf | None = None
    limit: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_LINT_FINDINGS, description="At most this many findings, errors first; counts cover them all.")
    ] = 200
    fresh: Fresh = False
    write: Annotated[
        bool,
        msgspec.Meta(description="Also write the day's report note and a log event. The report is reports/lint-DATE.md, the event LINT."),
    ] = False


class LintFinding(msgspec.Struct, kw_only=True, omit_defaults=True):
    level: LintLevel
    code: LintCode
    note: str  #: the note or file the finding is about, vault-relative
    line: int | None = None
    finding: str  #: what is wrong, in one sentence, at most MAX_FINDING_CHARS characters
    fix: str | None = None  #: the rewrite ``lint.fix`` applies, ``old → new``; absent when no safe fix exists (also cut)


MAX_LINT_DOCUMENTS = 5000  #: .canvas and .base files one lint reads; past it the rest are counted, not checked
#: One lint's walk of its vault, from taking its copy of the index to the last rule: past it the
#: lint stops and answers LIMIT (below a client's 60 s wait, so the answer says why). A generated
#: 100,000-note vault took 27 s on a busy 2-core machine.
MAX_LINT_SECONDS = 45.0


class LintResult(Result):
    vault: str
    as_of: str  #: the date the date rules used
    verdict: Level  #: fail with any error, warn with any warning, else ok
    checked: int  #: notes checked
    errors: int
    warnings: int
    fixable: int  #: findings ``lint.fix`` would fix
    counts: dict[str, int]  #: findings by code, all of them (not only the listed ones)
    findings: list[LintFinding]  #: errors first, then by code, note and line
    truncated: bool
    #: canvases and bases past the MAX_LINT_DOCUMENTS one lint reads, or left when its time to read
    #: them (MAX_LINT_DOCUMENT_SECONDS) ran out: their links are not checked (L14, L15), and while
    #: any is unread no attachment is called unused (L12), since it may embed it
    unread_documents: int = 0
    report: Annotated[str | None, msgspec.Meta(description="The report written (with write), vault-relative.")] = None
    report_op: Annotated[str | None, msgspec.Meta(description="The operation that wrote it, for undo.")] = None


class LintFixParams(TwoStepParams, kw_only=True):
    note: Annotated[Target | None, msgspec.Meta(description="Only this note's findings (a path, name or alias).")] = None
    code: Annotated[LintCode | None, msgspec.Meta(description="Fix only the findings of this rule (L01 or L02).")] = None


class LintFixDetail(msgspec.Struct, kw_only=True):
    fixes: Annotated[list[str], msgspec.Meta(description=f"Each rewrite, as 'path:line old → new'; at most {MAX_DETAIL_LINKS}.")]
    fixed: Annotated[int, msgspec.Meta(description="How many links the operation rewrites.")]
    left: Annotated[int, msgspec.Meta(description="Fixable findings left for another run (past the operation's file bound).")] = 0


LINT = spec(
    "vault.lint",
    LintParams,
    LintResult,
    "Lint the whole vault (dead, ambiguous and anchor links, orphans, frontmatter, names, tags, attachments, canvas, bases, "
    "topic map): LEVEL/CODE/NOTE/FINDING rows and a verdict. Read-only. "
    f"Vault-wide work: LIMIT past {MAX_VAULT_WORK} such requests queued on the connection, "
    f"or when the walk runs past {MAX_LINT_SECONDS:g} s (lint one rule at a time with code).",
    Effect.READ,
    Trait.MCP,
)
LINT_FIX: MethodSpec[LintFixParams, WriteReceipt[LintFixDetail]] = MethodSpec(
    "lint.fix",
    LintFixParams,
    receipt_type(LintFixDetail),
    "Apply the safe mechanical lint fixes as one operation (two-step: preview every rewrite, then confirm with the fingerprint).",
    Effect.DESTRUCTIVE,
    Trait.MCP | Trait.TWO_STEP,
)
SPECS = (LINT, LINT_FIX)
