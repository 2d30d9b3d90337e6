"""capture, sources, claim, evidence, retrieve: the source and claim ledgers, and passages.

``vaultctl capture FILE`` hands the daemon the file's absolute path: a person's files are read by
the daemon, which runs as that person. ``-`` reads standard input here; content up to the bound of
a call travels in it, larger input is spooled to a private temporary file that is removed after
the call. The input itself is never changed.
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from protocol.errors import ExitStatus
from protocol.limits import DEFAULT_ANSWER_BYTES, MAX_ANSWER_BYTES, MAX_INLINE_CAPTURE_BYTES, MIN_ANSWER_BYTES
from protocol.methods import retrieve, sources
from protocol.methods.retrieve import RetrieveParams, RetrieveResult
from protocol.methods.sources import (
    Authority,
    CaptureDetail,
    CaptureItem,
    CaptureParams,
    ClaimAddParams,
    ClaimListParams,
    ClaimListResult,
    ClaimState,
    ClaimUpdateParams,
    ClaimView,
    Confidence,
    EvidenceParams,
    EvidenceResult,
    Risk,
    SourceKind,
    SourceListParams,
    SourceListResult,
    SourceState,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.receipts import receipt_text
from vaultctl.commands.write_command import WriteFlags, write_command

if TYPE_CHECKING:
    from collections.abc import Iterator

    from protocol.methods.receipts import Outcome

claim_app = typer.Typer(help="The claim ledger: record, update and list claims about pages.", no_args_is_help=True)
FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(SourceListParams, "fresh"))]


@contextmanager
def _stdin_item(origin: str | None) -> Iterator[CaptureItem]:
    """Standard input as one capture item: sent in the call when it fits, else through a private
    temporary file that is removed afterwards."""
    data = sys.stdin.buffer.read()
    if len(data) <= MAX_INLINE_CAPTURE_BYTES:
        yield CaptureItem(data=base64.b64encode(data).decode("ascii"), name="stdin", origin=origin or "stdin")
        return
    fd, spool = tempfile.mkstemp(prefix="vaultctl-capture-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        yield CaptureItem(path=spool, name="stdin", origin=origin or "stdin")
    finally:
        os.unlink(spool)


def _capture_text(r: Outcome, confirm_cmd: str | None) -> str:
    lines = [receipt_text(r, confirm_cmd, omit=frozenset({"sources"}))]
    detail = r.detail
    if isinstance(detail, CaptureDetail) and detail.sources:
        lines.append(
            render.table(
                ["note", "kind", "raw copy", "bytes", "dedup"],
                [(s.note, s.kind, s.raw or "-", s.size, "yes" if s.deduplicated else "-") for s in detail.sources],
            )
        )
    return "\n".join(lines)


@write_command(sources.CAPTURE)
def capture(
    files: Annotated[list[str] | None, typer.Argument(metavar="FILE...", help="Files to capture; - reads standard input.")] = None,
    url: Annotated[list[str] | None, typer.Option("--url", help=doc(CaptureItem, "url") + " Repeatable.")] = None,
    note: Annotated[str | None, typer.Option("--note", help=doc(CaptureParams, "note"))] = None,
    title: Annotated[str | None, typer.Option(help=doc(CaptureItem, "title") + " One item only.")] = None,
    origin: Annotated[str | None, typer.Option(help=doc(CaptureItem, "origin"))] = None,
    authority: Annotated[Authority, typer.Option(help=doc(CaptureItem, "authority"))] = Authority.UNKNOWN,
    independence: Annotated[str | None, typer.Option(help=doc(CaptureItem, "independence"))] = None,
    synthetic: Annotated[bool, typer.Option("--synthetic", help=doc(CaptureItem, "synthetic"))] = False,
    ocr: Annotated[bool, typer.Option("--ocr", help=doc(CaptureItem, "ocr"))] = False,
    doi: Annotated[str | None, typer.Option(help=doc(CaptureItem, "doi") + " One item only.")] = None,
    arxiv_id: Annotated[str | None, typer.Option("--arxiv", help=doc(CaptureItem, "arxiv_id") + " One item only.")] = None,
    citekey: Annotated[str | None, typer.Option(help=doc(CaptureItem, "citekey") + " One item only.")] = None,
    runner: Annotated[str | None, typer.Option(help=doc(CaptureParams, "runner"))] = None,
    *,
    flags: WriteFlags[CaptureParams],
) -> None:
    """Copy files into content-addressed raw copies with a source note each (URLs become consent plans, never fetched)."""
    names = list(files or [])
    urls = list(url or [])
    if not names and not urls:
        fail("give at least one FILE (or -) or --url", ExitStatus.USAGE)
    if names.count("-") > 1:
        fail("standard input can be captured once per call", ExitStatus.USAGE)
    single = len(names) + len(urls) == 1
    if not single and (title or doi or arxiv_id or citekey):
        fail("--title, --doi, --arxiv and --citekey describe one item: capture it on its own", ExitStatus.USAGE)

    def item(**where: Any) -> CaptureItem:
        return CaptureItem(
            **where,
            authority=authority,
            independence=independence,
            synthetic=synthetic,
            title=title,
            doi=doi,
            arxiv_id=arxiv_id,
            citekey=citekey,
        )

    items: list[CaptureItem] = []
    for name in names:
        if name == "-":
            continue
        path = os.path.realpath(name)
        if not os.path.isfile(path):
            fail(f"{name} is not a file", ExitStatus.USAGE)
        items.append(item(path=path, origin=origin, ocr=ocr))
    items += [item(url=u) for u in urls]
    words = [
        "capture",
        *names,
        *(w for u in urls for w in ("--url", u)),
        *(("--note", note) if note else ()),
    ]
    with _maybe_stdin("-" in names, origin) as from_stdin:
        if from_stdin is not None:
            items.insert(
                names.index("-"), item(data=from_stdin.data, path=from_stdin.path, name=from_stdin.name, origin=from_stdin.origin, ocr=ocr)
            )
        flags.run(lambda steering: CaptureParams(items=items, note=note, runner=runner, **steering), *words, text=_capture_text)


@contextmanager
def _maybe_stdin(wanted: bool, origin: str | None) -> Iterator[CaptureItem | None]:
    if not wanted:
        yield None
        return
    with _stdin_item(origin) as item:
        yield item


def list_sources(
    vault: VaultOpt = None,
    kind: Annotated[SourceKind | None, typer.Option(help=doc(SourceListParams, "kind"))] = None,
    state: Annotated[SourceState | None, typer.Option(help=doc(SourceListParams, "state"))] = None,
    verify: Annotated[bool, typer.Option("--verify", help=doc(SourceListParams, "verify"))] = False,
    limit: Annotated[int, typer.Option(min=1, max=sources.MAX_LISTED, help=doc(SourceListParams, "limit"))] = 100,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The source ledger: each source's kind, state, independence, origin and (with --verify) drift."""
    with session() as c:
        params = SourceListParams(vault=pick_vault(c, vault), kind=kind, state=state, verify=verify, limit=limit, fresh=fresh)
        result = call(sources.SOURCE_LIST, params, client=c)

    def text(r: SourceListResult) -> str:
        if not r.sources:
            return "no sources recorded"
        rows = [(s.path, s.kind or "-", s.state, s.drift, s.independence, s.origin or "-") for s in r.sources]
        return render.compose(
            [
                render.table(["source", "kind", "state", "drift", "independence", "origin"], rows),
                f"{len(r.sources)} of {r.total} source(s)",
            ]
        )

    emit(result, as_json, text)


