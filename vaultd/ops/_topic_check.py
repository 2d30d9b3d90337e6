"""The topic map's rules for writes: refuse a change that closes a new parent cycle (V11); in the
typed profile, topics that name maps of content (V13) and a ``## Topics`` list in step with them
(V14), with the possible-duplicate hint for a new note (V15) beside them.

A change adds parent edges when a note it writes names a parent it did not name before (through
the vault's parent keys, ``up`` and ``parent`` by default). An added edge ``u → v`` closes a
cycle when ``v`` already reaches ``u`` by parents, in the vault as the change leaves it; then the
write is refused, naming the cycle. A note that sits on a cycle the vault already has gets a
warning and the write goes on: old cycles are lint's (L16), never a block on unrelated work.

Parents are read lazily (only the notes the walk reaches), so the check costs a few lookups per
written note, whatever the vault's size. For an agent, a private note in a cycle is not named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.vaults import SchemaProfile
from vaultd.graph.topics import parents_of, reaches
from vaultd.policy.schema import NoteType, topic_names
from vaultd.tidy import sections
from vaultd.txn.plan import Action, Plan
from vaultd.vault import frontmatter
from vaultd.vault.layout import is_operation_log
from vaultd.vault.link_targets import LinkResolver, ResolutionStatus
from vaultd.vault.note import stem_of
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


# -- the typed profile's topics (V13, V14) and the duplicate hint (V15) ----------------------------

#: A new note's title this close to an existing one (rapidfuzz ratio, 0-100) gets the hint.
DUPLICATE_SCORE = 90.0


def topics_section_problem(text: str, data: dict[str, Any] | None) -> str | None:
    """What keeps a typed note's ``## Topics`` list from matching its frontmatter ``topics``, or None.

    The list names the same maps as ``topics`` (letter case aside) and is the note's last section;
    a note without topics needs no list, but a list without topics disagrees too.
    """
    names = topic_names((data or {}).get("topics"))
    found = sections.sections(text)
    section = next((s for s in found if s.title.casefold() == sections.TOPICS.casefold()), None)
    if section is None:
        return f"topics names {len(names)} map(s) but the body has no '## Topics' list" if names else None
    listed = sections.links_in(sections.lines_of(text)[section.start + 1 : section.end])
    if {n.casefold() for n in listed} != {n.casefold() for n in names}:
        return "the '## Topics' list names other maps than the frontmatter topics"
    if found[-1] is not section:
        return "the '## Topics' list is not the note's last section"
    return None


def _type_of(ctx: OpContext, plan: Plan, path: str) -> Any:
    for change in plan.effective():
        if change.path == path and change.after is not None:
            return (frontmatter.parse(change.after.decode("utf-8", "replace")).data or {}).get("type")
    record = ctx.index.notes.get(path)
    return (record.frontmatter or {}).get("type") if record is not None else None


def _names_map(ctx: OpContext, plan: Plan, created: LinkResolver, deleted: set[str]) -> Callable[[str, str], bool]:
    def names_map(name: str, source: str) -> bool:
        res = ctx.index.resolver.resolve(name, source)
        path = res.path if res.status is ResolutionStatus.RESOLVED and res.path not in deleted else None
        if path is None:
            made = created.resolve(name, source)
            path = made.path if made.status is ResolutionStatus.RESOLVED else None
        return path is not None and _type_of(ctx, plan, path) == NoteType.MOC

    return names_map


def _duplicate_hint(ctx: OpContext, path: str, title: str) -> Issue | None:
    hint = ctx.index.suggester.suggest(title)
    if hint is None or hint[1] < DUPLICATE_SCORE:
        return None
    hidden = ctx.visibility.hidden
    same = sorted(p for p, r in ctx.index.notes.items() if r.title == hint[0] and p != path and not hidden(p))[:3]
    if not same:
        return None
    return Issue(
        code=IssueCode.V15,
        severity=Severity.WARNING,
        path=path,
        message=f"the title is close to that of {', '.join(same)}: a possible duplicate; extend that note if it holds the same idea",
    )


def typed_issues(ctx: OpContext, plan: Plan) -> tuple[list[Issue], list[Issue]]:
    """(errors, warnings) of the typed profile's topics and names for every note the plan writes:
    V13 for a topic naming no map, V14 for a ``## Topics`` list out of step, each an error when the
    write introduces it (or creates the note) and a warning when the note had it already; and V15,
    a warning only, for a new note whose title is close to an existing one's."""
    if ctx.entry.schema is not SchemaProfile.TYPED:
        return [], []
    made = [c.path for c in plan.effective() if c.action == Action.CREATE]
    deleted = {c.path for c in plan.effective() if c.action == Action.DELETE}
    names_map = _names_map(ctx, plan, LinkResolver(made), deleted)
    errors: list[Issue] = []
    warnings: list[Issue] = []
    # A move carries the note's old problems along; an undo puts back bytes the note held before.
    debt_only = (len(deleted) == 1 and len(made) == 1) or plan.op == "op.undo"
    for change in plan.effective():
        if change.after is None or not is_note_path(change.path) or change.path.startswith(".trash/"):
            continue
        after = change.after.decode("utf-8", "replace")
        if is_operation_log(change.after):
            continue
        data = frontmatter.parse(after).data
        before = change.before.decode("utf-8", "replace") if change.before is not None else None
        old = frontmatter.parse(before).data if before is not None else None
        old_names = {n.casefold() for n in topic_names((old or {}).get("topics"))}
        for name in topic_names((data or {}).get("topics")):
            if names_map(name, change.path):
                continue
            issue = Issue(code=IssueCode.V13, path=change.path, message=f"topics: [[{name}]] names no map of content (a note of type moc)")
            if debt_only or name.casefold() in old_names:
                warnings.append(msgspec.structs.replace(issue, severity=Severity.WARNING))
            else:
                errors.append(issue)
        problem = topics_section_problem(after, data)
        if problem is not None:
            issue = Issue(code=IssueCode.V14, path=change.path, message=problem)
            was = topics_section_problem(before, old) if before is not None else None
            if debt_only or (before is not None and was == problem):
                warnings.append(msgspec.structs.replace(issue, severity=Severity.WARNING))
            else:
                errors.append(issue)
        if change.action == Action.CREATE and not debt_only:
            h1 = next((line[2:].strip() for line in after.splitlines() if line.startswith("# ")), None)
            title = (data or {}).get("title") if isinstance((data or {}).get("title"), str) else None
            if (hint := _duplicate_hint(ctx, change.path, title or h1 or stem_of(change.path))) is not None:
                warnings.append(hint)
    return errors, warnings
