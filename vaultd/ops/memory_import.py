"""memory.import: one agent memory entry brought into the vault as a note, or recorded on one.

The new note carries the entry's text under its title, and its provenance in the frontmatter:
``imported_from`` (the entry's id) and ``imported_at`` (the day). A note already recording the
entry makes a rerun a refusal that names it, never a second note; a note whose name or title is
the entry's refuses the create too (V08) and is offered as ``link_to``, which records the entry on
that note instead. The memory files are only read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import memory
from protocol.methods.common import Channel
from protocol.methods.memory import IMPORTED_AT, IMPORTED_FROM
from vaultd.errors import InvalidParams, NotFound, PolicyRefused, ValidationFailed
from vaultd.memory_import.entries import Entry, default_files, files_at, read_entries
from vaultd.ops._canon import canon_issues
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.ops.create import note_path, refuse_existing, screen_new_path
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.note import stem_of

if TYPE_CHECKING:
    from protocol.methods.memory import MemoryImportParams
    from vaultd.memory_import.entries import Found
    from vaultd.ops._context import OpContext
    from vaultd.vault.index import VaultIndex

_UNSAFE = re.compile(r'[\x00-\x1f\x7f\\/:*?"<>|#^\[\]]+')
MAX_STEM = 100


def memory_entries(path: str | None, channel: Channel) -> Found:
    """The entries at ``path``, or in Claude Code's memory folders when none is named.

    Raises:
        PolicyRefused: POLICY, an agent named a path: it reads its own memory folders only.
        InvalidParams: INVALID_PARAMS, the path is relative.
        NotFound: NOT_FOUND, nothing is at the path.
    """
    if path is None:
        files, skipped = default_files()
    elif channel is Channel.MCP:
        raise PolicyRefused("an agent imports from Claude Code's memory folders only; a person names other files from the CLI")
    else:
        files, skipped = files_at(path)
    return read_entries(files, skipped)


def recorded(value: Any) -> list[str]:
    """The entry ids an ``imported_from`` value records (one, or a list)."""
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, str)]


def imported_ids(index: VaultIndex) -> dict[str, str]:
    """Each imported entry's id and the note that records it, from the index."""
    out: dict[str, str] = {}
    for path, note in index.notes.items():
        if note.frontmatter and IMPORTED_FROM in note.frontmatter:
            for entry in recorded(note.frontmatter[IMPORTED_FROM]):
                out.setdefault(entry, path)
    return out


def stem_for(title: str) -> str:
    """A file name for a title: the characters a note name may not hold dropped, at most 100."""
    stem = " ".join(_UNSAFE.sub(" ", title).split()).strip(". ")
    return stem[:MAX_STEM].rstrip(". ") or "Memory entry"


def _find_entry(found: Found, entry_id: str) -> Entry:
    """The entry with ``entry_id`` among those read now.

    Raises:
        NotFound: NOT_FOUND, no entry has the id.
    """
    for entry in found.entries:
        if entry.id == entry_id:
            return entry
    raise NotFound(f"no memory entry {entry_id} (it may have changed since listed); list them again with memory.candidates")


def _same_title(ctx: OpContext, title: str, stem: str) -> list[str]:
    wanted = {title.casefold(), stem.casefold()}
    hidden = ctx.visibility.hidden
    return sorted(
        p for p, n in ctx.index.notes.items() if (n.title.casefold() in wanted or stem_of(p).casefold() in wanted) and not hidden(p)
    )[:10]


@operation(memory.MEMORY_IMPORT, detail=no_detail)
def plan_memory_import(ctx: OpContext, params: MemoryImportParams) -> Plan:
    """A new note for the entry (or the entry recorded on ``link_to``), with its provenance.

    Raises:
        PolicyRefused: POLICY, an agent named a memory path, or the note is out of its sight.
        InvalidParams: INVALID_PARAMS, a bad path or folder.
        NotFound: NOT_FOUND, no such entry, or no such note to link to.
        Conflict: CONFLICT, the note to link to changed since it was read.
        ValidationFailed: VALIDATION (V08), the entry is imported already, or a note has its name
            or title (link to it instead).
    """
    found = memory_entries(params.path, ctx.channel)
    entry = _find_entry(found, params.entry)
    done = imported_ids(ctx.index)
    if entry.id in done:
        seen = done[entry.id] if ctx.visibility.visible(done[entry.id]) else None
        raise ValidationFailed(
            f"refused: memory entry {entry.id} is already imported, in {seen or 'a note you may not see'}",
            issues=[Issue(code=IssueCode.V08, message="the memory entry is imported already", path=seen)],
        )
    provenance = {IMPORTED_FROM: entry.id, IMPORTED_AT: ctx.today}
    if params.link_to is not None:
        path = ctx.find(params.link_to)
        raw, text = ctx.read_target(path)
        current = recorded((frontmatter.parse(text).data or {}).get(IMPORTED_FROM))
        after = emit(text, {IMPORTED_FROM: [*current, entry.id], IMPORTED_AT: ctx.today})
        return Plan(
            op=memory.MEMORY_IMPORT.name,
            changes=[Change(path=path, before=raw, after=after.encode("utf-8"))],
            summary=f"recorded memory entry {entry.id} on {path}",
            log_type="LEARN",
        )
    title = params.title or entry.title
    folder = params.folder.strip("/")
    if "\x00" in folder:
        raise InvalidParams("the folder holds a NUL byte")
    stem = stem_for(title)
    path = screen_new_path(ctx, note_path(f"{folder}/{stem}" if folder else stem))
    refuse_existing(ctx, path, "note", f"pass link_to={path} to record the entry on it")
    if same := _same_title(ctx, title, stem):
        raise ValidationFailed(
            f"refused: {same[0]} has this title already; pass link_to with one of the listed notes to record the entry on it",
            issues=[Issue(code=IssueCode.V08, message="a note has this title; link_to it instead", path=p) for p in same],
        )
    fields: dict[str, Any] = {"title": title, "created": ctx.today, **provenance}
    if ctx.entry.stamp_keys:
        fields.setdefault(ctx.entry.stamp_keys[0], ctx.today)
    text = emit(f"# {title}\n\n{entry.text.rstrip()}\n", fields)
    return Plan(
        op=memory.MEMORY_IMPORT.name,
        changes=[Change(path=path, before=None, after=text.encode("utf-8"))],
        summary=f"imported memory entry {entry.id} as {path}",
        warnings=canon_issues(ctx, f"{title}\n{entry.text}"),
        log_type="LEARN",
    )
