"""The topic map's rule for writes: refuse a change that closes a new parent cycle (V11).

A change adds parent edges when a note it writes names a parent it did not name before (through
the vault's parent keys, ``up`` and ``parent`` by default). An added edge ``u → v`` closes a
cycle when ``v`` already reaches ``u`` by parents, in the vault as the change leaves it; then the
write is refused, naming the cycle. A note that sits on a cycle the vault already has gets a
warning and the write goes on: old cycles are lint's (L16), never a block on unrelated work.

Parents are read lazily (only the notes the walk reaches), so the check costs a few lookups per
written note, whatever the vault's size. For an agent, a private note in a cycle is not named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from vaultd.graph.topics import parents_of, reaches
from vaultd.txn.plan import Action, Plan
from vaultd.vault import frontmatter
from vaultd.vault.link_targets import LinkResolver, ResolutionStatus
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.ops._context import OpContext

PRIVATE = "(a private note)"


def _after_parents(ctx: OpContext, plan: Plan) -> dict[str, list[str]]:
    """The parents of every note the plan writes, in the vault as the plan leaves it."""
    keys = tuple(ctx.entry.parent_keys)
    created = LinkResolver(c.path for c in plan.effective() if c.action == Action.CREATE)
    deleted = {c.path for c in plan.effective() if c.action == Action.DELETE}

    def resolve(target: str, source: str) -> tuple[ResolutionStatus, str | None]:
        res = ctx.index.resolver.resolve(target, source)
        if res.status is ResolutionStatus.RESOLVED and res.path not in deleted:
            return res.status, res.path
        made = created.resolve(target, source)
        return made.status, made.path

    written: dict[str, list[str]] = {}
    for change in plan.effective():
        if change.after is None or not is_note_path(change.path) or change.path.startswith(".trash/"):
            continue
        if not any(k.encode() in change.after for k in keys):
            written[change.path] = []
            continue
        fm = frontmatter.parse(change.after.decode("utf-8", "replace"))
        written[change.path], _ = parents_of(change.path, fm.data, keys, resolve)
    return written


def topic_issues(ctx: OpContext, plan: Plan) -> tuple[list[Issue], list[Issue]]:
    """(errors, warnings): V11 for each cycle the plan closes, a warning per old cycle it touches."""
    keys = tuple(ctx.entry.parent_keys)
    if not keys:
        return [], []
    after = _after_parents(ctx, plan)
    if not any(after.values()):
        return [], []
    deleted = {c.path for c in plan.effective() if c.action == Action.DELETE}
    memo: dict[str, list[str]] = {}

    def before(path: str) -> list[str]:
        if path not in memo:
            record = ctx.index.notes.get(path)
            memo[path] = (
                parents_of(path, record.frontmatter, keys, lambda t, s: _resolved(ctx, t, s))[0]
                if record is not None and record.frontmatter
                else []
            )
        return memo[path]

    def now(path: str) -> list[str]:
        if path in after:
            return after[path]
        return [] if path in deleted else [p for p in before(path) if p not in deleted]

    # A move (one file removed, one created) renames a node of the map, not its edges.
    gone = [c.path for c in plan.effective() if c.action == Action.DELETE]
    made = [c.path for c in plan.effective() if c.action == Action.CREATE]
    moved_from = {made[0]: gone[0]} if len(gone) == 1 and len(made) == 1 else {}
    name = _namer(ctx)
    errors: list[Issue] = []
    warnings: list[Issue] = []
    for path, parents in sorted(after.items()):
        origin = moved_from.get(path, path)
        for parent in parents:
            chain = reaches(parent, path, now)
            if chain is None:
                continue
            shown = " → ".join(name(p) for p in [path, *chain])
            was = moved_from.get(parent, parent)
            if was in before(origin) and reaches(was, origin, before) is not None:
                warnings.append(
                    Issue(
                        code=IssueCode.V11,
                        severity=Severity.WARNING,
                        path=path,
                        message=f"already in a topic-map cycle: {shown}; lint reports it (L16)",
                    )
                )
                continue
            errors.append(
                Issue(code=IssueCode.V11, path=path, message=f"naming {name(parent)} as a parent closes a topic-map cycle: {shown}")
            )
    return errors, warnings


def _resolved(ctx: OpContext, target: str, source: str) -> tuple[ResolutionStatus, str | None]:
    res = ctx.index.resolver.resolve(target, source)
    return res.status, res.path


def _namer(ctx: OpContext) -> Callable[[str], str]:
    hidden = ctx.visibility.hidden
    return lambda p: PRIVATE if hidden(p) else p
