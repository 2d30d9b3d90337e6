"""An agent session's record written into the vault as a note, for a vault that opts in
(``session_notes``: the folder), when the session ends.

vaultd writes it on a person's channel through the write path (journaled, undoable, logged), as it
writes the generated views, and with their mark: a note a person has edited since is left alone
(reported by lint, L21, and in the receipt's ``edited``). What the note names passes the agents'
visibility, since agents read the folder like any other: a private note is left out, and so are
the description and prompts that name one. Agents may not write in the folder (P06).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import structlog

from protocol.methods.common import Channel
from protocol.methods.views import ViewRefreshDetail
from protocol.methods.writes import WriteParams
from vaultd.errors import ValidationFailed, VaultError
from vaultd.ops._runner import run_operation
from vaultd.ops.create import existing_twin
from vaultd.policy import disk_spelling
from vaultd.policy.visibility import Visibility
from vaultd.txn.plan import Change, Plan
from vaultd.views.render import is_ours, marked
from vaultd.views.session_note import SessionView, note_name, session_body

if TYPE_CHECKING:
    from collections.abc import Iterable

    from protocol.methods.sessions import SessionRecord
    from vaultd.ops._context import OpContext
    from vaultd.runtime import VaultRuntime

log = structlog.get_logger("vaultd.sessions")


def session_vaults(record: SessionRecord) -> set[str]:
    """The vaults the session read, wrote or worked in."""
    found = {n.vault for n in (*record.read, *record.touched)}
    found |= {o.vault for o in (*record.op_list, *record.proposal_list)}
    found |= {w.partition(":")[0] for w in record.work}
    return found


def note_path(folder: str, session: str) -> str:
    return f"{folder.strip('/')}/{note_name(session)}"


def _view(ctx: OpContext, record: SessionRecord, source: str) -> SessionView:
    vault = ctx.entry.id
    agents = Visibility.of(ctx.entry, Channel.MCP)

    def links(paths: Iterable[str]) -> list[str]:
        out = []
        for path in dict.fromkeys(paths):
            if agents.hidden(path) or path == source:
                continue
            out.append(ctx.link(path, source) if path in ctx.index.notes else f"`{path}`")
        return out

    def told(text: str) -> bool:
        return bool(text) and not agents.names_hidden_in(text, ctx.index)

    return SessionView(
        id=record.id,
        client=record.client,
        vault=vault,
        started=record.started,
        ended=record.ended,
        description=record.description if told(record.description) else "",
        read=links(n.path for n in record.read if n.vault == vault),
        wrote=links(n.path for n in record.touched if n.vault == vault),
        ops=[(o.id, o.op) for o in record.op_list if o.vault == vault],
        proposals=[(o.id, o.op) for o in record.proposal_list if o.vault == vault],
        work=[w.partition(":")[2] for w in record.work if w.partition(":")[0] == vault],
        prompts=[(p.at, p.text) for p in record.prompts if told(p.text)],
        dropped=record.dropped,
    )


def plan_session_note(ctx: OpContext, params: WriteParams, *, record: SessionRecord) -> Plan:
    """The session's note in the vault's session folder, unless a person has edited it.

    Raises:
        ValidationFailed: VALIDATION, the note's path is refused (a twin of a name the disk holds).
    """
    detail = ViewRefreshDetail()
    folder = ctx.entry.session_notes
    if folder is None:
        return Plan(op="session.note", changes=[], summary="no session notes in this vault", detail=detail)
    # Spelled as the disk spells the folder (a twin folder would be refused, and no note written).
    path, issues = disk_spelling(ctx.root, note_path(folder, record.id))
    if issues:
        raise ValidationFailed(f"refused: {issues[0].message}", issues=issues)
    current = ctx.read(path)
    twin = existing_twin(ctx, path) if current is None else None
    changes: list[Change] = []
    if (current is not None and not is_ours(current)) or (twin is not None and twin != path):
        detail.edited.append(path)
    else:
        wanted = marked(session_body(_view(ctx, record, path)))
        if wanted != current:
            changes.append(Change(path=path, before=current, after=wanted))
            detail.written.append(path)
    summary = f"session {record.id}'s note: " + (", ".join(detail.written) or "unchanged")
    return Plan(op="session.note", changes=changes, summary=summary, log_type="EXTRACT", detail=detail)


def note_detail(ctx: OpContext, plan: Plan) -> ViewRefreshDetail:
    detail: ViewRefreshDetail = plan.detail
    return detail


@dataclass(frozen=True, slots=True)
class _One:
    runtime: VaultRuntime

    def vault(self, vault_id: str | None) -> VaultRuntime:
        return self.runtime


@dataclass(frozen=True, slots=True)
class _Writer:
    """Who writes the note: vaultd for the person who opted in (a person's channel, never gated;
    no session of its own, so the note is no entry of the record it shows)."""

    host: _One
    channel: Channel = Channel.CLI
    client: str = "vaultd-sessions"
    session: str | None = None


async def write_session_notes(runtimes: Iterable[VaultRuntime], record: SessionRecord) -> None:
    """Write ``record``'s note in each of ``runtimes`` that opts in and that the session used.
    A failure is logged; it never stops the daemon or another vault's note."""
    used = session_vaults(record)
    for runtime in runtimes:
        if runtime.entry.session_notes is None or runtime.entry.id not in used or not runtime.owned:
            continue
        planner = partial(plan_session_note, record=record)
        try:
            await run_operation(_Writer(host=_One(runtime)), WriteParams(vault=runtime.entry.id), planner, note_detail)
        except (VaultError, OSError) as exc:
            log.warning(
                "session note not written", vault=runtime.entry.id, session=record.id, error=getattr(exc, "message", None) or str(exc)
            )
