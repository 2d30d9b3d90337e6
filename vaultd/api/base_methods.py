"""Handlers of base.query and base.list: Obsidian Bases evaluated over the live index.

The Base's text is read and parsed off the event loop; the view is evaluated in a worker thread
over a copy of the index taken on the event loop (so a long evaluation never holds up the
watcher or a write), over the files this caller may see (a private note is not a row, not a
link target, not a backlink). Evaluation is bounded by its step and time budget, so a hostile
Base costs at most that budget.
"""

from __future__ import annotations

import csv
import io
import os
from typing import TYPE_CHECKING

import anyio

from protocol.limits import MAX_NOTE_BYTES
from protocol.methods import bases
from protocol.methods.bases import (
    BaseColumn,
    BaseGroup,
    BaseInfo,
    BaseListParams,
    BaseListResult,
    BaseQueryParams,
    BaseQueryResult,
    BaseRow,
    BaseViewInfo,
    RowFormat,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of
from vaultd.errors import InvalidParams, LimitExceeded, NotFound
from vaultd.fsio import ReadRefused, Refusal, read_regular
from vaultd.memory import collector_paused
from vaultd.obsidian.bases import Base, BaseFailed, BaseInvalid, QueryResult, Universe, base_blocks, read_base, run_view
from vaultd.obsidian.bases.values import display, to_json
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vaultd.obsidian.bases.query import Row
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import IndexCopy
    from vaultd.vault.model import NoteRecord

MAX_LISTED_BASES = 1000  #: .base files base.list reads


def _read_text(root: Path, path: str) -> str:
    """The file's text, read within the note size bound (a .base is YAML a person wrote).

    Raises:
        NotFound: NOT_FOUND, the file is gone or not a regular file.
        LimitExceeded: LIMIT, it is over the note size bound.
        InvalidParams: INVALID_PARAMS, it is not UTF-8.
    """
    try:
        raw, _ = read_regular(os.path.join(root, path), MAX_NOTE_BYTES)
    except FileNotFoundError:
        raise NotFound(f"{path} does not exist") from None
    except ReadRefused as exc:
        if exc.refusal is Refusal.TOO_BIG:
            raise LimitExceeded(f"{path} is over {MAX_NOTE_BYTES} bytes") from None
        raise NotFound(f"{path} is not a regular file") from None
    except OSError as exc:
        raise NotFound(f"{path} cannot be read: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParams(f"{path} is not valid UTF-8") from None


def _source(root: Path, index: IndexCopy, view: Visibility, params: BaseQueryParams) -> tuple[str, str | None]:
    """The Base's YAML and the file ``this`` names.

    Raises:
        InvalidParams: INVALID_PARAMS, neither or both of path and yaml, a block of a .base, no such block.
        NotFound: NOT_FOUND, no such file the caller may see.
    """
    if (params.path is None) == (params.yaml is None):
        raise InvalidParams("give a Base as path or as yaml, one of the two")
    if params.yaml is not None:
        if params.block is not None:
            raise InvalidParams("block is for a note's path, not for inline yaml")
        return params.yaml, None
    path = params.path.strip("/") if params.path is not None else ""
    known = path in index.notes or path in index.attachments
    if not known or view.hidden(path):
        raise NotFound(f"no file {path} in the vault")
    text = _read_text(root, path)
    if path.lower().endswith(".base"):
        if params.block is not None:
            raise InvalidParams("block is for a note holding ```base blocks, not for a .base file")
        return text, path
    blocks = base_blocks(text)
    number = params.block or 1
    if number > len(blocks):
        raise InvalidParams(f"{path} holds {len(blocks)} ```base block{'s' if len(blocks) != 1 else ''}, not {number}")
    return blocks[number - 1], path


def _universe(root: Path, index: IndexCopy, view: Visibility, leave_out: str) -> tuple[Universe, list[str]]:
    notes: Mapping[str, NoteRecord]
    if view.hides_anything:
        notes = {p: r for p, r in index.notes.items() if not view.hidden(p)}
        files = {p: s for p, s in index.attachments.items() if not view.hidden(p)}
    else:  # the copy's own maps: nothing to leave out
        notes, files = index.notes, index.attachments

    def resolve(target: str, source: str) -> str | None:
        found = index.resolver.resolve(target, source)
        if found.status is not ResolutionStatus.RESOLVED or found.path is None:
            return None
        return found.path if found.path in notes or found.path in files else None

    linking: dict[str, list[str]] | None = None

    def backlinks(path: str) -> list[str]:
        """The notes linking to ``path``, from every link resolved once, when a Base first asks."""
        nonlocal linking
        if linking is None:
            linking = {}
            for source in sorted(notes):
                for link in notes[source].links:
                    target = resolve(link.target, source) if link.target else None
                    if target is not None:
                        sources = linking.setdefault(target, [])
                        if not sources or sources[-1] != source:
                            sources.append(source)
        return linking.get(path, [])

    def ctime(path: str) -> float | None:
        try:
            return os.stat(os.path.join(root, path), follow_symlinks=False).st_ctime
        except OSError:
            return None

    paths = sorted([*notes, *files])
    if leave_out in notes:  # vaultd's own log is no row of the user's Bases
        paths.remove(leave_out)
    return Universe(notes=notes, files=files, resolve=resolve, backlinks=backlinks, ctime=ctime), paths


def _offset(cursor: str | None) -> int:
    """The first row of the page a cursor names.

    Raises:
        InvalidParams: INVALID_PARAMS, the cursor is not one base.query returned.
    """
    if cursor is None:
        return 0
    head, _colon, number = cursor.partition(":")
    if head != "row" or not number.isdigit() or len(number) > 9:
        raise InvalidParams("the cursor is not one base.query returned")
    return int(number)


def _answer(params: BaseQueryParams, base: Base, source: str | None, result: QueryResult) -> BaseQueryResult:
    view = base.view(params.view)
    start = _offset(params.cursor)
    page = result.rows[start : start + params.limit]
    end = start + len(page)
    return BaseQueryResult(
        base=source,
        view=view.name,
        type=view.type,
        columns=[BaseColumn(id=prop, name=name) for prop, name in result.columns],
        rows=[
            BaseRow(path=r.path, values={k: to_json(v) for k, v in r.values.items()}, group=to_json(r.group) if result.grouped else None)
            for r in page
        ],
        total=result.total,
        returned=len(result.rows),
        groups=[BaseGroup(key=to_json(k), rows=n, summaries={p: to_json(v) for p, v in s.items()}) for k, n, s in result.groups]
        if result.grouped
        else None,
        summaries={p: to_json(v) for p, v in result.summaries.items()},
        text=None if params.format is RowFormat.JSON else render(result, page, params.format.value),
        next_cursor=f"row:{end}" if end < len(result.rows) else None,
    )


# -- a page as text: one column per property in the view's order (headed by its display name),
# after the file's path, and the group when the view is grouped; cells as Obsidian shows them.


def _table(result: QueryResult, rows: list[Row]) -> tuple[list[str], list[list[str]]]:
    head = ["path"] + (["group"] if result.grouped else []) + [name for _prop, name in result.columns]
    body = [
        [row.path] + ([display(row.group)] if result.grouped else []) + [display(row.values.get(prop)) for prop, _name in result.columns]
        for row in rows
    ]
    return head, body


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def render(result: QueryResult, rows: list[Row], form: str) -> str:
    """``rows`` (a page of ``result``) as ``csv``, ``tsv`` or ``md``."""
    head, body = _table(result, rows)
    if form == "md":
        lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(_md_cell(c) for c in cells) + " |" for cells in body]
        return "\n".join(lines) + "\n"
    out = io.StringIO()
    if form == "tsv":
        for cells in [head, *body]:
            out.write("\t".join(c.replace("\t", " ").replace("\r", " ").replace("\n", " ") for c in cells) + "\n")
        return out.getvalue()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([head, *body])
    return out.getvalue()


@handles(bases.QUERY)
async def query(ctx: CallContext, params: BaseQueryParams) -> BaseQueryResult:
    """One view of a Base over what the caller may see.

    Raises:
        InvalidParams: INVALID_PARAMS, the Base cannot be evaluated as written (where and why).
        LimitExceeded: LIMIT, the evaluation passed its step or time budget.
        NotFound: NOT_FOUND, no such file the caller may see.
    """
    live, view = await live_view(ctx, params.vault, params.fresh)
    root = live.root
    leave_out = log_path_of(ctx, params.vault)
    _offset(params.cursor)
    copy = live.index.copy()  # one state of the index, taken on the event loop, for the worker threads

    def parse() -> tuple[Base, str | None]:
        """The Base and the file ``this`` names, read off the event loop.

        Raises:
            InvalidParams: INVALID_PARAMS, the Base cannot be read as written.
        """
        text, this = _source(root, copy, view, params)
        try:
            return read_base(text), this
        except BaseInvalid as exc:
            raise InvalidParams(str(exc)) from None

    base, this = await anyio.to_thread.run_sync(parse)

    def evaluate() -> BaseQueryResult:
        """The view's rows, in a worker thread, over the copy.

        Raises:
            InvalidParams: INVALID_PARAMS, an expression cannot be evaluated as written.
            LimitExceeded: LIMIT, the step or time budget ran out.
        """
        with collector_paused():
            universe, paths = _universe(root, copy, view, leave_out)
            try:
                result = run_view(base, params.view, universe, this=this, paths=paths)
            except BaseInvalid as exc:
                raise InvalidParams(str(exc)) from None
            except BaseFailed as exc:
                if exc.limit:
                    raise LimitExceeded(str(exc)) from None
                raise InvalidParams(str(exc)) from None
            return _answer(params, base, this, result)

    return await anyio.to_thread.run_sync(evaluate)


@handles(bases.LIST)
async def list_bases(ctx: CallContext, params: BaseListParams) -> BaseListResult:
    live, view = await live_view(ctx, params.vault, params.fresh)
    paths = sorted(p for p in live.index.attachments if p.lower().endswith(".base") and view.visible(p))[:MAX_LISTED_BASES]
    root = live.root

    def read_all() -> BaseListResult:
        found: list[BaseInfo] = []
        for path in paths:
            try:
                base = read_base(_read_text(root, path))
            except (BaseInvalid, NotFound, LimitExceeded, InvalidParams) as exc:
                found.append(BaseInfo(path=path, views=[], error=str(exc)))
                continue
            found.append(BaseInfo(path=path, views=[BaseViewInfo(name=v.name, type=v.type) for v in base.views]))
        return BaseListResult(bases=found)

    return await anyio.to_thread.run_sync(read_all)
