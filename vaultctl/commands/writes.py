"""new, patch, append, set, link, supersede, move, delete, merge, undo, ops: writes print their
receipt (or preview, through :mod:`vaultctl.commands.receipts`) and exit 1 when refused; --json
prints the receipt itself. The log commands are in log_cmd.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from protocol.methods.writes import (
    AppendParams,
    CreateParams,
    DeleteParams,
    Edit,
    LinkParams,
    MergeParams,
    MoveParams,
    OpListParams,
    OpSummary,
    PatchParams,
    Relation,
    SetFrontmatterParams,
    SupersedeParams,
    UndoParams,
)
from protocol.schema import field_help as doc
from vaultctl import assignments, render
from vaultctl.client import CallError
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, refuse, session
from vaultctl.commands.receipts import exit_if_not_logged, json_arg, receipt_text
from vaultctl.commands.write_command import WriteFlags, write_command
from vaultctl.completion import Complete

SET_HELP = (
    ' Repeatable: key=value sets a string, key:=JSON any JSON value (key:=3, key:=\'["a","b"]\'); a JSON object sets each of its keys.'
)


def _assignments(values: list[str] | None) -> dict[str, Any]:
    try:
        return assignments.parse(values or [])
    except assignments.BadAssignment as exc:
        fail(str(exc), ExitStatus.USAGE)


def _read_source(value: str | None) -> str | None:
    if value is None:
        return None
    if value == "-":
        return sys.stdin.read()
    try:
        return Path(value).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {value}: {exc}", ExitStatus.USAGE)


@write_command(writes.CREATE)
def new(
    path: Annotated[str, typer.Argument(help=doc(CreateParams, "path"))],
    title: Annotated[str | None, typer.Option(help=doc(CreateParams, "title"))] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help=doc(CreateParams, "frontmatter") + SET_HELP)] = None,
    body: Annotated[
        str | None, typer.Option(help="A file to read the body from, or - for stdin. " + doc(CreateParams, "body")), Complete.FILE
    ] = None,
    template: Annotated[str | None, typer.Option(metavar="TEMPLATE", help=doc(CreateParams, "template"))] = None,
    unique: Annotated[bool, typer.Option("--unique", help=doc(CreateParams, "unique"))] = False,
    *,
    flags: WriteFlags[CreateParams],
) -> None:
    """Create a note; refuses an existing path or a name that collides by case or normalization."""
    fields = _assignments(set_)
    text = _read_source(body)
    flags.run(
        lambda steering: CreateParams(path=path, title=title, frontmatter=fields, body=text, template=template, unique=unique, **steering)
    )


@write_command(writes.PATCH)
def patch(
    target: Annotated[str, typer.Argument(help=doc(PatchParams, "target")), Complete.NOTE],
    old: Annotated[str | None, typer.Option(help=doc(PatchParams, "old"))] = None,
    new_: Annotated[str | None, typer.Option("--new", help=doc(PatchParams, "new"))] = None,
    edits: Annotated[
        str | None, typer.Option(help=doc(PatchParams, "edits") + ' A JSON file (or -) of [{"old": ..., "new": ...}].'), Complete.FILE
    ] = None,
    rewrite_anchors: Annotated[bool, typer.Option("--rewrite-anchors", help=doc(PatchParams, "rewrite_anchors"))] = False,
    *,
    flags: WriteFlags[PatchParams],
) -> None:
    """Replace exact text in a note (all edits apply, or none)."""
    edit_list = None
    if edits is not None:
        data = json_arg(_read_source(edits), "--edits")
        try:
            edit_list = msgspec.convert(data, list[Edit])
        except msgspec.ValidationError as exc:
            fail(f"--edits: {exc}", ExitStatus.USAGE)
    flags.run(lambda steering: PatchParams(target=target, old=old, new=new_, edits=edit_list, rewrite_anchors=rewrite_anchors, **steering))


@write_command(writes.APPEND)
def append(
    target: Annotated[str, typer.Argument(help=doc(AppendParams, "target")), Complete.NOTE],
    section: Annotated[str, typer.Option(help=doc(AppendParams, "section"))],
    markdown: Annotated[str, typer.Option(help=doc(AppendParams, "markdown") + " - reads it from stdin.")],
    *,
    flags: WriteFlags[AppendParams],
) -> None:
    """Append Markdown to an H2 section."""
    text = sys.stdin.read() if markdown == "-" else markdown
    flags.run(lambda steering: AppendParams(target=target, section=section, markdown=text, **steering))


@write_command(writes.SET_FRONTMATTER)
def set_fields(
    target: Annotated[str, typer.Argument(help=doc(SetFrontmatterParams, "target")), Complete.NOTE],
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help=doc(SetFrontmatterParams, "set") + SET_HELP)] = None,
    unset: Annotated[str | None, typer.Option(help=doc(SetFrontmatterParams, "unset") + " Comma-separated.")] = None,
    *,
    flags: WriteFlags[SetFrontmatterParams],
) -> None:
    """Set or unset frontmatter keys; other keys keep their bytes."""
    fields = _assignments(set_)
    keys = [k.strip() for k in (unset or "").split(",") if k.strip()]
    flags.run(lambda steering: SetFrontmatterParams(target=target, set=fields, unset=keys, **steering))


def _two(first: str, second: str, names: str) -> None:
    """Refuse as a usage error a command line that gives one note twice, as typed (``link A A``).
    Two different names of one note are the daemon's to refuse (exit 1): only it can resolve them."""
    if first == second:
        fail(f"{names} are both {first!r}; give two different notes", ExitStatus.USAGE)


