"""lint: LEVEL/CODE/NOTE/FINDING rows and a verdict; --fix previews the safe fixes as one operation."""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.errors import ExitStatus
from protocol.methods import lint
from protocol.methods.lint import MAX_LINT_DOCUMENTS, LintCode, LintFixParams, LintParams, LintResult
from protocol.methods.service import Level
from protocol.methods.writes import TwoStepParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.receipts import confirm_command, exit_if_not_logged, log_event, receipt_text
from vaultctl.commands.write_command import DryRunOpt  # noqa: TC001 - typer reads the command annotations at run time


def _text(r: LintResult, fix_cmd: str) -> str:
    rows = [
        (f.level, f.code, f"{f.note}:{f.line}" if f.line else f.note, f.finding + (f" [fix: {f.fix}]" if f.fix else "")) for f in r.findings
    ]
    parts = [render.table(["level", "code", "note", "finding"], rows) if rows else f"no findings as of {r.as_of}"]
    counts = ", ".join(f"{code} {n}" for code, n in r.counts.items())
    tail = f"{r.errors} error(s), {r.warnings} warning(s) in {r.checked} note(s) as of {r.as_of}" + (f" ({counts})" if counts else "")
    if r.truncated:
        tail += f"; {len(r.findings)} listed, raise --limit or narrow with --code/--note"
    if r.unread_documents:
        tail += (
            f"\n{r.unread_documents} canvas and base file(s) past the {MAX_LINT_DOCUMENTS:,} one lint reads were not checked,"
            " and no attachment is called unused (L12) while any is unread"
        )
    if r.fixable:
        tail += f"\n{r.fixable} can be fixed mechanically: {fix_cmd}"
    report = [f"report: {r.report} (op {r.report_op})"] if r.report else []
    return render.compose([*parts, "", tail, f"verdict: {r.verdict}", *report])


def lint_vault(
    note: Annotated[str | None, typer.Option("--note", help=doc(LintParams, "note"))] = None,
    code: Annotated[LintCode | None, typer.Option("--code", help=doc(LintParams, "code"))] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="DATE", help=doc(LintParams, "as_of"))] = None,
    limit: Annotated[int, typer.Option(help=doc(LintParams, "limit"))] = 200,
    fix: Annotated[bool, typer.Option("--fix", help="Preview the safe mechanical fixes as one operation (then --confirm it).")] = False,
    confirm: Annotated[bool, typer.Option("--confirm", help=doc(TwoStepParams, "confirm") + " With --fix.")] = False,
    fingerprint: Annotated[str | None, typer.Option("--fingerprint", help=doc(TwoStepParams, "fingerprint") + " With --fix.")] = None,
    dry_run: DryRunOpt = False,
    log: Annotated[str | None, typer.Option("--log", help=doc(LintFixParams, "log") + " With --fix.")] = None,
    vault: VaultOpt = None,
    fresh: Annotated[bool, typer.Option("--fresh", help=doc(LintParams, "fresh"))] = False,
    write: Annotated[bool, typer.Option("--write", help=doc(LintParams, "write"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Lint the whole vault: LEVEL/CODE/NOTE/FINDING rows and a verdict (exit 1 on errors); read-only.

    --fix previews the safe fixes (aliases written as links, ambiguous names with a clear choice)
    as one operation; --fix --confirm --fingerprint F applies it, and 'vaultctl undo' reverses it."""
    narrow = [*(("--note", note) if note else ()), *(("--code", str(code)) if code else ()), *(("--vault", vault) if vault else ())]
    fix_cmd = confirm_command("lint", "--fix", *narrow)
    with session() as c:
        chosen = pick_vault(c, vault)
        if fix:
            params = LintFixParams(
                vault=chosen, note=note, code=code, confirm=confirm, fingerprint=fingerprint, dry_run=dry_run, log=log_event(log)
            )
            receipt = call(lint.LINT_FIX, params, client=c)
            emit(receipt, as_json, lambda r: receipt_text(r, confirm_command("lint", "--fix", *narrow, *(("--log", log) if log else ()))))
            exit_if_not_logged(receipt)
            return
        if confirm or fingerprint or dry_run or log:
            fail("--confirm, --fingerprint, --dry-run and --log go with --fix", ExitStatus.USAGE)
        asked = LintParams(vault=chosen, note=note, code=code, as_of=as_of, limit=limit, fresh=fresh, write=write)
        result = call(lint.LINT, asked, client=c)
    emit(result, as_json, lambda r: _text(r, fix_cmd))
    if result.verdict == Level.FAIL:
        raise typer.Exit(int(ExitStatus.REFUSED))