def _claim_lines(v: ClaimView) -> list[str]:
    lines = [f"{v.verdict.upper():<16} {v.state:<9} risk {v.risk:<6} {v.claim}", f"  claim note: {v.path}"]
    for label, cites in (("support", v.support), ("contradicted by", v.contradictions)):
        for c in cites:
            lines.append(f"  {label}: {c.path or c.cited} ({c.status}{', ' + c.independence if c.independence else ''})")
    if not v.support:
        lines.append("  support: none (unsupported)")
    if v.assessment:
        lines.append(f"  assessment: {v.assessment}")
    return lines


def evidence(
    target: Annotated[str | None, typer.Argument(metavar="NOTE", help=doc(EvidenceParams, "target"))] = None,
    vault: VaultOpt = None,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Do not hash raw copies (drift then shows only missing or resized ones).")
    ] = False,
    limit: Annotated[int, typer.Option(min=1, max=sources.MAX_LISTED, help=doc(EvidenceParams, "limit"))] = 200,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """A page's claims with their support and contradictions; without NOTE, unsupported accepted claims and drifted sources."""
    with session() as c:
        params = EvidenceParams(vault=pick_vault(c, vault), target=target, verify=not no_verify, limit=limit, fresh=fresh)
        result = call(sources.EVIDENCE, params, client=c)

    def text(r: EvidenceResult) -> str:
        lines: list[str] = []
        for v in r.claims:
            lines += _claim_lines(v)
        for s in r.drifted:
            lines.append(f"DRIFT            {s.path}: its raw copy {s.raw or '-'} is {s.drift} since capture")
        what = f"{r.page}: {len(r.claims)} claim(s)" if r.page else f"{len(r.claims)} accepted claim(s) without the support they need"
        lines.append(f"{what}, {len(r.drifted)} drifted source(s); {r.claims_checked} claim(s), {r.sources_checked} source(s) checked")
        return "\n".join(lines)

    emit(result, as_json, text)
    if target is None and (result.claims or result.drifted):
        raise typer.Exit(int(ExitStatus.REFUSED))


