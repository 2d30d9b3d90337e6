"""edition.publish: a journal volume's entries gathered into a new edition note, by a person.

The edition is one new note in the editions folder (``<Volume name> <day>.md``, `` (2)`` for a
second one the same day), made of the volume's entries in path order. Publishing is a person's
act: an agent's call is refused (G05), whatever the vault's agent policy says, and so is a
proposal of it. A volume whose entries hash as its latest edition recorded is refused: an edition
holds something new, or is not made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import editions
from protocol.methods.common import Channel
from protocol.methods.editions import MAX_VOLUME_ENTRIES, EditionDetail
from vaultd.editions.volume import body_of, edition_path, edition_text, latest_edition, volume_hash, volume_name, volumes
from vaultd.errors import Conflict, LimitExceeded, NotFound, PolicyRefused
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from protocol.methods.editions import EditionPublishParams
    from vaultd.ops._context import OpContext

OP = editions.EDITION_PUBLISH.name


def refuse_agent(channel: Channel, what: str) -> None:
    """Refuse an agent: a journal volume's entries and editions are a person's.

    Raises:
        PolicyRefused: POLICY (G05), the caller is an agent.
    """
    if channel == Channel.MCP:
        message = f"refused: agents may not {what}; a journal volume's entries and editions are your user's"
        raise PolicyRefused(message, issues=[Issue(code=IssueCode.G05, message=message)])


def edition_detail(ctx: OpContext, plan: Plan) -> EditionDetail:
    change = plan.changes[0]
    data = frontmatter.parse((change.after or b"").decode("utf-8")).data or {}
    return EditionDetail(edition=change.path, entries=int(data.get("entries") or 0), volume_hash=str(data.get("volume_hash") or ""))


@operation(editions.EDITION_PUBLISH, detail=edition_detail)
def plan_publish(ctx: OpContext, params: EditionPublishParams) -> Plan:
    """The new edition of ``params.volume``.

    Raises:
        PolicyRefused: POLICY (G05), an agent asked.
        NotFound: NOT_FOUND, the vault keeps no volumes, or no such volume holds an entry.
        Conflict: CONFLICT, nothing changed since the volume's latest edition.
        LimitExceeded: LIMIT, the volume holds more entries than one edition gathers.
    """
    refuse_agent(ctx.channel, "publish an edition")
    settings = ctx.entry.volumes
    if settings is None:
        raise NotFound(f"vault {ctx.entry.id!r} keeps no journal volumes; a person sets them with 'vaultctl edition configure'")
    found = volumes(settings, ctx.index.notes)
    paths = found.get(params.volume)
    if not paths:
        raise NotFound(f"no journal volume {params.volume!r} with entries under {settings.folder}/; see 'vaultctl edition list'")
    if len(paths) > MAX_VOLUME_ENTRIES:
        raise LimitExceeded(f"volume {params.volume!r} holds {len(paths)} entries; an edition gathers at most {MAX_VOLUME_ENTRIES}")
    prefix = f"{settings.folder}/{params.volume}/"
    entries = [(p.removeprefix(prefix), body_of(ctx.read_text(p)[1])) for p in paths]
    digest = volume_hash(entries)
    latest = latest_edition(settings, params.volume, {p: r.frontmatter for p, r in ctx.index.notes.items()})
    if latest is not None and latest[1] == digest:
        raise Conflict(f"{params.volume} has no change since {latest[0]}; nothing was published")
    name = volume_name(params.volume)
    day = ctx.today
    path = edition_path(settings, name, day, lambda p: p in ctx.index.notes or ctx.read(p) is not None)
    text = edition_text(params.volume, name, day, ctx.now.isoformat(timespec="seconds"), entries, digest)
    return Plan(
        op=OP,
        changes=[Change(path=path, before=None, after=text.encode("utf-8"))],
        summary=f"published {name}'s edition of {day} ({len(entries)} entries)",
    )
