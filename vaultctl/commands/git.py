"""history, diff, sync, snapshot, promote, revert, and ``vault git``: a vault's git side."""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Annotated

import typer

from protocol.methods import git
from protocol.methods.git import (
    NoteDiffParams,
    NoteDiffResult,
    NoteHistoryParams,
    NoteHistoryResult,
    PromoteParams,
    RevertParams,
    SnapshotParams,
    SnapshotResult,
    SyncParams,
    SyncResult,
    VaultGitParams,
)
from protocol.methods.git_settings import GitMode  # noqa: TC001 - typer reads the command annotations at run time (vault git --mode)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.admin import vault_text
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.receipts import receipt_text
from vaultctl.commands.write_command import WriteFlags, write_command

if TYPE_CHECKING:
    from protocol.methods.writes import UndoParams
    from vaultctl.client import Client


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def history(
    target: Annotated[str, typer.Argument(help=doc(NoteHistoryParams, "target"))],
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(NoteHistoryParams, "limit"))] = 20,
    as_json: JsonOpt = False,
) -> None:
    """The commits that touched a note, newest first, renames followed."""
    with session() as c:
        result = call(git.NOTE_HISTORY, NoteHistoryParams(target=target, vault=pick_vault(c, vault), limit=limit), client=c)

    def text(r: NoteHistoryResult) -> str:
        rows = [
            (
                e.commit[:12],
                _when(e.date),
                e.author,
                e.status + (f" from {e.renamed_from}" if e.renamed_from else ""),
                e.op_id or "-",
                e.subject,
            )
            for e in r.entries
        ]
        body = render.table(["commit", "date", "author", "change", "op id", "subject"], rows) if rows else f"no commit touched {r.path}"
        more = f"\n\nmore commits touched it: raise --limit (at most {git.MAX_HISTORY})" if r.truncated else ""
        return body + more

    emit(result, as_json, text)


def diff(
    target: Annotated[str, typer.Argument(help=doc(NoteDiffParams, "target"))],
    from_rev: Annotated[str | None, typer.Option("--from", metavar="REV", help=doc(NoteDiffParams, "from_rev"))] = None,
    to_rev: Annotated[str | None, typer.Option("--to", metavar="REV", help=doc(NoteDiffParams, "to_rev"))] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A unified diff of a note between revisions (default: its last commit and the file now)."""
    with session() as c:
        params = NoteDiffParams(target=target, vault=pick_vault(c, vault), from_rev=from_rev, to_rev=to_rev)
        result = call(git.NOTE_DIFF, params, client=c)

    def text(r: NoteDiffResult) -> str:
        if not r.diff:
            return f"{r.path}: no difference"
        return r.diff.rstrip("\n") + ("\n[diff cut; read the revisions with 'vaultctl show --at REV']" if r.truncated else "")

    emit(result, as_json, text)


def _sync_text(r: SyncResult) -> str:
    head = render.fields(
        f"sync {r.vault} ({r.branch})",
        [
            ("outcome", r.outcome),
            ("head", (r.head or "-")[:12]),
            ("origin", (r.remote_head or "-")[:12]),
            ("integrated", r.incoming),
            ("pushed" if r.pushed else "to push", r.outgoing),
        ],
    )
    parts: list[str] = [head]
    if r.conflicts:
        rows = [(c.path, c.kept, c.proposal or "-") for c in r.conflicts]
        parts.append(render.table(["conflict", "in the vault now", "proposal"], rows))
    parts.append(r.message)
    return render.compose(parts, "\n\n")


def sync(
    vault_id: Annotated[str | None, typer.Argument(metavar="[ID]", help=doc(SyncParams, "vault"))] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help=doc(SyncParams, "dry_run"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Fetch the vault's remote, integrate its commits, push fast-forward only (never forced)."""
    with session() as c:
        result = call(git.VAULT_SYNC, SyncParams(vault=pick_vault(c, vault_id), dry_run=dry_run), client=c)
    emit(result, as_json, _sync_text)


def snapshot(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Commit the vault's hand edits now, as one snapshot commit."""
    with session() as c:
        result = call(git.VAULT_SNAPSHOT, SnapshotParams(vault=pick_vault(c, vault)), client=c)

    def text(r: SnapshotResult) -> str:
        listed = "\n".join(f"  {p}" for p in r.paths) + (f"\n  … and {r.omitted} more" if r.omitted else "")
        return r.message + (f"\n{listed}" if r.paths and r.commit else "")

    emit(result, as_json, text)


@write_command(git.PROMOTE)
def promote(
    target: Annotated[str, typer.Argument(help=doc(PromoteParams, "target"))],
    to: Annotated[str, typer.Option("--to", metavar="ORG_VAULT", help=doc(PromoteParams, "to"))],
    as_path: Annotated[str | None, typer.Option("--as", metavar="PATH", help=doc(PromoteParams, "path"))] = None,
    again: Annotated[bool, typer.Option("--again", help=doc(PromoteParams, "again"))] = False,
    *,
    flags: WriteFlags[PromoteParams],
) -> None:
    """Copy a note into an org vault through the screen, with provenance on both sides: a preview first."""
    words = ["promote", target, "--to", to, *(["--as", as_path] if as_path else []), *(["--again"] if again else [])]
    flags.run(lambda steering: PromoteParams(target=target, to=to, path=as_path, again=again, **steering), *words)


@write_command(git.REVERT)
def revert(
    op_id: Annotated[str, typer.Argument(metavar="OP_ID", help=doc(RevertParams, "op_id"))],
    *,
    flags: WriteFlags[RevertParams],
) -> None:
    """Reverse an operation recorded in git history as a new operation: a preview first."""
    flags.run(lambda steering: RevertParams(op_id=op_id, **steering), "revert", op_id)


def revert_preview(c: Client, op_id: str, chosen: str | None, undo: WriteFlags[UndoParams]) -> None:
    """``vaultctl undo`` of an operation past the journal's window: the revert's preview, with the
    undo's --vault, --dry-run and --log."""
    flags = WriteFlags(git.REVERT, vault=undo.vault, dry_run=undo.dry_run, log=undo.log, as_json=undo.as_json)
    result = call(git.REVERT, RevertParams(op_id=op_id, **flags.fields(chosen)), client=c)
    emit(result, flags.as_json, lambda r: receipt_text(r, flags.confirm_command("revert", op_id)))


def vault_git(
    vault_id: Annotated[str, typer.Argument(metavar="ID", help=doc(VaultGitParams, "id"))],
    mode: Annotated[GitMode | None, typer.Option("--mode", help=doc(VaultGitParams, "mode"))] = None,
    remote: Annotated[str | None, typer.Option("--remote", help=doc(VaultGitParams, "remote"))] = None,
    clear_remote: Annotated[bool, typer.Option("--clear-remote", help=doc(VaultGitParams, "clear_remote"))] = False,
    quiet: Annotated[int | None, typer.Option("--quiet-seconds", help=doc(VaultGitParams, "snapshot_quiet_s"))] = None,
    interval: Annotated[int | None, typer.Option("--sync-interval", help=doc(VaultGitParams, "sync_interval_s"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show or set how a vault keeps git history (off, checkpoint, snapshot), its remote and background sync."""
    if remote is not None and "://" not in remote and not remote.startswith(("/", "~")) and ":" not in remote:
        remote = os.path.abspath(remote)  # a local path, as git would read it from here
    params = VaultGitParams(
        id=vault_id, mode=mode, remote=remote, clear_remote=clear_remote, snapshot_quiet_s=quiet, sync_interval_s=interval
    )
    emit(call(git.VAULT_GIT, params), as_json, vault_text)
