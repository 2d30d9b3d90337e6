"""The ledgers as the index holds them: claims with what their citations are worth, sources with
their drift, and the two vault-wide checks of ``source.evidence`` without a target.

Pure over a :class:`~vaultd.vault.index.VaultIndex` and a hasher the caller provides (the daemon
hashes raw copies through its descriptor-bound reader):

- :func:`drift_findings`: sources whose raw copy no longer holds the bytes captured (changed,
  or gone);
- :func:`unsupported_claims`: accepted claims whose support does not hold up (unsupported,
  under-supported for their risk, or citing something that is not a source).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from protocol.methods.sources import ClaimState, ClaimView, DriftState, SourceView, Verdict
from vaultd.sources.ledger import CLAIM, SOURCE, ClaimEntry, SourceEntry, ledger_kind, link_target
from vaultd.sources.rules import assess

if TYPE_CHECKING:
    import datetime as dt

    from vaultd.vault.index import VaultIndex

#: sha256 of the vault file at a path; None when it is missing, not a regular file, or unreadable.
Hasher = Callable[[str], str | None]


class Ledgers:
    """The source and claim notes of one index, with citations resolved as Obsidian resolves links."""

    def __init__(self, index: VaultIndex, today: dt.date, hasher: Hasher | None = None, visible: Callable[[str], bool] | None = None):
        self.index = index
        self.today = today
        self.hasher = hasher
        self.visible = visible or (lambda _p: True)
        self.sources: dict[str, SourceEntry] = {}
        self.claims: dict[str, ClaimEntry] = {}
        for path, record in index.notes.items():
            kind = ledger_kind(record.frontmatter)
            if kind is None or not self.visible(path):
                continue
            assert record.frontmatter is not None
            if kind == SOURCE:
                self.sources[path] = SourceEntry.read(path, record.title, record.frontmatter)
            elif kind == CLAIM:
                self.claims[path] = ClaimEntry.read(path, record.title, record.frontmatter)
        self._drift: dict[str, DriftState] = {}

    def resolve(self, target: str, source: str) -> str | None:
        path = self.index.resolver.resolve(target, source).path
        return path if path is not None and self.visible(path) else None

    def lookup_from(self, claim_path: str) -> Callable[[str], tuple[str | None, SourceEntry | None]]:
        def lookup(cited: str) -> tuple[str | None, SourceEntry | None]:
            target = link_target(cited)
            path = self.resolve(target, claim_path) if target else None
            return path, self.sources.get(path) if path else None

        return lookup

    def raw_path(self, source: SourceEntry) -> str | None:
        return self.index.resolver.resolve(source.raw, source.path).path if source.raw else None

    def drift(self, source: SourceEntry, *, verify: bool) -> DriftState:
        """Whether the raw copy still holds the captured bytes: by size from the index, and by hash
        when ``verify`` (and a hasher was given)."""
        if source.sha256 is None or source.raw is None:
            return DriftState.NONE
        known = self._drift.get(source.path)
        if known is not None and (known is not DriftState.UNCHECKED or not verify):
            return known
        raw = self.raw_path(source)
        stat = self.index.attachments.get(raw) if raw else None
        if raw is None or stat is None:
            state = DriftState.MISSING
        elif source.size is not None and stat.size != source.size:
            state = DriftState.CHANGED
        elif verify and self.hasher is not None:
            digest = self.hasher(raw)
            state = DriftState.MISSING if digest is None else DriftState.INTACT if digest == source.sha256 else DriftState.CHANGED
        else:
            state = DriftState.UNCHECKED
        self._drift[source.path] = state
        return state

    def drifted(self, source: SourceEntry, *, verify: bool) -> bool:
        return self.drift(source, verify=verify) in (DriftState.CHANGED, DriftState.MISSING)

    def claim_view(self, claim: ClaimEntry, *, verify: bool) -> ClaimView:
        found = assess(claim, self.lookup_from(claim.path), lambda s: self.drifted(s, verify=verify), self.today)
        return ClaimView(
            path=claim.path,
            claim=claim.claim,
            page=self.resolve(claim.page, claim.path) if claim.page else None,
            state=claim.state,
            confidence=claim.confidence,
            risk=claim.risk,
            assessment=claim.assessment,
            support=found.support,
            contradictions=found.contradictions,
            verdict=found.verdict,
            independent_lines=found.lines,
        )

    def source_view(self, source: SourceEntry, *, verify: bool) -> SourceView:
        return SourceView(
            path=source.path,
            title=source.title,
            kind=source.kind,
            state=source.state,
            review=source.review,
            authority=source.authority,
            independence=source.independence,
            origin=source.origin,
            sha256=source.sha256,
            size=source.size,
            media_type=source.media_type,
            captured=source.captured,
            raw=self.raw_path(source) or source.raw,
            synthetic=source.synthetic,
            pages=source.pages,
            drift=self.drift(source, verify=verify),
        )

    def claims_about(self, page: str) -> list[ClaimEntry]:
        """The claims whose page link resolves to ``page``, and the claims citing it if it is a source."""
        about = [c for c in self.claims.values() if c.page and self.resolve(c.page, c.path) == page]
        if page in self.claims:
            about.append(self.claims[page])
        if page in self.sources:
            lookup_hits = [
                c for c in self.claims.values() if any(self.lookup_from(c.path)(x)[0] == page for x in (*c.support, *c.contradictions))
            ]
            about += [c for c in lookup_hits if c not in about]
        return sorted(about, key=lambda c: c.path)


def drift_findings(book: Ledgers, *, verify: bool) -> list[SourceView]:
    """Sources whose raw copy changed or is gone since capture, by path (hashed when ``verify``)."""
    views = [book.source_view(s, verify=verify) for _, s in sorted(book.sources.items())]
    return [v for v in views if v.drift in (DriftState.CHANGED, DriftState.MISSING)]


def accepted_claims(book: Ledgers) -> list[ClaimEntry]:
    """The claims a person (or an approved verdict) accepted, by path."""
    return [c for _, c in sorted(book.claims.items()) if c.state == ClaimState.ACCEPTED.value]


def unsupported_claims(book: Ledgers, accepted: list[ClaimEntry], *, verify: bool) -> list[ClaimView]:
    """Those of the ``accepted`` claims whose support does not hold up today, in their order."""
    views = [book.claim_view(c, verify=verify) for c in accepted]
    return [v for v in views if v.verdict is not Verdict.SUPPORTED]
