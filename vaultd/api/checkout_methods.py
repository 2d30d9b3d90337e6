"""Handlers of the checkout methods: make, list, show, return and cancel.

A checkout changes no note: make copies notes out of the vault, return turns the copies into one
proposal (:mod:`vaultd.ops.checkout_merge`), cancel drops them. Each holds the vault's writer
lock while it changes a checkout's record, so a return and a cancel of one checkout, or two
makes counted against the bound, never interleave.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.limits import MAX_NOTE_BYTES
from protocol.methods import checkouts
from protocol.methods.checkouts import (
    MAX_CHECKOUT_BYTES,
    MAX_OPEN_CHECKOUTS,
    CheckoutInfo,
    CheckoutListParams,
    CheckoutListResult,
    CheckoutMakeParams,
    CheckoutMergeParams,
    CheckoutRef,
    CheckoutReturnParams,
    CheckoutReturnResult,
    CheckoutState,
    CheckoutSummary,
)
from protocol.methods.common import Channel
from vaultd.api.handlers import CallContext, handles
from vaultd.checkout import store as checkout_store
from vaultd.checkout.candidates import candidates
from vaultd.checkout.store import Copy, Record, info_of, store_for, summary_of
from vaultd.editions.volume import in_volumes
from vaultd.errors import Conflict, InvalidParams, LimitExceeded, NotFound, PolicyRefused, VaultError
from vaultd.fsio import ReadRefused, read_regular
from vaultd.ops import created_event, planning, refuse_volume_writes
from vaultd.ops.checkout_merge import propose_return
from vaultd.policy.visibility import Visibility
from vaultd.vault import oplog
from vaultd.vault.lookup import find_note

if TYPE_CHECKING:
    from vaultd.runtime import VaultRuntime
    from vaultd.vault.index import VaultIndex


def _visible_record(ctx: CallContext, runtime: VaultRuntime, record: Record) -> None:
    """A checkout holding a note private to the caller's channel is not one it may know of.

    Raises:
        NotFound: NOT_FOUND, it holds such a note.
    """
    view = Visibility.of(runtime.entry, ctx.channel)
    if any(view.hidden(c.path) for c in record.copies):
        raise NotFound(f"no checkout {record.id} in vault {runtime.entry.id!r}")


def _own(ctx: CallContext, record: Record) -> None:
    """An agent returns or cancels only a checkout its own session made: a person's (edited in
    their editor) or another session's is not its to drop, nor to propose as its own.

    Raises:
        PolicyRefused: POLICY, an agent reached for another's checkout.
    """
    if ctx.channel == Channel.MCP and (not record.agent or record.session != ctx.session):
        raise PolicyRefused(f"checkout {record.id} is not your session's; an agent returns or cancels only its own (your user can)")


def _chosen(ctx: CallContext, runtime: VaultRuntime, index: VaultIndex, params: CheckoutMakeParams) -> list[tuple[str, str | None]]:
    """The notes to copy, each with how it was reached: the ones named, then the search's candidates."""
    view = Visibility.of(runtime.entry, ctx.channel)
    log_path = oplog.log_name(runtime.entry)
    chosen: dict[str, str | None] = {}
    agent = ctx.channel == Channel.MCP
    for target in params.notes:
        chosen.setdefault(find_note(index, target, view.hidden), None)
    if agent:
        refuse_volume_writes(runtime.entry, list(chosen))  # an agent never edits a volume's entries
    if params.query is not None and len(chosen) < params.limit:

        def shown(path: str) -> bool:
            return (
                path in index.notes and path != log_path and view.visible(path) and not (agent and in_volumes(runtime.entry.volumes, path))
            )

        for path, reached in candidates(index, params.query, params.limit, shown):
            if len(chosen) >= params.limit:
                break
            chosen.setdefault(path, reached)
    return list(chosen.items())


