"""template.insert: a template, its variables rendered, added to an existing note; and the template
reads every operation that starts from one shares (``note.create``, the daily notes).

A template is found as Obsidian finds it: by its name in the templates folder of
``templates.json``, or by its vault path. It is read like any note the caller may see (a template
private to the caller's channel is not found). Rendering is :mod:`vaultd.obsidian.templates`; a
template with Templater commands is inserted as written, with an O01 warning in the receipt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import templates
from vaultd.errors import InvalidParams, NotFound, ValidationFailed
from vaultd.obsidian.daily import DayError, add_text
from vaultd.obsidian.moment import MomentError
from vaultd.obsidian.templates import TemplateContext, render, template_note_path
from vaultd.ops._runner import no_detail
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    import datetime as dt

    from protocol.methods.templates import TemplateInsertParams
    from vaultd.ops._context import OpContext


def find_template(ctx: OpContext, name: str) -> str:
    """The vault path of the template ``name``: in the templates folder first, then as a path.

    Raises:
        NotFound: NOT_FOUND, no template of that name the caller may see.
    """
    folder = ctx.settings.templates.folder
    candidates = [template_note_path(f"{folder}/{name}")] if folder else []
    candidates.append(template_note_path(name))
    for path in candidates:
        if not ctx.visibility.hidden(path) and ctx.read(path) is not None:
            return path
    where = f"the templates folder {folder!r}" if folder else "the vault (no templates folder is set)"
    raise NotFound(f"no template {name!r} in {where}; template.list names them")


def template_failure(path: str, exc: Exception) -> ValidationFailed:
    """The refusal of a template or format vaultd cannot render."""
    message = f"{path}: {exc}"
    return ValidationFailed(f"refused: {message}", issues=[Issue(code=IssueCode.O02, path=path, message=message[:500])])


def rendered_template(ctx: OpContext, path: str, tc: TemplateContext) -> tuple[str, list[Issue]]:
    """The template at ``path`` rendered for ``tc``, and its warnings (O01 for Templater).

    Raises:
        ValidationFailed: VALIDATION (O02), a date format in it cannot be rendered; the template is
            not UTF-8.
    """
    _, text = ctx.read_text(path)
    try:
        done = render(text, tc)
    except (MomentError, ValueError, OverflowError) as exc:
        raise template_failure(path, exc) from exc
    warnings = []
    if done.templater:
        warnings.append(
            Issue(
                code=IssueCode.O01,
                severity=Severity.WARNING,
                path=path,
                message=f"{path} holds Templater commands (<% %>); vaultd inserted them as written",
            )
        )
    return done.text, warnings


def note_context(ctx: OpContext, title: str, when: dt.datetime | None = None) -> TemplateContext:
    """The core Templates plugin's variables for a note titled ``title``, now."""
    fmt = ctx.settings.templates
    return TemplateContext(title=title, when=when or ctx.now, date_format=fmt.date_format, time_format=fmt.time_format)


def merged_into(text: str, addition: str, under: str | None) -> str:
    """``text`` with a rendered template added: its frontmatter keys the note lacks join the
    note's (the note's own values win, as Obsidian's insert does), its body goes at the end or
    under a heading.

    Raises:
        InvalidParams: INVALID_PARAMS, ``under`` is not a heading or names two.
    """
    added = frontmatter.parse(addition)
    body = addition[added.body_offset :]
    try:
        out = add_text(text, body, under=under, at_start=False) if body.strip() else text
    except DayError as exc:
        raise InvalidParams(str(exc)) from exc
    have = frontmatter.parse(out).data or {}
    fresh = {k: v for k, v in (added.data or {}).items() if k not in have}
    return emit(out, fresh) if fresh else out


@operation(templates.TEMPLATE_INSERT, detail=no_detail)
def plan_template_insert(ctx: OpContext, params: TemplateInsertParams) -> Plan:
    """Plan a template's insertion into an existing note.

    Raises:
        NotFound: NOT_FOUND, no such template.
        ValidationFailed: VALIDATION (O02), the template cannot be rendered.
        InvalidParams: INVALID_PARAMS, ``under`` is not a heading.
    """
    path = ctx.find(params.target)
    source = find_template(ctx, params.template)
    raw, text = ctx.read_target(path)
    addition, warnings = rendered_template(ctx, source, note_context(ctx, path.rpartition("/")[2][:-3]))
    changed = stamp_updated(ctx, path, merged_into(text, addition, params.under))
    return Plan(
        op=templates.TEMPLATE_INSERT.name,
        changes=[Change(path=path, before=raw, after=changed.encode("utf-8"))],
        summary=f"inserted template {source} into {path}",
        warnings=warnings,
    )
