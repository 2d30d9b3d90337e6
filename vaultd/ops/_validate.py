"""Validate the vault as a plan would leave it; refuse with every issue, or pass on warnings.

Rules run on what the write changes: a problem a note already had (an old dead link, an
unreadable header, an email in a vault that denies them) warns and never blocks; a problem the
write introduces is an error. Secrets are always refused. Nothing here writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.reports import in_reports
from protocol.methods.vaults import DeadLinks
from vaultd.errors import PolicyRefused, ValidationFailed
from vaultd.ops._topic_check import topic_issues, typed_issues
from vaultd.ops.sources.checks import PlanView, ledger_issues
from vaultd.policy import (
    added_lines,
    check_inside_vault,
    check_new_path,
    decoded_lines,
    deny_path_issue,
    new_issues_only,
    owned_path_issue,
    path_screen_issues,
    pii_line_findings,
    roles,
    schema_issues,
    secret_line_issues,
    write_channel_issue,
)
from vaultd.tidy.redact import redact_log
from vaultd.txn.plan import Action, Change, Plan
from vaultd.vault import frontmatter, markdown, oplog
from vaultd.vault.link_targets import LinkResolver, ResolutionStatus
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.vaults import VaultEntry
    from vaultd.ops._context import OpContext

MAX_OLD_LINK_WARNINGS = 100  #: dead links a note already had, reported per note; the rest are counted
MAX_QUIET_OLD_LINKS = 1000  #: old dead links a move checks and leaves out; past it they are counted


def new_path_issues(ctx: OpContext, plan: Plan) -> list[Issue]:
    """Secret and PII screening of every path the plan creates (the trash only keeps old names)."""
    return _screened(ctx.entry, plan)


def _screened(entry: VaultEntry, plan: Plan) -> list[Issue]:
    issues: list[Issue] = []
    for change in plan.effective():
        if change.action == Action.CREATE and not change.path.startswith(TRASH_PREFIX):
            issues += path_screen_issues(change.path, entry.pii, entry.kind)
    return issues


def created_path_issues(entry: VaultEntry, plan: Plan) -> list[Issue]:
    """The screen every path a plan creates passes, whichever operation planned it: secrets (V06)
    and PII (V07) as in a create's path (but for the trash, which keeps old names), then the path
    rules (V04). Screening issues come alone, so no later issue echoes a screened path."""
    screened = [i for i in _screened(entry, plan) if i.severity == Severity.ERROR]
    if screened:
        return screened
    issues: list[Issue] = []
    for change in plan.effective():
        if change.action == Action.CREATE:
            issues += check_new_path(change.path.removeprefix(TRASH_PREFIX), note=is_note_path(change.path))
    return issues


def refuse_unsafe_path(issues: list[Issue]) -> None:
    """Raise VALIDATION for path screening errors; the message names the rule, never the path.

    Raises:
        ValidationFailed: VALIDATION, an issue of error severity is among ``issues``.
    """
    if errors := [i for i in issues if i.severity == Severity.ERROR]:
        raise ValidationFailed(f"refused: {errors[0].message}", issues=errors)


def check_policy(ctx: OpContext, plan: Plan) -> None:
    """The vault's policy on every path the plan touches, whatever the method: one place, so a
    new operation (or an undo, a revert, an approved proposal) cannot miss a rule.

    Raises:
        PolicyRefused: POLICY, a touched path is refused by the write channel, deny paths or
            privacy.
    """
    # Screened first: every later refusal names the path, which must not echo a secret.
    refuse_unsafe_path(new_path_issues(ctx, plan))
    problems = []
    if (issue := write_channel_issue(ctx.entry.write, ctx.channel)) is not None:
        problems.append(issue)
    visibility = ctx.visibility
    log_rel = oplog.log_name(ctx.entry)
    for change in plan.effective():
        if (issue := deny_path_issue(change.path, ctx.entry.deny_paths)) is not None:
            problems.append(issue)
        if (issue := visibility.write_issue(change.path)) is not None:
            if issue not in problems:
                problems.append(issue)
            continue  # refused as private, telling nothing more of the path
        if _log_redaction(plan, change, log_rel):
            continue  # tidy's log rule: the log as it was, but for secrets replaced by the marker
        if (issue := owned_path_issue(change.path, change.before, change.after, log_rel=log_rel, vault_id=ctx.entry.id)) is not None:
            problems.append(issue)
        if (issue := roles.closed_to_agents(change.path, ctx.entry.folder_roles(), ctx.channel)) is not None:
            problems.append(issue)
        if (issue := roles.session_notes_closed(change.path, ctx.entry.session_notes, ctx.channel)) is not None:
            problems.append(issue)
    if problems:
        raise PolicyRefused(problems[0].message, issues=problems)


def _log_redaction(plan: Plan, change: Change, log_rel: str) -> bool:
    """Whether ``change`` is ``vault.tidy``'s redaction of the operation log: its only write there,
    allowed because the new bytes are the old ones with each secret replaced, and nothing else."""
    if plan.op != "vault.tidy" or change.path != log_rel or change.before is None or change.after is None:
        return False
    try:
        return redact_log(change.before.decode("utf-8"))[0].encode("utf-8") == change.after
    except UnicodeDecodeError:
        return False


class _PostState:
    """Link resolution against the vault as the plan leaves it, without copying the index."""

    def __init__(self, ctx: OpContext, plan: Plan) -> None:
        self.base = ctx.index.resolver
        self.deleted = {c.path for c in plan.effective() if c.action == Action.DELETE}
        self.created = LinkResolver(c.path for c in plan.effective() if c.action == Action.CREATE)

    def status(self, target: str, source: str) -> ResolutionStatus:
        if not target.strip():
            return ResolutionStatus.RESOLVED
        found: set[str] = set()
        for resolver in (self.base, self.created):
            res = resolver.resolve(target, source)
            found |= {res.path} if res.path else set(res.candidates)
        found -= self.deleted
        if not found:
            return ResolutionStatus.MISSING
        return ResolutionStatus.RESOLVED if len(found) == 1 else ResolutionStatus.AMBIGUOUS


class _NoteView:
    """One version of a note, parsed once for every rule that needs it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.fm = frontmatter.parse(text)
        self.scan = markdown.scan(text, self.fm.body_offset, self.fm.body_line, count_words=False)
        self.h1 = next((h.text for h in self.scan.headings if h.level == 1), None)

    def link_issues(
        self,
        path: str,
        post: _PostState,
        before: _NoteView | None,
        already_dead: Callable[[str], bool] | None = None,
        *,
        forward_links: bool = False,
    ) -> tuple[list[Issue], list[Issue]]:
        """(errors, warnings) for this version's links, each target judged once.

        A target the note already linked to is old debt: it can only warn, so once
        MAX_OLD_LINK_WARNINGS of them are found the rest are counted, not resolved; a note with a
        vast number of dead links costs an edit no more than that. Every target the write adds is
        judged. With ``already_dead`` (a move, which changes no link's text on purpose) an old link
        that did not resolve before the write either is not the write's doing and is left out.
        With ``forward_links`` a new link to no note yet is a warning (people link to a note
        before writing it); a new ambiguous link is refused either way, since no later note can
        make it name one note.
        """
        old_targets = {link.target for link in before.scan.links} if before is not None else set()
        errors: list[Issue] = []
        warnings: list[Issue] = []
        seen: set[str] = set()
        unchecked = quiet = 0
        for link in self.scan.links:
            if link.target in seen:
                continue
            seen.add(link.target)
            old = link.target in old_targets
            if old and (len(warnings) >= MAX_OLD_LINK_WARNINGS or quiet >= MAX_QUIET_OLD_LINKS):
                unchecked += 1
                continue
            status = post.status(link.target, path)
            if status == ResolutionStatus.RESOLVED:
                continue
            if old and already_dead is not None and already_dead(link.target):
                quiet += 1
                continue
            issue = Issue(code=IssueCode.V03, path=path, line=link.line, message=f"link [[{link.target}]] would be {status}")
            if old:
                issue.severity = Severity.WARNING
                warnings.append(issue)
            elif forward_links and status == ResolutionStatus.MISSING:
                issue.severity = Severity.WARNING
                issue.message = f"link [[{link.target}]] names no note yet (a forward link); it resolves once that note exists"
                warnings.append(issue)
            else:
                errors.append(issue)
        if unchecked:  # first, so a bounded receipt still shows it
            warnings.insert(
                0,
                Issue(
                    code=IssueCode.V03,
                    path=path,
                    severity=Severity.WARNING,
                    message=f"{unchecked} more link(s) the note already had were not checked; see 'vaultctl links' for its dead links",
                ),
            )
        return errors, warnings

    def header_issues(self, ctx: OpContext, path: str) -> list[Issue]:
        issues = [Issue(code=IssueCode.V01, message=i.message, path=path, line=i.line) for i in self.fm.issues]
        if in_reports(path):
            return issues  # a report is output, not a note of the schema's
        return issues + schema_issues(ctx.entry.schema, self.fm.data, self.fm.present, path, h1=self.h1, domains=ctx.entry.domains)

    def decoded(self) -> set[tuple[int, str]]:
        return set(decoded_lines(self.fm.data, 1))


