"""Handlers of the sources and evidence methods: the ledgers and the evidence view, read from the
in-memory index. Capture and claims are operations (:mod:`vaultd.ops.sources.operations`), answered
by the handlers the catalogue makes."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, TypeVar

import anyio

from protocol.methods import sources
from protocol.methods.sources import (
    ClaimListParams,
    ClaimListResult,
    DriftState,
    EvidenceParams,
    EvidenceResult,
    SourceListParams,
    SourceListResult,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.ops.sources.rawfiles import raw_hasher
from vaultd.sources.evidence import Ledgers, accepted_claims, drift_findings, unsupported_claims
from vaultd.vault.lookup import find_note

if TYPE_CHECKING:
    from collections.abc import Callable


R = TypeVar("R")


async def _with_ledgers(ctx: CallContext, vault: str | None, fresh: bool, verify: bool, answer: Callable[[Ledgers], R]) -> R:
    """``answer`` over the vault's ledgers, in a worker thread, with the index held still (the
    watcher's refreshes change it on the event loop meanwhile otherwise)."""
    live, view = await live_view(ctx, vault, fresh)
    root = ctx.host.vault(vault).root
    today = dt.datetime.now().astimezone().date()

    def run() -> R:
        return answer(Ledgers(live.index, today, raw_hasher(root) if verify else None, view.visible))

    async with live.held_still():
        return await anyio.to_thread.run_sync(run)


def _page(book: Ledgers, target: str) -> str:
    return find_note(book.index, target, lambda p: not book.visible(p))


@handles(sources.SOURCE_LIST)
async def source_list(ctx: CallContext, params: SourceListParams) -> SourceListResult:
    def answer(book: Ledgers) -> SourceListResult:
        chosen = [
            s
            for _, s in sorted(book.sources.items())
            if (params.kind is None or s.kind == params.kind.value) and (params.state is None or s.state == params.state.value)
        ]
        return SourceListResult(sources=[book.source_view(s, verify=params.verify) for s in chosen[: params.limit]], total=len(chosen))

    return await _with_ledgers(ctx, params.vault, params.fresh, params.verify, answer)


@handles(sources.CLAIM_LIST)
async def claim_list(ctx: CallContext, params: ClaimListParams) -> ClaimListResult:
    def answer(book: Ledgers) -> ClaimListResult:
        chosen = (
            book.claims_about(_page(book, params.page)) if params.page is not None else sorted(book.claims.values(), key=lambda c: c.path)
        )
        if params.state is not None:
            chosen = [c for c in chosen if c.state == params.state.value]
        return ClaimListResult(claims=[book.claim_view(c, verify=False) for c in chosen[: params.limit]], total=len(chosen))

    return await _with_ledgers(ctx, params.vault, params.fresh, False, answer)


@handles(sources.EVIDENCE)
async def evidence(ctx: CallContext, params: EvidenceParams) -> EvidenceResult:

    def page_view(book: Ledgers) -> EvidenceResult:
        assert params.target is not None
        page = _page(book, params.target)
        claims = book.claims_about(page)[: params.limit]
        views = [book.claim_view(c, verify=params.verify) for c in claims]
        cited = {c.path for v in views for c in (*v.support, *v.contradictions) if c.path}
        involved = [book.sources[p] for p in sorted(cited | ({page} & book.sources.keys())) if p in book.sources]
        drifted = [
            v for v in (book.source_view(s, verify=params.verify) for s in involved) if v.drift in (DriftState.CHANGED, DriftState.MISSING)
        ]
        return EvidenceResult(page=page, claims=views, drifted=drifted, sources_checked=len(involved), claims_checked=len(claims))

    def vault_view(book: Ledgers) -> EvidenceResult:
        accepted = accepted_claims(book)
        weak = unsupported_claims(book, accepted, verify=params.verify)[: params.limit]
        drifted = drift_findings(book, verify=params.verify)[: params.limit]
        return EvidenceResult(page=None, claims=weak, drifted=drifted, sources_checked=len(book.sources), claims_checked=len(accepted))

    return await _with_ledgers(ctx, params.vault, params.fresh, params.verify, page_view if params.target is not None else vault_view)
