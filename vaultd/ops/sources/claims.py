"""claim.add and claim.update: claim notes written through the ordinary write path.

A citation is written as a link by path when it names a note (so two notes with one name never
make it ambiguous) and as written otherwise; validation then refuses a citation naming no source
note (V23), an accepted claim without current support (V21) and an accepted high-risk claim with
fewer than two independent lines (V22), whichever method the write came through.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from protocol.methods.sources import ClaimAddParams, ClaimDetail, ClaimUpdateParams
from protocol.methods.writes import LogType
from vaultd.errors import InvalidParams, NotFound, ValidationFailed
from vaultd.ops import updated_key
from vaultd.ops.create import existing_twin, new_note_path
from vaultd.sources.ledger import CLAIM, ledger_kind, link_target, slug
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    from vaultd.ops import OpContext

MAX_TITLE_CHARS = 200


def citation(ctx: OpContext, target: str) -> str:
    """``[[path]]`` for a note the target names; ``[[target]]`` as given when it names none (the
    ledger rules then refuse it as an invented citation)."""
    bare = link_target(target) or target
    try:
        path = ctx.find(bare)
    except NotFound:
        return f"[[{bare}]]"
    return f"[[{path[:-3] if path.lower().endswith('.md') else path}]]"


def _claim_path(ctx: OpContext, params: ClaimAddParams) -> str:
    """Where the new claim note goes: the path asked for, else a free name from the claim's text in
    the claims folder.

    Raises:
        ValidationFailed: VALIDATION, the path asked for is taken, or no free name is left.
    """
    if params.path is not None:
        path = new_note_path(ctx, params.path)
        if existing_twin(ctx, path) is not None:
            raise ValidationFailed(f"{path} already exists; choose another path for the claim")
        return path
    folder = ctx.entry.sources_settings().claims
    base = posixpath.join(folder, slug(params.claim)[:60])
    for candidate in (f"{base}.md", *(f"{base}-{i}.md" for i in range(2, 1000))):
        path = new_note_path(ctx, candidate)
        if existing_twin(ctx, path) is None:
            return path
    raise ValidationFailed(f"no free note name for the claim in {folder}")


def plan_claim_add(ctx: OpContext, params: ClaimAddParams) -> Plan:
    page_path = ctx.find(params.page)
    path = _claim_path(ctx, params)
    page = ctx.property_link(page_path, path)
    title = params.claim if len(params.claim) <= MAX_TITLE_CHARS else params.claim[: MAX_TITLE_CHARS - 1] + "…"
    fields: dict[str, Any] = {
        "ledger": CLAIM,
        "type": "insight",
        "title": title,
        "description": f"A claim about {page[2:-2]}",
        "claim": params.claim,
        "page": page,
        "state": params.state.value,
        "risk": params.risk.value,
        "support": list(dict.fromkeys(citation(ctx, t) for t in params.support)),
        "contradictions": list(dict.fromkeys(citation(ctx, t) for t in params.contradictions)),
        "created": ctx.today,
    }
    if params.confidence is not None:
        fields["confidence"] = params.confidence.value
    if params.assessment is not None:
        fields["assessment"] = params.assessment
    if ctx.entry.stamp_keys:
        fields.setdefault(ctx.entry.stamp_keys[0], ctx.today)
    body = f"# {title}\n\nA claim about {ctx.link(page_path, path)}.\n"
    return Plan(
        op="claim.add",
        changes=[Change(path=path, before=None, after=emit(body, fields).encode("utf-8"))],
        summary=f"recorded claim {path} ({params.state.value})",
        log_type=LogType.EXTRACT.value,
        detail=ClaimDetail(claim=path),
    )


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def plan_claim_update(ctx: OpContext, params: ClaimUpdateParams) -> Plan:
    """Plan a change to a claim note's ledger fields (state, confidence, risk, assessment, support,
    contradictions).

    Raises:
        InvalidParams: INVALID_PARAMS, nothing to change, or the note is not a claim.
    """
    asked = (params.state, params.confidence, params.risk, params.assessment)
    if all(v is None for v in asked) and not (params.add_support or params.remove_support or params.add_contradictions):
        raise InvalidParams("nothing to change: give a state, confidence, risk, assessment, or support to add or remove")
    path = ctx.find(params.target)
    raw, text = ctx.read_target(path)
    data = frontmatter.parse(text).data
    if ledger_kind(data) != CLAIM or data is None:
        raise InvalidParams(f"{path} is not a claim note (its frontmatter has no 'ledger: claim')")
    updates: dict[str, Any] = {}
    for key, value in (("state", params.state), ("confidence", params.confidence), ("risk", params.risk)):
        if value is not None and data.get(key) != value.value:
            updates[key] = value.value
    if params.assessment is not None and data.get("assessment") != params.assessment:
        updates["assessment"] = params.assessment
    support = _strings(data.get("support"))
    removed = {citation(ctx, t) for t in params.remove_support} | {f"[[{link_target(t) or t}]]" for t in params.remove_support}
    kept = [s for s in support if s not in removed and f"[[{link_target(s) or s}]]" not in removed]
    added = [c for c in dict.fromkeys(citation(ctx, t) for t in params.add_support) if c not in kept]
    if kept + added != support:
        updates["support"] = kept + added
    contradictions = _strings(data.get("contradictions"))
    more = [c for c in dict.fromkeys(citation(ctx, t) for t in params.add_contradictions) if c not in contradictions]
    if more:
        updates["contradictions"] = contradictions + more
    if not updates:
        return Plan(
            op="claim.update",
            changes=[Change(path=path, before=raw, after=raw)],
            summary=f"claim {path} unchanged",
            detail=ClaimDetail(claim=path),
        )
    stamp = updated_key(ctx.entry, {**data, **updates})
    if stamp is not None:
        updates[stamp] = ctx.today
    changed = emit(text, updates)
    return Plan(
        op="claim.update",
        changes=[Change(path=path, before=raw, after=changed.encode("utf-8"))],
        summary=f"updated claim {path} ({', '.join(k for k in updates if k != stamp)})",
        log_type=LogType.RETHINK.value,
        detail=ClaimDetail(claim=path),
    )


def claim_detail(ctx: OpContext, plan: Plan) -> ClaimDetail:
    detail = plan.detail
    return detail if isinstance(detail, ClaimDetail) else ClaimDetail(claim=plan.changes[0].path if plan.changes else "")