TRASH_PREFIX = ".trash/"


def _moved_from(plan: Plan) -> dict[str, bytes]:
    """A plan that removes one file and creates one is a move (a rename, a delete to the trash, or
    the undo of either): the new file is judged against the old one's bytes, so problems the note
    already had (dead links, schema debt, screened lines) warn instead of refusing the move."""
    effective = plan.effective()
    gone = [c for c in effective if c.action == Action.DELETE and c.before is not None]
    made = [c for c in effective if c.action == Action.CREATE]
    if len(gone) == 1 and len(made) == 1 and gone[0].before is not None:
        return {made[0].path: gone[0].before}
    return {}


def _moved_paths(plan: Plan) -> dict[str, str]:
    """For a move: the new path of the note, mapped to the one its links were resolved from."""
    effective = plan.effective()
    gone = [c.path for c in effective if c.action == Action.DELETE]
    made = [c.path for c in effective if c.action == Action.CREATE]
    return {made[0]: gone[0]} if len(gone) == 1 and len(made) == 1 else {}


def _dead_before(ctx: OpContext, source: str) -> Callable[[str], bool]:
    """Whether a link target of ``source`` failed to resolve in the vault as it is now."""
    resolver = ctx.index.resolver

    def dead(target: str) -> bool:
        return resolver.resolve(target, source).status != ResolutionStatus.RESOLVED

    return dead