def _read_notes(runtime: VaultRuntime, chosen: list[tuple[str, str | None]]) -> list[Copy]:
    """Each chosen note's text, within the checkout's byte bound (worker thread).

    Raises:
        LimitExceeded: LIMIT, the notes are over the checkout's bytes.
        Conflict: CONFLICT, a note is gone since it was indexed, or is not UTF-8 text.
    """
    copies: list[Copy] = []
    total = 0
    for path, reached in chosen:
        try:
            data, _ = read_regular(runtime.root / path, MAX_NOTE_BYTES)
        except (FileNotFoundError, ReadRefused) as exc:
            raise Conflict(f"{path} cannot be read as a note now; search again") from exc
        total += len(data)
        if total > MAX_CHECKOUT_BYTES:
            raise LimitExceeded(f"the notes are over the checkout's {MAX_CHECKOUT_BYTES}-byte bound; check out fewer")
        try:
            copies.append(Copy(path=path, base=data.decode("utf-8"), reached=reached))
        except UnicodeDecodeError as exc:
            raise Conflict(f"{path} is not UTF-8 text; vaultd does not check it out") from exc
    return copies


@handles(checkouts.CHECKOUT_MAKE)
async def make(ctx: CallContext, params: CheckoutMakeParams) -> CheckoutInfo:
    """Copy the notes into a new scratch folder and keep their bytes as the checkout's base.

    Raises:
        InvalidParams: INVALID_PARAMS, neither notes nor a query finding any.
        PolicyRefused: POLICY (G05), an agent named a journal volume's entry; or a link stands in the
            scratch folder where the copies go (nothing is written through it).
        LimitExceeded: LIMIT, the vault has its bound of open checkouts, or the notes are over the bytes.
        NotFound: NOT_FOUND, a named note is not one the caller may see.
    """
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    store = store_for(runtime.root)
    async with runtime.writer:
        live = runtime.owned_live()
        await live.barrier()
        records = await anyio.to_thread.run_sync(store.records)
        open_now = sum(1 for r in records if r.state is CheckoutState.OPEN)
        if open_now >= MAX_OPEN_CHECKOUTS:
            raise LimitExceeded(
                f"vault {runtime.entry.id!r} has {open_now} open checkouts, the bound; return or cancel one first (checkout.list)"
            )
        async with live.held_still() as index:
            chosen = await anyio.to_thread.run_sync(_chosen, ctx, runtime, index, params)
        if not chosen:
            raise InvalidParams("nothing to check out: name notes, or give a query that finds some")
        copies = await anyio.to_thread.run_sync(_read_notes, runtime, chosen)
        now = time.time()
        checkout_id = checkout_store.new_id(now)
        record = Record(
            id=checkout_id,
            vault=runtime.entry.id,
            name=params.name or params.query or copies[0].path.rsplit("/", 1)[-1].removesuffix(".md"),
            state=CheckoutState.OPEN,
            created=now,
            folder=str(checkout_store.scratch_folder(ctx.host.home, runtime.entry.id, checkout_id)),
            copies=copies,
            agent=ctx.channel == Channel.MCP,
            session=ctx.session if ctx.channel == Channel.MCP else None,
        )
        try:
            await anyio.to_thread.run_sync(checkout_store.write_copies, record)
            await anyio.to_thread.run_sync(store.put, record)
        except BaseException:
            with anyio.CancelScope(shield=True):  # refused: no record, and no copies left behind
                await anyio.to_thread.run_sync(checkout_store.drop_copies, record)
            raise
    return info_of(record, edited=set())


@handles(checkouts.CHECKOUT_LIST)
async def list_checkouts(ctx: CallContext, params: CheckoutListParams) -> CheckoutListResult:
    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    view = Visibility.of(runtime.entry, ctx.channel)
    records = await anyio.to_thread.run_sync(store_for(runtime.root).records)
    seen = [r for r in records if not any(view.hidden(c.path) for c in r.copies)]
    shown = seen if params.all else [r for r in seen if r.state is CheckoutState.OPEN]
    return CheckoutListResult(checkouts=[summary_of(r) for r in shown], open=sum(1 for r in seen if r.state is CheckoutState.OPEN))


def _edited(record: Record) -> set[str]:
    """The copies of an open checkout that differ from their base now (unreadable ones count)."""
    edited = set()
    for c in record.copies:
        try:
            text = checkout_store.read_copy(record, c.path)
        except (VaultError, OSError):  # a copy vaultd cannot read back is worth a look
            edited.add(c.path)
            continue
        if text is not None and text != c.base:
            edited.add(c.path)
    return edited


@handles(checkouts.CHECKOUT_SHOW)
async def show(ctx: CallContext, params: CheckoutRef) -> CheckoutInfo:
    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    record = await anyio.to_thread.run_sync(store_for(runtime.root).get, params.id)
    _visible_record(ctx, runtime, record)
    if record.state is CheckoutState.OPEN:
        return info_of(record, edited=await anyio.to_thread.run_sync(_edited, record))
    return info_of(record)


