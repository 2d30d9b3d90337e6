"""vault.stats: counts, sizes, recent activity, log events by type and the note-to-source ratio.

A read: no file or log is written and no lock taken; the log is read with the bounded log
reader, and the vault's operation log is never counted as a note.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter
from typing import TYPE_CHECKING

import anyio

from protocol.methods import reads
from protocol.methods.reads import StatsParams, StatsResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of
from vaultd.vault import oplog, stats
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from vaultd.vault.model import NoteRecord

MAX_LOG_LINES = 1_000_000  #: the log reader's own byte bound comes first (oplog.MAX_READ_BYTES)


@handles(reads.STATS)
async def vault_stats(ctx: CallContext, params: StatsParams) -> StatsResult:
    runtime = ctx.host.vault(params.vault)
    live, view = await live_view(ctx, params.vault, params.fresh)
    index = live.index
    log_path = log_path_of(ctx, params.vault)
    notes = {p: r for p, r in index.notes.items() if view.visible(p) and p != log_path}
    by_type: Counter[str] = Counter()
    by_domain: Counter[str] = Counter()
    by_status: Counter[str] = Counter()
    by_folder: Counter[str] = Counter()
    linked: set[str] = set()
    n_links = dead = ambiguous = words = size = issues = 0
    for path, record in notes.items():
        by_type[stats.scalar(record, "type") or stats.NONE] += 1
        by_domain[stats.scalar(record, "domain") or stats.NONE] += 1
        by_status[stats.scalar(record, "status") or stats.NONE] += 1
        by_folder[path.rpartition("/")[0] or "."] += 1
        words += record.words
        size += record.size
        issues += len(record.issues)
        for link in record.links:
            if not link.target:
                continue
            n_links += 1
            res = view.resolution(index.resolve(link, path))
            if res.status == ResolutionStatus.MISSING:
                dead += 1
            elif res.status == ResolutionStatus.AMBIGUOUS:
                ambiguous += 1
            elif res.path is not None and res.path != path:
                linked.add(res.path)
                linked.add(path)
    skipped = len([p for p in view.only_visible(index.skipped) if p != log_path])

    def size_of(reference: str, source_path: str) -> int | None:
        """A cited vault file's bytes: a source note's captured size when it records one."""
        res = index.resolver.resolve(reference, source_path)
        if res.status != ResolutionStatus.RESOLVED or res.path is None or not view.visible(res.path) or res.path == log_path:
            return None
        if (record := index.notes.get(res.path)) is not None:
            return _captured_size(record)
        found = index.attachments.get(res.path)
        return found.size if found is not None else None

    today = dt.date.today()
    if view.hidden(log_path):
        lines: list[str] | None = []
        warnings: list[str] = []
    else:
        hide = view.names_hidden if view.hides_anything else None
        try:
            lines, warnings = await anyio.to_thread.run_sync(
                functools.partial(oplog.tail, runtime.root, MAX_LOG_LINES, None, log_path, hide=hide)
            )
        except OSError as exc:
            lines, warnings = None, [f"{log_path} cannot be read: {exc.strerror}"]
    return StatsResult(
        vault=runtime.entry.id,
        notes=len(notes),
        attachments=len(view.only_visible(index.attachments)),
        bytes=size,
        words=words,
        links=n_links,
        dead_links=dead,
        ambiguous_links=ambiguous,
        orphans=sum(1 for p in notes if p not in linked),
        by_type=dict(by_type.most_common()),
        by_domain=dict(by_domain.most_common()),
        by_folder=dict(sorted(by_folder.items())),
        issues=issues + skipped,
        skipped=skipped,
        by_status=dict(by_status.most_common()),
        recent=stats.recent(notes.values(), today),
        log=stats.log_counts(lines, warnings, today, params.days),
        size=stats.sizes(notes.values()),
        ratio=stats.source_ratio(notes, size_of),
    )


def _captured_size(record: NoteRecord) -> int:
    """A source note stands for its raw copy: the ``size`` capture recorded, else the note's own."""
    data = record.frontmatter or {}
    value = data.get("size")
    if data.get("ledger") == "source" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return record.size
