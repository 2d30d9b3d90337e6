"""new, patch, append, set, undo, ops, log: writes print their receipt (or preview) and exit 1
when refused; --json prints the receipt itself."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.methods.writes import (
    AppendParams,
    CreateParams,
    DeleteParams,
    Edit,
    LinkParams,
    LogAppendParams,
    LogEvent,
    LogGrepParams,
    LogTailParams,
    LogType,
    MergeParams,
    MoveParams,
    OpListParams,
    PatchParams,
    Relation,
    SetFrontmatterParams,
    SupersedeParams,
    UndoParams,
)
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Plan and validate only; write nothing.")]
ShaOpt = Annotated[str | None, typer.Option("--expected-sha", help="Refuse unless the note still has this sha256.")]
LogOpt = Annotated[str | None, typer.Option("--log", help='Override the log event: JSON {"type","source","note",...}.')]

log_app = typer.Typer(help="Read and append the vault's log.", no_args_is_help=True)


def _json_arg(value: str | None, what: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        fail(f"{what} is not valid JSON: {exc.msg}", ExitStatus.USAGE)


def _log_event(value: str | None) -> LogEvent | None:
    data = _json_arg(value, "--log")
    if data is None:
        return None
    try:
        return msgspec.convert(data, LogEvent)
    except msgspec.ValidationError as exc:
        fail(f"--log: {exc}", ExitStatus.USAGE)


def _read_source(value: str | None) -> str | None:
    if value is None:
        return None
    if value == "-":
        return sys.stdin.read()
    try:
        return Path(value).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {value}: {exc}", ExitStatus.USAGE)


def receipt_text(r: Any, confirm_cmd: str | None = None) -> str:
    if r.preview:
        head = f"preview of {r.op}: would change {len(r.changes)} file(s)"
    elif r.dry_run:
        head = f"dry run of {r.op}: would change {len(r.changes)} file(s); nothing was written"
    elif r.applied:
        head = f"applied {r.op} (op {r.op_id})"
    else:
        head = f"{r.op}: nothing to change"
    lines = [head]
    if r.changes:
        lines.append(render.table(["action", "path", "before", "after"], [
            (c.action, c.path, (c.before_sha or "-")[:12], (c.after_sha or "-")[:12]) for c in r.changes]))
    for w in r.warnings:
        lines.append(f"warning {w.code}{' ' + w.path if w.path else ''}{':' + str(w.line) if w.line else ''}: {w.message}")
    for key, value in (r.detail or {}).items():
        if key != "no_change":
            lines.append(f"{key}: {value if not isinstance(value, list) else ', '.join(map(str, value)) or '-'}")
    if r.log is not None:
        lines.append(f"log: {r.log.line}" if r.log.appended else f"log: NOT appended ({r.log.error})")
    if r.preview and confirm_cmd:
        lines.append(f"to confirm, run:\n  {confirm_cmd} --confirm --fingerprint {r.fingerprint}")
    return render.compose(lines)


def run_write(method: str, build: Any, as_json: bool, confirm_cmd: str | None = None,
              vault: str | None = None) -> None:
    with session() as c:
        params = build(pick_vault(c, vault))
        result = call(method, params, client=c)
    emit(result, as_json, lambda r: receipt_text(r, confirm_cmd))
    if result.log is not None and not result.log.appended:
        raise typer.Exit(int(ExitStatus.REFUSED))


def new(
    path: Annotated[str, typer.Argument(help="Vault-relative path; '.md' is added; folders are created.")],
    title: Annotated[str | None, typer.Option(help="Title (frontmatter and the H1 of the skeleton).")] = None,
    set_: Annotated[str | None, typer.Option("--set", help="Frontmatter fields as a JSON object.")] = None,
    body: Annotated[str | None, typer.Option(help="Body from a file, or - for stdin.")] = None,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, log: LogOpt = None, as_json: JsonOpt = False,
) -> None:
    """Create a note; refuses an existing path or a name that collides by case or normalization."""
    fields = _json_arg(set_, "--set") or {}
    if not isinstance(fields, dict):
        fail("--set must be a JSON object", ExitStatus.USAGE)
    text = _read_source(body)
    run_write("note.create", lambda v: CreateParams(vault=v, path=path, title=title, frontmatter=fields, body=text,
                                                    dry_run=dry_run, log=_log_event(log)), as_json, vault=vault)


def patch(
    target: Annotated[str, typer.Argument(help="A path, note name or alias.")],
    old: Annotated[str | None, typer.Option(help="Text that occurs exactly once.")] = None,
    new_: Annotated[str | None, typer.Option("--new", help="Its replacement.")] = None,
    edits: Annotated[str | None, typer.Option(help='A JSON file (or -) of [{"old": ..., "new": ...}].')] = None,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, expected_sha: ShaOpt = None, log: LogOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace exact text in a note (all edits apply, or none)."""
    edit_list = None
    if edits is not None:
        data = _json_arg(_read_source(edits), "--edits")
        try:
            edit_list = msgspec.convert(data, list[Edit])
        except msgspec.ValidationError as exc:
            fail(f"--edits: {exc}", ExitStatus.USAGE)
    run_write("note.patch", lambda v: PatchParams(vault=v, target=target, old=old, new=new_, edits=edit_list,
                                                  dry_run=dry_run, expected_sha=expected_sha,
                                                  log=_log_event(log)), as_json, vault=vault)


