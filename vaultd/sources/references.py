"""Reference notes by identifier: citekey uniqueness, and finding a note by DOI, citekey or arXiv id.

The table is built from the index's records (frontmatter is already parsed there) when first
asked for, so a vault that never uses identifiers never pays for it; after a change it catches up
by the paths the change touched (``VaultIndex.changed_since``), not by every note: a one-word
search asks for it, and a rebuild per change made freshness grow with the vault.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.sources.identifiers import arxiv_key, citekey_key, doi_key, valid_arxiv, valid_citekey, valid_doi

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vaultd.vault.index import VaultIndex
    from vaultd.vault.model import NoteRecord

IDENTIFIER_KEYS = ("doi", "arxiv_id", "citekey")
IDENTIFIER_SNIPPET = "matches the note's DOI, citekey or arXiv id"


def looks_like_identifier(query: str) -> bool:
    """One token that could be a DOI, a citekey or an arXiv id (with or without a prefix)."""
    q = query.strip()
    return 0 < len(q) <= 512 and not any(ch.isspace() for ch in q.removeprefix("doi: ").removeprefix("arXiv: "))


def in_folder(path: str, folder: str) -> bool:
    """Whether ``path`` lies below ``folder`` (given without slashes at its ends)."""
    return path.startswith(folder + "/") or path.rpartition("/")[0] == folder


def needs_record(type_: str | None, domain: str | None, tag: str | None) -> bool:
    """Whether the search filters read a note's record: the folder filter reads its path alone,
    and a record read from the index cache costs a read and a decode per candidate."""
    return type_ is not None or domain is not None or tag is not None


def matches_filters(record: NoteRecord, type_: str | None, domain: str | None, tag: str | None, folder: str | None) -> bool:
    """The search filters, applied to a note found by identifier (the FTS query applies them in SQL)."""
    fm = record.frontmatter or {}
    if type_ is not None and fm.get("type") != type_:
        return False
    if domain is not None and fm.get("domain") != domain:
        return False
    if folder is not None and not in_folder(record.path, folder):
        return False
    if tag is not None:
        wanted = tag.strip().lstrip("#").strip("/").lower()
        names = {t.name.strip().lstrip("#").strip("/").lower() for t in record.tags}
        return any(n == wanted or n.startswith(wanted + "/") for n in names)
    return True


@dataclass
class ReferenceTable:
    generation: int
    citekeys: dict[str, set[str]] = field(default_factory=dict)
    dois: dict[str, set[str]] = field(default_factory=dict)
    arxiv: dict[str, set[str]] = field(default_factory=dict)
    #: each listed note's keys, so a changed note leaves the table without a scan of it
    keys: dict[str, tuple[str | None, str | None, str | None]] = field(default_factory=dict)

    def add(self, path: str, data: dict[str, Any]) -> None:
        cite = citekey_key(key) if isinstance(key := data.get("citekey"), str) and key.strip() else None
        doi = doi_key(value) if isinstance(value := data.get("doi"), str) and value.strip() else None
        arxiv = arxiv_key(value) if isinstance(value := data.get("arxiv_id"), str) and value.strip() else None
        for table, k in ((self.citekeys, cite), (self.dois, doi), (self.arxiv, arxiv)):
            if k is not None:
                table.setdefault(k, set()).add(path)
        if cite or doi or arxiv:
            self.keys[path] = (cite, doi, arxiv)

    def remove(self, path: str) -> None:
        for table, k in zip((self.citekeys, self.dois, self.arxiv), self.keys.pop(path, (None, None, None)), strict=True):
            if k is not None and (holders := table.get(k)) is not None:
                holders.discard(path)
                if not holders:
                    del table[k]

    def copy(self, generation: int) -> ReferenceTable:
        """A table of its own to change: readers may be using this one on another thread."""

        def each(table: dict[str, set[str]]) -> dict[str, set[str]]:
            return {k: set(v) for k, v in table.items()}

        return ReferenceTable(generation, each(self.citekeys), each(self.dois), each(self.arxiv), dict(self.keys))

    def find(self, query: str) -> list[str]:
        """Notes whose DOI, citekey or arXiv id (without version) is exactly ``query``."""
        q = query.strip()
        if not q or len(q) > 512:
            return []
        found = self.dois.get(doi_key(q), set()) | self.citekeys.get(citekey_key(q), set()) | self.arxiv.get(arxiv_key(q), set())
        return sorted(found)


_tables: weakref.WeakKeyDictionary[VaultIndex, ReferenceTable] = weakref.WeakKeyDictionary()


def latest(index: VaultIndex) -> ReferenceTable | None:
    """The table last built for the index, current or not: for a reader that must not wait for a
    refresh or a rebuild holding the index (it answers as of the last change it saw)."""
    return _tables.get(index)


def table(index: VaultIndex) -> ReferenceTable:
    """The index's identifier table as of now: the last one caught up by what changed since, or
    built from every note when the index no longer knows what that was."""
    current = _tables.get(index)
    if current is not None and current.generation == index.generation:
        return current
    changed = index.changed_since(current.generation) if current is not None else None
    if current is not None and changed is not None:
        built = current.copy(index.generation)
        for path in changed:
            built.remove(path)
            _add_if_listed(built, path, index.notes.get(path))
    else:
        built = ReferenceTable(generation=index.generation)
        for path, record in index.notes.items():
            _add_if_listed(built, path, record)
    _tables[index] = built
    return built


def _add_if_listed(table: ReferenceTable, path: str, record: NoteRecord | None) -> None:
    fm = record.frontmatter if record is not None else None
    if fm and ("citekey" in fm or "doi" in fm or "arxiv_id" in fm):
        table.add(path, fm)


def normalized(fields: dict[str, Any]) -> dict[str, Any]:
    """Identifier values as they are stored: a DOI lowercase and without a resolver prefix."""
    if isinstance(doi := fields.get("doi"), str):
        return {**fields, "doi": doi_key(doi)}
    return fields


def identifier_issues(data: dict[str, Any], path: str, others: Iterable[str], *, syntax: bool) -> list[Issue]:
    """V24 for an identifier that is malformed (``syntax``: the typed schema reports its own) or a
    citekey another note already uses; ``others`` are the notes holding the same citekey."""
    issues: list[Issue] = []
    if syntax:
        if "doi" in data and not valid_doi(data["doi"]):
            issues.append(Issue(code=IssueCode.V24, path=path, message="doi: must be 10.<4-9 digit registrant>/<suffix without spaces>"))
        elif "doi" in data and data["doi"] != doi_key(data["doi"]):
            issues.append(Issue(code=IssueCode.V24, path=path, message="doi: is stored lowercase; write it in lowercase"))
        if "arxiv_id" in data and not valid_arxiv(data["arxiv_id"]):
            issues.append(
                Issue(
                    code=IssueCode.V24,
                    path=path,
                    message="arxiv_id: must be YYMM.NNNN (before 2015), YYMM.NNNNN or archive/YYMMNNN, optionally vN",
                )
            )
        if "citekey" in data and not valid_citekey(data["citekey"]):
            issues.append(Issue(code=IssueCode.V24, path=path, message="citekey: must be 1-64 of A-Z a-z 0-9 _ : -"))
    for other in sorted(set(others) - {path}):
        issues.append(Issue(code=IssueCode.V24, path=path, message=f"citekey: already used by {other!r} (ignoring case); choose another"))
    return issues
