"""report (write a report note under reports/) and graph (build the graph's summary, its trend,
and with --write the day's report)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from protocol.errors import ExitStatus
from protocol.methods import reports
from protocol.methods.reports import GraphBuildParams, GraphBuildResult, ReportParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command
from vaultctl.completion import Complete


@write_command(reports.REPORT_WRITE)
def report(
    name: Annotated[str, typer.Argument(metavar="NAME", help=doc(ReportParams, "name"))],
    body: Annotated[str, typer.Option(help="A file to read the report from, or - for stdin."), Complete.FILE] = "-",
    replace: Annotated[bool, typer.Option("--replace", help=doc(ReportParams, "replace"))] = False,
    *,
    flags: WriteFlags[ReportParams],
) -> None:
    """Write a report note under reports/ (schema-exempt; logged EXTRACT, or as --log says)."""
    try:
        text = sys.stdin.read() if body == "-" else Path(body).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {body}: {exc}", ExitStatus.USAGE)
    flags.run(lambda steering: ReportParams(name=name, body=text, replace=replace, **steering))


def graph_build(
    write: Annotated[bool, typer.Option("--write", help=doc(GraphBuildParams, "write"))] = False,
    vault: VaultOpt = None,
    fresh: Annotated[bool, typer.Option("--fresh", help=doc(GraphBuildParams, "fresh"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Build the link graph's summary, kept in vaultd's state with its trend since the last build; --write adds the day's report."""
    with session() as c:
        result = call(reports.GRAPH_BUILD, GraphBuildParams(vault=pick_vault(c, vault), write=write, fresh=fresh), client=c)

    def text(r: GraphBuildResult) -> str:
        s = r.summary
        keys = ("notes", "edges", "orphans", "components", "largest_component", "communities")
        rows = [(k, "-" if getattr(s, k) is None else getattr(s, k), f"{r.trend[k]:+d}" if k in r.trend else "-") for k in keys]
        parts = [f"graph of vault {r.vault}, built {s.built}", render.table(["measure", "now", "since last build"], rows)]
        if s.hubs:
            parts.append("most links: " + ", ".join(s.hubs))
        if r.report:
            parts.append(f"report: {r.report} (op {r.report_op})")
        return render.compose(parts, "\n\n")

    emit(result, as_json, text)