@claim_app.command("add")
@write_command(sources.CLAIM_ADD)
def claim_add(
    page: Annotated[str, typer.Argument(metavar="PAGE", help=doc(ClaimAddParams, "page"))],
    claim: Annotated[str, typer.Argument(metavar="CLAIM", help=doc(ClaimAddParams, "claim"))],
    support: Annotated[list[str] | None, typer.Option("--support", help=doc(ClaimAddParams, "support") + " Repeatable.")] = None,
    contradicts: Annotated[
        list[str] | None, typer.Option("--contradicted-by", help=doc(ClaimAddParams, "contradictions") + " Repeatable.")
    ] = None,
    state: Annotated[ClaimState, typer.Option(help=doc(ClaimAddParams, "state"))] = ClaimState.PROPOSED,
    confidence: Annotated[Confidence | None, typer.Option(help=doc(ClaimAddParams, "confidence"))] = None,
    risk: Annotated[Risk, typer.Option(help=doc(ClaimAddParams, "risk"))] = Risk.LOW,
    assessment: Annotated[str | None, typer.Option(help=doc(ClaimAddParams, "assessment"))] = None,
    path: Annotated[str | None, typer.Option(help=doc(ClaimAddParams, "path"))] = None,
    *,
    flags: WriteFlags[ClaimAddParams],
) -> None:
    """Record a claim about PAGE (an accepted claim needs current support)."""
    flags.run(
        lambda steering: ClaimAddParams(
            page=page,
            claim=claim,
            support=list(support or []),
            contradictions=list(contradicts or []),
            state=state,
            confidence=confidence,
            risk=risk,
            assessment=assessment,
            path=path,
            **steering,
        )
    )


@claim_app.command("update")
@write_command(sources.CLAIM_UPDATE)
def claim_update(
    target: Annotated[str, typer.Argument(metavar="CLAIM_NOTE", help=doc(ClaimUpdateParams, "target"))],
    state: Annotated[ClaimState | None, typer.Option(help=doc(ClaimUpdateParams, "state"))] = None,
    confidence: Annotated[Confidence | None, typer.Option(help=doc(ClaimUpdateParams, "confidence"))] = None,
    risk: Annotated[Risk | None, typer.Option(help=doc(ClaimUpdateParams, "risk"))] = None,
    assessment: Annotated[str | None, typer.Option(help=doc(ClaimUpdateParams, "assessment"))] = None,
    support: Annotated[list[str] | None, typer.Option("--support", help=doc(ClaimUpdateParams, "add_support") + " Repeatable.")] = None,
    drop: Annotated[
        list[str] | None, typer.Option("--drop-support", help=doc(ClaimUpdateParams, "remove_support") + " Repeatable.")
    ] = None,
    contradicts: Annotated[
        list[str] | None, typer.Option("--contradicted-by", help=doc(ClaimUpdateParams, "add_contradictions") + " Repeatable.")
    ] = None,
    *,
    flags: WriteFlags[ClaimUpdateParams],
) -> None:
    """Change a claim's state, confidence, risk or assessment, or its support (contradictions are only added)."""
    flags.run(
        lambda steering: ClaimUpdateParams(
            target=target,
            state=state,
            confidence=confidence,
            risk=risk,
            assessment=assessment,
            add_support=list(support or []),
            remove_support=list(drop or []),
            add_contradictions=list(contradicts or []),
            **steering,
        )
    )


