"""vault.tidy: the migration rules for a vault an older, unvalidated writer kept, as one operation.

Each rule is named by a code of the catalogue (``T01``...``T08``, :mod:`protocol.issue_codes`). The
operation is an ordinary two-step one over the whole vault: the preview lists every change by rule
and note (and what was found but left for a person), with a fingerprint; the confirm call writes
it as one transaction, and ``op.undo`` reverses it (a redaction excepted: a secret once redacted is
never written back, see docs/maintenance.md).
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.issue_codes import IssueCode
from protocol.methods.receipts import MAX_DETAIL_LINKS, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait
from protocol.methods.writes import TwoStepParams


class TidyRule(enum.StrEnum):
    """One migration rule; ``code`` is its entry in the issue catalogue."""

    code: IssueCode

    def __new__(cls, value: str, code: IssueCode) -> TidyRule:
        member = str.__new__(cls, value)
        member._value_ = value
        member.code = code
        return member

    ESCAPES = ("escapes", IssueCode.T01)
    ENUMS = ("enums", IssueCode.T02)
    KEYS = ("keys", IssueCode.T03)
    SOURCES = ("sources", IssueCode.T04)
    TOPICS = ("topics", IssueCode.T05)
    CONNECTIONS = ("connections", IssueCode.T06)
    SECRETS = ("secrets", IssueCode.T07)
    LOG = ("log", IssueCode.T08)


class TidyParams(TwoStepParams, kw_only=True):
    rules: (
        Annotated[list[TidyRule], msgspec.Meta(max_length=len(TidyRule), description="Apply only these rules; omitted, every rule.")] | None
    ) = None


class TidyDetail(msgspec.Struct, kw_only=True):
    counts: Annotated[dict[str, int], msgspec.Meta(description="Changes by rule code (T01...), over every note written.")]
    changes: Annotated[
        list[str],
        msgspec.Meta(description=f"Each change, as 'CODE path:line what' (a secret is never shown); at most {MAX_DETAIL_LINKS}."),
    ]
    reported: Annotated[
        list[str],
        msgspec.Meta(description=f"What a rule found but left for a person, as 'CODE path:line what'; at most {MAX_DETAIL_LINKS}."),
    ] = msgspec.field(default_factory=list)
    left: Annotated[int, msgspec.Meta(description="Notes left for another run (past the operation's file bound).")] = 0


TIDY: MethodSpec[TidyParams, WriteReceipt[TidyDetail]] = MethodSpec(
    "vault.tidy",
    TidyParams,
    receipt_type(TidyDetail),
    "Tidy an older vault's frontmatter, sections and secrets as one undoable operation (two-step).",
    Effect.DESTRUCTIVE,
    Trait.MCP | Trait.TWO_STEP,
)
SPECS = (TIDY,)
