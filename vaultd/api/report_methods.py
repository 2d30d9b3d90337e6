"""graph.build and the reports lint and the graph write: a dated note under ``reports/`` written
through ``report.write`` (so the agent gate, the journal, undo and the log line hold), and the
graph's summary kept in vaultd's state folder as ``vault-graph.json`` with its trend.

The state file is vaultd's own (the vault's ``.vaultd/``), never a note: a build rewrites it
atomically, and the next build compares itself with it. An unreadable or foreign file there is
no previous build, never an error: the trend then starts again.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from protocol.methods import reports
from protocol.methods.reports import GraphBuildParams, GraphBuildResult, GraphSummary, ReportParams
from protocol.methods.writes import LogEvent, LogType
from vaultd.api.graph_methods import on_snapshot, partitioned
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import VaultError
from vaultd.fsio import ReadRefused, read_regular, write_atomic
from vaultd.ops import operations

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.lint import LintResult
    from vaultd.graph.snapshot import LinkSnapshot

GRAPH_STATE = "vault-graph.json"  #: in the vault's state folder
MAX_GRAPH_STATE_BYTES = 64 * 1024
HUBS = 5
_TREND_KEYS = ("notes", "edges", "orphans", "components", "largest_component", "communities")


class _GraphState(msgspec.Struct, kw_only=True):
    version: int = 1
    summary: GraphSummary


async def write_report(ctx: CallContext, vault: str | None, name: str, body: str, event: LogEvent) -> tuple[str, str | None]:
    """Write (or rewrite) the report ``name`` as the caller, through the write path: (its path, op id)."""
    receipt = await operations()[reports.REPORT_WRITE.name].run(
        ctx, ReportParams(vault=vault, name=name, body=body, replace=True, log=event)
    )
    return reports.report_path(name), getattr(receipt, "op_id", None)


def lint_report(r: LintResult) -> str:
    """The lint's findings as a report note: what was checked, the verdict, the counts, each finding."""
    lines = [
        f"# Lint report {r.as_of}",
        "",
        f"Verdict **{r.verdict}**: {r.errors} error(s), {r.warnings} warning(s) in {r.checked} note(s), as of {r.as_of}.",
        "",
    ]
    if r.counts:
        lines += ["| code | findings |", "| --- | --- |", *(f"| {c} | {n} |" for c, n in r.counts.items()), ""]
    if r.findings:
        lines += ["| level | code | note | finding |", "| --- | --- | --- | --- |"]
        lines += [f"| {f.level} | {f.code} | {_cell(f.note)}{f':{f.line}' if f.line else ''} | {_cell(f.finding)} |" for f in r.findings]
    if r.truncated:
        lines += ["", f"{len(r.findings)} findings listed; the counts cover them all."]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe in a table cell: a pipe would end the cell, a link would become one."""
    return text.replace("|", "\\|").replace("[[", "\\[\\[").replace("\n", " ")


def _summary(snap: LinkSnapshot) -> GraphSummary:
    """Counts of the caller's snapshot: links in either direction are one edge."""
    near: dict[str, set[str]] = {p: set() for p in snap.notes}
    for source, targets in snap.out.items():
        for target in targets:
            if source in near and target in near and target != source:
                near[source].add(target)
                near[target].add(source)
    edges = sum(len(n) for n in near.values()) // 2
    seen: set[str] = set()
    sizes: list[int] = []
    for start in sorted(near):
        if start in seen:
            continue
        seen.add(start)
        stack, size = [start], 0
        while stack:
            node = stack.pop()
            size += 1
            for other in near[node] - seen:
                seen.add(other)
                stack.append(other)
        sizes.append(size)
    hubs = sorted(near, key=lambda p: (-len(near[p]), p))[:HUBS]
    return GraphSummary(
        built=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        notes=len(near),
        edges=edges,
        orphans=sum(1 for n in near.values() if not n),
        components=len(sizes),
        largest_component=max(sizes, default=0),
        hubs=[h for h in hubs if near[h]],
    )


def _previous(state: Path) -> GraphSummary | None:
    try:
        data, _ = read_regular(state, MAX_GRAPH_STATE_BYTES)
        return msgspec.json.decode(data, type=_GraphState).summary
    except (OSError, ReadRefused, msgspec.DecodeError):
        return None


def trend(now: GraphSummary, before: GraphSummary | None) -> dict[str, int]:
    """Each count's change since ``before`` (a count either side lacks is left out)."""
    if before is None:
        return {}
    out: dict[str, int] = {}
    for key in _TREND_KEYS:
        new, old = getattr(now, key), getattr(before, key)
        if isinstance(new, int) and isinstance(old, int):
            out[key] = new - old
    return out


def graph_report(vault: str, r: GraphBuildResult) -> str:
    s = r.summary
    rows: list[tuple[str, Any, Any]] = [(k, getattr(s, k), r.trend.get(k)) for k in _TREND_KEYS]
    lines = [f"# Graph report {s.built[:10]}", "", f"The link graph of vault {vault}, built {s.built}.", ""]
    lines += ["| measure | now | since last build |", "| --- | --- | --- |"]
    lines += [f"| {k} | {'-' if v is None else v} | {'-' if d is None else f'{d:+d}'} |" for k, v, d in rows]
    if s.hubs:
        lines += ["", "Notes with the most links: " + ", ".join(f"`{_cell(h)}`" for h in s.hubs) + "."]
    return "\n".join(lines) + "\n"


@handles(reports.GRAPH_BUILD)
async def graph_build(ctx: CallContext, params: GraphBuildParams) -> GraphBuildResult:
    runtime = ctx.host.vault(params.vault)
    snap = await on_snapshot(ctx, params.vault, params.fresh, lambda live, view, snap: snap)
    summary = await anyio.to_thread.run_sync(_summary, snap)
    try:
        from protocol.methods.graph import CommunitiesParams

        found = await partitioned(ctx, CommunitiesParams(vault=params.vault, fresh=False))
        summary = msgspec.structs.replace(summary, communities=found.total)
    except VaultError:
        pass  # no graph extra, or the worker failed: the build stands without communities
    state = runtime.state_dir / GRAPH_STATE
    before = await anyio.to_thread.run_sync(_previous, state)
    data = msgspec.json.format(msgspec.json.encode(_GraphState(summary=summary)), indent=2) + b"\n"
    await anyio.to_thread.run_sync(write_atomic, state, data)
    result = GraphBuildResult(vault=runtime.entry.id, summary=summary, previous=before, trend=trend(summary, before), state=str(state))
    if params.write:
        event = LogEvent(type=LogType.GRAPH, source="graph.build", note=f"{summary.notes} notes, {summary.edges} links")
        path, op = await write_report(ctx, params.vault, f"graph-{summary.built[:10]}.md", graph_report(runtime.entry.id, result), event)
        result = msgspec.structs.replace(result, report=path, report_op=op)
    return result