@claim_app.command("list")
def claim_list(
    vault: VaultOpt = None,
    page: Annotated[str | None, typer.Option(help=doc(ClaimListParams, "page"))] = None,
    state: Annotated[ClaimState | None, typer.Option(help=doc(ClaimListParams, "state"))] = None,
    limit: Annotated[int, typer.Option(min=1, max=sources.MAX_LISTED, help=doc(ClaimListParams, "limit"))] = 100,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Claims with their state, risk, verdict and the note they are about."""
    with session() as c:
        result = call(
            sources.CLAIM_LIST, ClaimListParams(vault=pick_vault(c, vault), page=page, state=state, limit=limit, fresh=fresh), client=c
        )

    def text(r: ClaimListResult) -> str:
        if not r.claims:
            return "no claims recorded"
        rows = [(v.path, v.state, v.risk, v.verdict, v.page or "-", v.claim) for v in r.claims]
        return render.compose(
            [render.table(["claim note", "state", "risk", "verdict", "page", "claim"], rows), f"{len(r.claims)} of {r.total}"]
        )

    emit(result, as_json, text)


def retrieve_passages(
    query: Annotated[str, typer.Argument(help=doc(RetrieveParams, "query"))],
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=retrieve.MAX_PASSAGES, help=doc(RetrieveParams, "limit"))] = 10,
    per_note: Annotated[int, typer.Option(min=1, max=retrieve.MAX_PASSAGES, help=doc(RetrieveParams, "per_note"))] = 3,
    folder: Annotated[str | None, typer.Option(help=doc(RetrieveParams, "folder"))] = None,
    no_rerank: Annotated[
        bool, typer.Option("--no-rerank", help="Keep BM25's order (skip the local model even when it is installed).")
    ] = False,
    no_meaning: Annotated[
        bool, typer.Option("--no-meaning", help="BM25 (and the rerank) alone, without the meaning model's ranking.")
    ] = False,
    explain: Annotated[bool, typer.Option("--explain", help=doc(RetrieveParams, "explain"))] = False,
    max_bytes: Annotated[
        int,
        typer.Option("--max-bytes", min=MIN_ANSWER_BYTES, max=MAX_ANSWER_BYTES, help=doc(RetrieveParams, "max_bytes")),
    ] = DEFAULT_ANSWER_BYTES,
    cursor: Annotated[str | None, typer.Option(help=doc(RetrieveParams, "cursor"))] = None,
    fresh: FreshOpt = False,
    include_excluded: Annotated[bool, typer.Option("--include-excluded", help=doc(RetrieveParams, "include_excluded"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Passages that answer QUERY, each with its note, heading path, lines and a citation; ranked by
    meaning too once the meaning model covers them (--explain shows each passage's parts)."""
    with session() as c:
        params = RetrieveParams(
            query=query,
            vault=pick_vault(c, vault),
            limit=limit,
            per_note=per_note,
            folder=folder,
            rerank=not no_rerank,
            meaning=not no_meaning,
            explain=explain,
            max_bytes=max_bytes,
            cursor=cursor,
            fresh=fresh,
            include_excluded=include_excluded,
        )
        result = call(retrieve.RETRIEVE, params, client=c)

    def text(r: RetrieveResult) -> str:
        if not r.passages:
            return f"no passage matches {query!r}"
        lines = []
        for p in r.passages:
            lines.append(f"{p.score:.3f}  {p.citation}  (lines {p.line_start}-{p.line_end})")
            if p.parts is not None:
                x = p.parts
                lines.append(f"    [bm25 #{x.bm25_rank} {x.bm25}  meaning #{x.meaning_rank} cosine {x.cosine}  fused {x.fused}]")
            lines += [f"    {ln}" for ln in p.text.splitlines()[:6]]
        lines.append(f"ranked by {r.ranking}" + (f"; {r.note}" if r.note else ""))
        if r.meaning is not None:
            lines.append(f"meaning covers {r.meaning.covered} of {r.meaning.total} passages")
        if r.left_out:
            lines.append(f"{r.left_out} more passage(s) left out to fit; continue with --cursor {r.cursor}")
        return "\n".join(lines)

    emit(result, as_json, text)
