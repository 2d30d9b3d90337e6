"""The ledger and identifier rules, applied by write validation to every note a plan writes.

Whatever method writes it (``claim.update``, ``note.set_frontmatter``, ``note.patch``, a merge),
a ledger note is judged as the plan leaves the vault: its citations resolve against the notes
and raw copies the plan creates or removes too. As everywhere in validation, a problem the note
already had warns and only a problem the write adds refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.methods.vaults import SchemaProfile
from vaultd.policy import new_issues_only
from vaultd.sources import references
from vaultd.sources.identifiers import citekey_key
from vaultd.sources.ledger import CLAIM, ClaimEntry, SourceEntry, field_issues, ledger_kind, link_target
from vaultd.sources.rules import assess, claim_issues
from vaultd.txn.plan import Action, Plan, sha256
from vaultd.vault import frontmatter
from vaultd.vault.link_targets import LinkResolver
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    import datetime as dt

    from protocol.errors import Issue
    from vaultd.ops._context import OpContext  # not the face: validation imports this module


class PlanView:
    """The vault as a plan leaves it, as far as the ledger rules look: link targets, ledger
    frontmatter and raw copies."""

    def __init__(self, ctx: OpContext, plan: Plan) -> None:
        self.ctx = ctx
        effective = plan.effective()
        self.deleted = {c.path for c in effective if c.action == Action.DELETE}
        self.after: dict[str, bytes] = {c.path: c.after for c in effective if c.after is not None}
        self.created = LinkResolver(c.path for c in effective if c.action == Action.CREATE)
        self._data: dict[str, dict[str, Any] | None] = {}
        self._citekeys: dict[str, set[str]] | None = None

    def resolve(self, target: str, source: str) -> str | None:
        found: set[str] = set()
        for resolver in (self.ctx.index.resolver, self.created):
            res = resolver.resolve(target, source)
            found |= {res.path} if res.path else set(res.candidates)
        found -= self.deleted
        return next(iter(found)) if len(found) == 1 else None

    def data(self, path: str) -> dict[str, Any] | None:
        if path not in self._data:
            if path in self.after:
                try:
                    self._data[path] = frontmatter.parse(self.after[path].decode("utf-8")).data if is_note_path(path) else None
                except UnicodeDecodeError:
                    self._data[path] = None
            else:
                record = self.ctx.index.notes.get(path)
                self._data[path] = record.frontmatter if record is not None else None
        return self._data[path]

    def source(self, path: str) -> SourceEntry | None:
        data = self.data(path)
        if ledger_kind(data) != "source" or data is None:
            return None
        record = self.ctx.index.notes.get(path)
        return SourceEntry.read(path, record.title if record else path, data)

    def drifted(self, source: SourceEntry) -> bool:
        """A raw copy missing, or not of the recorded size (hashing waits for lint and the evidence view),
        or, when this plan writes it, not of the recorded hash."""
        if source.raw is None or source.sha256 is None:
            return False
        raw = self.resolve(source.raw, source.path)
        if raw is None:
            return True
        if raw in self.after:
            return sha256(self.after[raw]) != source.sha256
        stat = self.ctx.index.attachments.get(raw)
        return stat is None or (source.size is not None and stat.size != source.size)

    def citekey_owners(self, key: str) -> set[str]:
        if self._citekeys is None:
            table = references.table(self.ctx.index)
            owners = {k: {p for p in v if p not in self.after and p not in self.deleted} for k, v in table.citekeys.items()}
            for path in self.after:
                data = self.data(path)
                if data and isinstance(value := data.get("citekey"), str) and value.strip():
                    owners.setdefault(citekey_key(value), set()).add(path)
            self._citekeys = owners
        return self._citekeys.get(key, set())


def _issues(view: PlanView, path: str, data: dict[str, Any] | None, today: dt.date) -> list[Issue]:
    if not data:
        return []
    issues: list[Issue] = []
    if ledger_kind(data) is not None or "ledger" in data:
        issues += field_issues(data, path)
        if ledger_kind(data) == CLAIM and not issues:
            claim = ClaimEntry.read(path, path, data)

            def lookup(cited: str) -> tuple[str | None, SourceEntry | None]:
                target = link_target(cited)
                found = view.resolve(target, path) if target else None
                return found, view.source(found) if found else None

            issues += claim_issues(claim, assess(claim, lookup, view.drifted, today))
    if any(k in data for k in references.IDENTIFIER_KEYS):
        key = data.get("citekey")
        others: set[str] = view.citekey_owners(citekey_key(key)) if isinstance(key, str) and key.strip() else set()
        issues += references.identifier_issues(data, path, others, syntax=view.ctx.entry.schema is SchemaProfile.OPEN)
    return issues


def ledger_issues(
    view: PlanView, path: str, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> tuple[list[Issue], list[Issue]]:
    """(errors, warnings) of the ledger and identifier rules for one note the plan writes."""
    today = view.ctx.now.date()
    found = _issues(view, path, after, today)
    if not found:
        return [], []
    return new_issues_only(_issues(view, path, before, today), found)