def append(
    target: Annotated[str, typer.Argument(help="A path, note name or alias.")],
    section: Annotated[str, typer.Option(help="The H2 heading to append under (created when absent).")],
    markdown: Annotated[str, typer.Option(help="The Markdown to append, or - for stdin.")],
    vault: VaultOpt = None, dry_run: DryRunOpt = False, expected_sha: ShaOpt = None, log: LogOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append Markdown to an H2 section."""
    text = sys.stdin.read() if markdown == "-" else markdown
    run_write("note.append", lambda v: AppendParams(vault=v, target=target, section=section, markdown=text,
                                                    dry_run=dry_run, expected_sha=expected_sha,
                                                    log=_log_event(log)), as_json, vault=vault)


def set_fields(
    target: Annotated[str, typer.Argument(help="A path, note name or alias.")],
    set_: Annotated[str | None, typer.Option("--set", help="Keys to set, as a JSON object.")] = None,
    unset: Annotated[str | None, typer.Option(help="Keys to remove, comma-separated.")] = None,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, expected_sha: ShaOpt = None, log: LogOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Set or unset frontmatter keys; other keys keep their bytes."""
    fields = _json_arg(set_, "--set") or {}
    if not isinstance(fields, dict):
        fail("--set must be a JSON object", ExitStatus.USAGE)
    keys = [k.strip() for k in (unset or "").split(",") if k.strip()]
    run_write("note.set_frontmatter", lambda v: SetFrontmatterParams(
        vault=v, target=target, set=fields, unset=keys, dry_run=dry_run, expected_sha=expected_sha,
        log=_log_event(log)), as_json, vault=vault)


ConfirmOpt = Annotated[bool, typer.Option("--confirm", help="Apply the change previewed before.")]
FingerprintOpt = Annotated[str | None, typer.Option("--fingerprint", help="The fingerprint the preview printed.")]


def _confirm_cmd(*words: str, vault: str | None = None) -> str:
    return confirm_command(*words, *(("--vault", vault) if vault else ()))


def link(
    source: Annotated[str, typer.Argument(metavar="FROM", help="The note that gets the link (path, name or alias).")],
    target: Annotated[str, typer.Argument(metavar="TO", help="The note linked to.")],
    relation: Annotated[Relation | None, typer.Option(help="How FROM relates to TO.")] = None,
    one_way: Annotated[bool, typer.Option("--one-way", help="Do not add the link back from TO.")] = False,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, log: LogOpt = None, as_json: JsonOpt = False,
) -> None:
    """Link two notes under '## Relevant Notes' (both ways unless --one-way); an existing link is kept."""
    run_write("note.link", lambda v: LinkParams(vault=v, source=source, target=target, relation=relation,
                                                bidirectional=not one_way, dry_run=dry_run, log=_log_event(log)),
              as_json, vault=vault)


def supersede(
    old: Annotated[str, typer.Argument(metavar="OLD", help="The note that is superseded.")],
    new_: Annotated[str, typer.Argument(metavar="NEW", help="The note that supersedes it.")],
    vault: VaultOpt = None, dry_run: DryRunOpt = False, log: LogOpt = None, as_json: JsonOpt = False,
) -> None:
    """Mark OLD superseded by NEW (status, superseded_by) and link NEW back to OLD."""
    run_write("note.supersede", lambda v: SupersedeParams(vault=v, old=old, new=new_, dry_run=dry_run,
                                                          log=_log_event(log)), as_json, vault=vault)


def move(
    source: Annotated[str, typer.Argument(metavar="FROM", help="The note to move (path, name or alias).")],
    to: Annotated[str, typer.Argument(
        metavar="TO", help="Its new vault-relative path ('.md' is added); ending in '/', a folder to move it into.")],
    confirm: ConfirmOpt = False, fingerprint: FingerprintOpt = None,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, log: LogOpt = None, as_json: JsonOpt = False,
) -> None:
    """Rename or move a note and rewrite every link to it: a preview first, then --confirm --fingerprint F."""
    run_write("note.move", lambda v: MoveParams(vault=v, target=source, to=to, confirm=confirm,
                                                fingerprint=fingerprint, dry_run=dry_run, log=_log_event(log)),
              as_json, confirm_cmd=_confirm_cmd("move", source, to, vault=vault), vault=vault)


def delete(
    target: Annotated[str, typer.Argument(metavar="TARGET", help="The note to delete (path, name or alias).")],
    leave_broken_links: Annotated[bool, typer.Option(
        "--leave-broken-links", help="Delete even though links to the note will break.")] = False,
    confirm: ConfirmOpt = False, fingerprint: FingerprintOpt = None,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, log: LogOpt = None, as_json: JsonOpt = False,
) -> None:
    """Move a note to .trash (undo restores it): a preview first, then --confirm --fingerprint F."""
    words = ("delete", target, *(("--leave-broken-links",) if leave_broken_links else ()))
    run_write("note.delete", lambda v: DeleteParams(vault=v, target=target, leave_broken_links=leave_broken_links,
                                                    confirm=confirm, fingerprint=fingerprint, dry_run=dry_run,
                                                    log=_log_event(log)),
              as_json, confirm_cmd=_confirm_cmd(*words, vault=vault), vault=vault)


def merge(
    keep: Annotated[str, typer.Argument(metavar="KEEP", help="The note that stays and receives the content.")],
    absorb: Annotated[str, typer.Argument(metavar="ABSORB", help="The note folded in (kept, marked superseded).")],
    confirm: ConfirmOpt = False, fingerprint: FingerprintOpt = None,
    vault: VaultOpt = None, dry_run: DryRunOpt = False, log: LogOpt = None, as_json: JsonOpt = False,
) -> None:
    """Fold ABSORB into KEEP and repoint its links: a preview first, then --confirm --fingerprint F.

    The text preview leaves out the merged body; --json carries it in detail.body."""
    confirm_cmd = _confirm_cmd("merge", keep, absorb, vault=vault)
    with session() as c:
        params = MergeParams(vault=pick_vault(c, vault), keep=keep, absorb=absorb, confirm=confirm,
                             fingerprint=fingerprint, dry_run=dry_run, log=_log_event(log))
        result = call("note.merge", params, client=c)
    emit(result, as_json, lambda r: receipt_text(
        msgspec.structs.replace(r, detail={k: v for k, v in (r.detail or {}).items() if k != "body"}), confirm_cmd))
    if result.log is not None and not result.log.appended:
        raise typer.Exit(int(ExitStatus.REFUSED))


def undo(
    op_id: Annotated[str, typer.Argument(metavar="OP_ID", help="From a receipt or 'vaultctl ops'.")],
    vault: VaultOpt = None, dry_run: DryRunOpt = False, as_json: JsonOpt = False,
) -> None:
    """Reverse a committed operation (refused if its files changed since)."""
    run_write("op.undo", lambda v: UndoParams(vault=v, op_id=op_id, dry_run=dry_run), as_json, vault=vault)


def ops(vault: VaultOpt = None, limit: Annotated[int, typer.Option(min=1, max=200)] = 20,
        as_json: JsonOpt = False) -> None:
    """Recent operations kept for undo, newest first."""
    import datetime as dt

    with session() as c:
        result = call("op.list", OpListParams(vault=pick_vault(c, vault), limit=limit), client=c)
    emit(result, as_json, lambda r: render.table(["op id", "op", "when", "channel", "summary"], [
        (o.op_id, o.op, dt.datetime.fromtimestamp(o.created).strftime("%Y-%m-%d %H:%M:%S"), o.channel, o.summary)
        for o in r.ops]) if r.ops else "no operations kept")


@log_app.command("tail")
def log_tail(vault: VaultOpt = None, limit: Annotated[int, typer.Option(min=1, max=200)] = 50,
             type_: Annotated[LogType | None, typer.Option("--type")] = None, as_json: JsonOpt = False) -> None:
    """The last events of the vault's log."""
    with session() as c:
        result = call("log.tail", LogTailParams(vault=pick_vault(c, vault), limit=limit, type=type_), client=c)
    emit(result, as_json, lambda r: "\n".join(r.lines + [f"warning: {w}" for w in r.warnings]) or "the log is empty")


@log_app.command("grep")
def log_grep(pattern: Annotated[str, typer.Argument()], vault: VaultOpt = None,
             limit: Annotated[int, typer.Option(min=1, max=200)] = 50,
             type_: Annotated[LogType | None, typer.Option("--type")] = None, as_json: JsonOpt = False) -> None:
    """Log events matching a pattern (no groups or backreferences)."""
    with session() as c:
        result = call("log.grep", LogGrepParams(vault=pick_vault(c, vault), pattern=pattern, limit=limit,
                                                type=type_), client=c)
    emit(result, as_json, lambda r: "\n".join(r.lines + [f"warning: {w}" for w in r.warnings]) or "no match")


@log_app.command("append")
def log_append(
    type_: Annotated[LogType, typer.Argument(metavar="TYPE")],
    source: Annotated[str, typer.Argument()],
    note: Annotated[str, typer.Argument()],
    project: Annotated[str, typer.Option(help="A project id or -.")] = "-",
    dest: Annotated[str | None, typer.Option()] = None,
    vault: VaultOpt = None, as_json: JsonOpt = False,
) -> None:
    """Append one event to the vault's log."""
    with session() as c:
        event = LogEvent(type=type_, project=project, source=source, note=note, dest=dest)
        result = call("log.append", LogAppendParams(vault=pick_vault(c, vault), event=event), client=c)
    emit(result, as_json, lambda r: f"appended: {r.line}")


def confirm_command(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in ("vaultctl", *words))