@write_command(writes.LINK)
def link(
    source: Annotated[str, typer.Argument(metavar="FROM", help=doc(LinkParams, "source")), Complete.NOTE],
    target: Annotated[str, typer.Argument(metavar="TO", help=doc(LinkParams, "target")), Complete.NOTE],
    relation: Annotated[Relation | None, typer.Option(help=doc(LinkParams, "relation"))] = None,
    one_way: Annotated[bool, typer.Option("--one-way", help="Do not add the link back from TO.")] = False,
    *,
    flags: WriteFlags[LinkParams],
) -> None:
    """Link two notes under '## Relevant Notes' (both ways unless --one-way); an existing link is kept."""
    _two(source, target, "FROM and TO")
    flags.run(lambda steering: LinkParams(source=source, target=target, relation=relation, bidirectional=not one_way, **steering))


@write_command(writes.SUPERSEDE)
def supersede(
    old: Annotated[str, typer.Argument(metavar="OLD", help=doc(SupersedeParams, "old")), Complete.NOTE],
    new_: Annotated[str, typer.Argument(metavar="NEW", help=doc(SupersedeParams, "new")), Complete.NOTE],
    *,
    flags: WriteFlags[SupersedeParams],
) -> None:
    """Mark OLD superseded by NEW (status, superseded_by) and link NEW back to OLD."""
    _two(old, new_, "OLD and NEW")
    flags.run(lambda steering: SupersedeParams(old=old, new=new_, **steering))


@write_command(writes.MOVE)
def move(
    source: Annotated[str, typer.Argument(metavar="FROM", help=doc(MoveParams, "target")), Complete.NOTE],
    to: Annotated[str, typer.Argument(metavar="TO", help=doc(MoveParams, "to"))],
    *,
    flags: WriteFlags[MoveParams],
) -> None:
    """Rename or move a note and rewrite every link to it: a preview first, then --confirm --fingerprint F."""
    _two(source, to, "FROM and TO")
    flags.run(lambda steering: MoveParams(target=source, to=to, **steering), "move", source, to)


@write_command(writes.DELETE)
def delete(
    target: Annotated[str, typer.Argument(metavar="TARGET", help=doc(DeleteParams, "target")), Complete.NOTE],
    leave_broken_links: Annotated[bool, typer.Option("--leave-broken-links", help=doc(DeleteParams, "leave_broken_links"))] = False,
    *,
    flags: WriteFlags[DeleteParams],
) -> None:
    """Move a note to .trash (undo restores it): a preview first, then --confirm --fingerprint F."""
    words = ("delete", target, *(("--leave-broken-links",) if leave_broken_links else ()))
    flags.run(lambda steering: DeleteParams(target=target, leave_broken_links=leave_broken_links, **steering), *words)


@write_command(writes.MERGE)
def merge(
    keep: Annotated[str, typer.Argument(metavar="KEEP", help=doc(MergeParams, "keep")), Complete.NOTE],
    absorb: Annotated[str, typer.Argument(metavar="ABSORB", help=doc(MergeParams, "absorb")), Complete.NOTE],
    *,
    flags: WriteFlags[MergeParams],
) -> None:
    """Fold ABSORB into KEEP and repoint its links: a preview first, then --confirm --fingerprint F.

    The text preview leaves out the merged body; --json carries it in detail.body."""
    _two(keep, absorb, "KEEP and ABSORB")
    flags.run(
        lambda steering: MergeParams(keep=keep, absorb=absorb, **steering),
        "merge",
        keep,
        absorb,
        text=lambda r, confirm: receipt_text(r, confirm, omit=frozenset({"body"})),
    )


@write_command(writes.UNDO)
def undo(
    op_id: Annotated[str, typer.Argument(metavar="OP_ID", help=doc(UndoParams, "op_id")), Complete.OP],
    whole_session: Annotated[bool, typer.Option("--session", help=doc(UndoParams, "session"))] = False,
    *,
    flags: WriteFlags[UndoParams],
) -> None:
    """Reverse a committed operation (refused if its files changed since); past the kept ones, a revert from git history."""
    with session() as c:
        chosen = pick_vault(c, flags.vault)
        try:
            result = c.call(writes.UNDO, UndoParams(op_id=op_id, session=whole_session, **flags.fields(chosen)))
        except CallError as exc:
            if whole_session or not any(i.code == IssueCode.R02 for i in exc.data.issues):
                refuse(exc.data)
            # Older than the journal's window, but git history has it: preview the revert instead.
            render.say(f"vaultctl: {exc.data.message}", file=sys.stderr, multiline=False, reversible=False)
            from vaultctl.commands.git import revert_preview

            revert_preview(c, op_id, chosen, flags)
            return
    emit(result, flags.as_json, receipt_text)
    exit_if_not_logged(result)


def _by(o: OpSummary) -> str:
    """Who made it: the channel, the agent session, and for an applied proposal its proposer too."""
    by = o.channel + (f" ({o.session})" if o.session else "")
    return by + (f", proposed by {o.proposed_by}" if o.proposed_by else "")


def ops(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=200, help=doc(OpListParams, "limit"))] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Recent operations kept for undo, newest first."""
    import datetime as dt

    with session() as c:
        result = call(writes.OP_LIST, OpListParams(vault=pick_vault(c, vault), limit=limit), client=c)
    emit(
        result,
        as_json,
        lambda r: (
            render.table(
                ["op id", "op", "when", "by", "summary"],
                [(o.op_id, o.op, dt.datetime.fromtimestamp(o.created).strftime("%Y-%m-%d %H:%M:%S"), _by(o), o.summary) for o in r.ops],
            )
            if r.ops
            else "no operations kept"
        ),
    )
