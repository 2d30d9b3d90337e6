"""report.write: a note under ``reports/`` written by a tool or an agent (a lint or graph report).

A report is output, not knowledge: it is exempt from the typed profile's schema and its links to
notes that do not exist yet only warn, so a report about a broken vault can always be written.
It goes through the write path like any note (validated for secrets and PII, journaled, undoable,
logged: EXTRACT by default, LINT or GRAPH when the caller says so).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.limits import MAX_NOTE_BYTES, describe
from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.reads import Fresh
from protocol.methods.receipts import NoDetail
from protocol.methods.spec import Effect, Trait, spec
from protocol.methods.writes import WriteParams, _write

REPORTS_FOLDER = "reports"  #: every report lives below it

ReportName = Annotated[
    str,
    msgspec.Meta(
        min_length=4,
        max_length=200,
        pattern=r"^(?!/)(?!.*(?:^|/)\.{1,2}(?:/|$))(?!.*//)[^\x00-\x1f\x7f\\:*?\"<>|#^\[\]]+\.md$",
        description="A file name under reports/, ending in .md. For example lint-2026-05-01.md.",
    ),
]


class ReportParams(WriteParams, kw_only=True):
    name: ReportName
    body: Annotated[
        str,
        msgspec.Meta(max_length=MAX_NOTE_BYTES, description=f"The report's Markdown; at most {describe(MAX_NOTE_BYTES)} as UTF-8."),
    ]
    replace: Annotated[bool, msgspec.Meta(description="Replace a report of that name (otherwise CONFLICT).")] = False


def report_path(name: str) -> str:
    """The vault-relative path of the report ``name``."""
    return f"{REPORTS_FOLDER}/{name.strip('/')}"


def in_reports(path: str) -> bool:
    return path.startswith(REPORTS_FOLDER + "/")


REPORT_WRITE = _write(
    "report.write",
    ReportParams,
    NoDetail,
    "Write a report note under reports/: exempt from the typed schema, logged (EXTRACT, or LINT/GRAPH as given).",
)


class GraphBuildParams(Params):
    vault: OptionalVault = None
    write: Annotated[
        bool,
        msgspec.Meta(description="Also write the day's report note and a log event. The report is reports/graph-DATE.md, the event GRAPH."),
    ] = False
    fresh: Fresh = False


class GraphSummary(msgspec.Struct, kw_only=True):
    built: str  #: when, UTC, ISO 8601
    notes: int
    edges: int  #: distinct linked pairs
    orphans: int  #: notes with no link in or out
    components: int  #: groups of notes linked together, singletons included
    largest_component: int
    communities: int | None = None  #: Leiden's, when the graph extra is installed
    hubs: list[str] = []  #: up to five notes with the most links


class GraphBuildResult(Result):
    vault: str
    summary: GraphSummary
    previous: Annotated[GraphSummary | None, msgspec.Meta(description="The last build's summary, when there was one.")] = None
    trend: Annotated[dict[str, int], msgspec.Meta(description="Each count's change since the last build.")] = {}
    state: Annotated[str, msgspec.Meta(description="Where the build is kept: vault-graph.json in the vault's state folder.")] = ""
    report: str | None = None  #: the report written (with write), vault-relative
    report_op: str | None = None


GRAPH_BUILD = spec(
    "graph.build",
    GraphBuildParams,
    GraphBuildResult,
    "Build the link graph's summary, with its trend since the last build. It is kept as vault-graph.json in vaultd's state.",
    Effect.WRITE,
    Trait.MCP,
)
SPECS = (REPORT_WRITE, GRAPH_BUILD)
