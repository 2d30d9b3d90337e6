"""note.create: a new note at a path the vault does not have yet (by any case or normalization)."""

from __future__ import annotations

from protocol.errors import Issue
from protocol.methods.writes import CreateParams
from vaultd.errors import InvalidParams, ValidationFailed
from vaultd.ops.context import OpContext
from vaultd.txn.plan import Change, Plan
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.note import stem_of


def note_path(raw: str) -> str:
    path = raw.strip().strip("/")
    if not path:
        raise InvalidParams("the path is empty")
    return path if path.lower().endswith(".md") else path + ".md"


def plan_create(ctx: OpContext, params: CreateParams) -> Plan:
    path = note_path(params.path)
    if path in ctx.index.notes or ctx.read(path) is not None:
        raise ValidationFailed(f"{path} already exists; use note.patch or note.append to change it",
                               issues=[Issue(code="V08", message="the note already exists", path=path)])
    title = params.title or stem_of(path)
    body = params.body if params.body is not None else f"# {title}\n"
    fields = dict(params.frontmatter)
    if params.title is not None:
        fields.setdefault("title", params.title)
    fields.setdefault("created", ctx.today)
    fields["updated"] = ctx.today
    text = emit(body, fields)
    return Plan(op="note.create", changes=[Change(path=path, before=None, after=text.encode("utf-8"))],
                summary=f"created {path}", log_type="EXTRACT")