def _collisions(ctx: OpContext, path: str, deleted: set[str]) -> Callable[[str], list[str]]:
    """Existing files a new path would collide with by case or normalization (none being removed)."""

    def existing(_key: str) -> list[str]:
        return [p for p in ctx.index.resolver.same_key(path) if p not in deleted]

    return existing


def kept_file_issues(change: Change, origin: bytes | None = None) -> list[Issue]:
    """A file that is not a note (a captured raw copy, an attachment) is kept byte for byte,
    whatever its format: never parsed or required to be UTF-8, but refused if, read as text, it
    gains a secret. A moved file (``origin``: its bytes at the old path) gains nothing."""
    assert change.after is not None
    try:
        after = change.after.decode("utf-8")
    except UnicodeDecodeError:
        return []
    origin = change.before if change.before is not None else origin
    before = origin.decode("utf-8", "replace") if origin is not None else None
    return secret_line_issues(added_lines(before, after), change.path)


def validate(ctx: OpContext, plan: Plan) -> list[Issue]:
    """Raise ValidationFailed with every error; return the warnings.

    Raises:
        ValidationFailed: VALIDATION, with every error found; nothing is written.
    """
    check_policy(ctx, plan)
    errors: list[Issue] = []
    warnings: list[Issue] = list(ctx.warnings) + list(plan.warnings)
    warnings += [i for i in new_path_issues(ctx, plan) if i.severity != Severity.ERROR]
    post = _PostState(ctx, plan)
    moved_from = _moved_from(plan)
    moved_origin = _moved_paths(plan)
    forward_links = ctx.entry.dead_link_rule() is DeadLinks.WARN
    ledger_view: PlanView | None = None

    log_rel = oplog.log_name(ctx.entry)
    for change in plan.effective():
        if _log_redaction(plan, change, log_rel):
            continue  # vaultd's own file, not a note: only its redactions were checked (check_policy)
        if (issue := roles.raw_copy_changed(change.path, change.before is not None, ctx.entry.folder_roles(), plan.op)) is not None:
            errors.append(issue)
        if change.action == Action.CREATE and change.path.startswith(TRASH_PREFIX):
            # The trash is Obsidian's own folder: judge the path below it; names there never collide.
            errors += check_new_path(change.path.removeprefix(TRASH_PREFIX), note=is_note_path(change.path))
        elif change.action == Action.CREATE:
            errors += check_new_path(change.path, _collisions(ctx, change.path, post.deleted), note=is_note_path(change.path))
        if change.after is None:
            continue
        errors += check_inside_vault(ctx.root, change.path)
        if not is_note_path(change.path):
            errors += kept_file_issues(change, moved_from.get(change.path))
            continue
        try:
            after = change.after.decode("utf-8")
        except UnicodeDecodeError:
            errors.append(Issue(code=IssueCode.V09, message="the new content is not valid UTF-8", path=change.path))
            continue
        origin = change.before if change.before is not None else moved_from.get(change.path)
        before = origin.decode("utf-8", "replace") if origin is not None else None
        new_lines = added_lines(before, after)
        if is_note_path(change.path) and not change.path.startswith(TRASH_PREFIX):
            view_after = _NoteView(after)
            view_before = _NoteView(before) if before is not None else None
            new_errors, debt = new_issues_only(
                view_before.header_issues(ctx, change.path) if view_before else [], view_after.header_issues(ctx, change.path)
            )
            if plan.op == "op.undo":
                # An undo puts back a header the note held before (a tidy's undo, its old keys): debt.
                debt += [msgspec.structs.replace(i, severity=Severity.WARNING) for i in new_errors]
                new_errors = []
            errors += new_errors
            warnings += debt
            link_errors, link_debt = view_after.link_issues(
                change.path,
                post,
                view_before,
                _dead_before(ctx, moved_origin.get(change.path, change.path)) if plan.op == "note.move" else None,
                forward_links=forward_links or in_reports(change.path),
            )
            if plan.op == "op.undo":
                # An undo puts back bytes the note held before: their links are old debt, not new.
                link_debt += [msgspec.structs.replace(i, severity=Severity.WARNING) for i in link_errors]
                link_errors = []
            errors += link_errors
            warnings += link_debt
            ledger_view = ledger_view or PlanView(ctx, plan)
            ledger_errors, ledger_debt = ledger_issues(
                ledger_view, change.path, view_before.fm.data if view_before else None, view_after.fm.data
            )
            errors += ledger_errors
            warnings += ledger_debt
            # frontmatter values as decoded too: a YAML escape can hide a token from the raw text
            new_lines += sorted(view_after.decoded() - (view_before.decoded() if view_before else set()))
        if new_lines:
            errors += secret_line_issues(new_lines, change.path)
            for issue in pii_line_findings(new_lines, ctx.entry.pii, ctx.entry.kind, "notes", path=change.path):
                (errors if issue.severity == Severity.ERROR else warnings).append(issue)
    cycle_errors, cycle_warnings = topic_issues(ctx, plan)
    errors += cycle_errors
    warnings += cycle_warnings
    typed_errors, typed_warnings = typed_issues(ctx, plan)
    errors += typed_errors
    warnings += typed_warnings
    if errors:
        raise ValidationFailed(
            f"refused: {errors[0].message}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
            issues=errors,
        )
    return warnings