def _open(record: Record) -> None:
    """Refuse a checkout that is no longer open.

    Raises:
        Conflict: CONFLICT, the checkout is returned or cancelled already.
    """
    if record.state is not CheckoutState.OPEN:
        raise Conflict(f"checkout {record.id} is {record.state}, not open; nothing was done")


def _frozen(record: Record) -> Record:
    """The record with each copy as the agent left it (worker thread). A deleted copy returns
    nothing: removing a copy does not delete its note.

    Raises:
        PolicyRefused: POLICY, a copy is not a regular UTF-8 file inside the checkout's folder.
        LimitExceeded: LIMIT, the copies are over the checkout's bytes.
    """
    copies = []
    total = 0
    for c in record.copies:
        text = checkout_store.read_copy(record, c.path)
        total += len(text.encode("utf-8")) if text is not None else 0
        if total > MAX_CHECKOUT_BYTES:
            raise LimitExceeded(f"the copies are over the checkout's {MAX_CHECKOUT_BYTES}-byte bound; nothing was returned")
        copies.append(msgspec.structs.replace(c, returned=text if text is not None and text != c.base else None))
    return msgspec.structs.replace(record, copies=copies, state=CheckoutState.RETURNED, decided=time.time())


@handles(checkouts.CHECKOUT_RETURN)
async def return_checkout(ctx: CallContext, params: CheckoutReturnParams) -> CheckoutReturnResult:
    """Freeze the copies and propose their merge with the notes as they are now, as one proposal a
    person applies (whoever returns it: a checkout never applies itself).

    Raises:
        Conflict: CONFLICT, the checkout is not open.
        PolicyRefused: POLICY, an agent asked to return a checkout its session did not make, a
            copy is not a regular file in its folder, or a note it writes is refused to the caller.
        ValidationFailed: VALIDATION, the merged notes would be invalid; the checkout stays open.
    """
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    store = store_for(runtime.root)
    async with runtime.writer:
        live = runtime.owned_live()
        await live.barrier()
        record = await anyio.to_thread.run_sync(store.get, params.id)
        _visible_record(ctx, runtime, record)
        _own(ctx, record)
        _open(record)
        frozen = await anyio.to_thread.run_sync(_frozen, record)
        await anyio.to_thread.run_sync(store.put, frozen)
        merge_params = CheckoutMergeParams(vault=runtime.entry.id, id=record.id, reason=params.reason)
        try:
            async with planning(runtime, ctx.channel) as op_ctx:
                outcome, proposal = await anyio.to_thread.run_sync(propose_return, op_ctx, merge_params, ctx)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(store.put, record)  # refused: the checkout stays open, its copies too
            raise
        if proposal is not None:
            frozen = msgspec.structs.replace(frozen, proposal=proposal.id)
            await anyio.to_thread.run_sync(store.put, frozen)
        await anyio.to_thread.run_sync(checkout_store.drop_copies, frozen)
    if proposal is not None:
        runtime.events.record(created_event(proposal))
    return CheckoutReturnResult(
        id=record.id,
        proposal=proposal.id if proposal is not None else None,
        returned=[c.path for c in outcome.changes],
        unchanged=outcome.unchanged,
        skipped=outcome.skipped,
        overlaps=outcome.overlaps,
    )


@handles(checkouts.CHECKOUT_CANCEL)
async def cancel(ctx: CallContext, params: CheckoutRef) -> CheckoutSummary:
    """Drop an open checkout and its copies; a cancelled one stays cancelled.

    Raises:
        Conflict: CONFLICT, the checkout is returned already.
        PolicyRefused: POLICY, an agent asked to cancel a checkout its session did not make.
    """
    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    store = store_for(runtime.root)
    async with runtime.writer:
        record = await anyio.to_thread.run_sync(store.get, params.id)
        _visible_record(ctx, runtime, record)
        _own(ctx, record)
        if record.state is CheckoutState.CANCELLED:
            return summary_of(record)
        _open(record)
        cancelled = msgspec.structs.replace(record, state=CheckoutState.CANCELLED, decided=time.time())
        await anyio.to_thread.run_sync(store.put, cancelled)
        await anyio.to_thread.run_sync(checkout_store.drop_copies, cancelled)
    return summary_of(cancelled)
