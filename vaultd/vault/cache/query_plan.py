"""From a parsed query (:mod:`vaultd.vault.search_syntax`) to what the cache runs.

Injection safety is by construction: the only user text that reaches FTS5 is inside quoted
strings (``"..."``, a ``"`` doubled), built by :mod:`vaultd.vault.fts_query`; every operator,
parenthesis and ``*`` in a MATCH expression is ours; tags and folders reach SQL only as bound
parameters. Each word is cut into its CJK runs (the bigram table) and the rest (the word table)
as before; a quoted phrase with any non-CJK text is one phrase of the word table.

Three ways to run a query, the cheapest that can express it:

- ``CONJUNCTION`` (words and phrases, all required: the common case): one MATCH on the word
  table, one on the bigram table for CJK terms, ranked by bm25;
- ``EXPRESSION`` (OR, NOT and groups over non-CJK text, each NOT beside something positive): the
  whole query as one FTS5 expression, ranked by bm25;
- ``GENERAL`` (anything else: CJK terms under OR or NOT, filters inside groups, a query of only
  negations or only filters): a SQL condition over the notes, each text leaf a MATCH subquery,
  ranked by bm25 of its positive words (notes matching by other branches after them, by path).

Top-level ``tag:`` and ``path:`` filters (positive, ANDed with the rest) join the type, domain,
tag and folder params as plain conditions in every mode.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from vaultd.vault import fts_query, search_syntax
from vaultd.vault.cache.records import normalize_folder, normalize_tag
from vaultd.vault.search_syntax import All, Folder, Not, Tag, Text


class Table(enum.StrEnum):
    FTS = "fts"  #: words (unicode61)
    CJK = "cjk"  #: CJK bigrams


@dataclass(frozen=True, slots=True)
class Leaf:
    table: Table
    match: str  #: one FTS5 atom: a quoted string, ``*`` after it for a single CJK character
    shown: str  #: the text it came from, NFC (for marking CJK terms in snippets)


@dataclass(frozen=True, slots=True)
class TagIs:
    tag: str  #: normalized (see ``normalize_tag``)


@dataclass(frozen=True, slots=True)
class FolderIs:
    folder: str  #: normalized (see ``normalize_folder``)


@dataclass(frozen=True, slots=True)
class Neg:
    child: Compiled


@dataclass(frozen=True, slots=True)
class Both:
    children: tuple[Compiled, ...]


@dataclass(frozen=True, slots=True)
class Either:
    children: tuple[Compiled, ...]


Compiled = Leaf | TagIs | FolderIs | Neg | Both | Either
Filter = TagIs | FolderIs


class Mode(enum.Enum):
    EMPTY = "empty"  #: nothing searchable was given: no results
    CONJUNCTION = "conjunction"
    EXPRESSION = "expression"
    GENERAL = "general"


@dataclass(slots=True)
class QueryPlan:
    mode: Mode
    #: CONJUNCTION: the AND of word-table atoms; EXPRESSION: the whole expression; GENERAL: the
    #: OR of the positive word-table atoms, to rank by (None when there are none)
    main: str | None = None
    #: CONJUNCTION: the AND of bigram atoms; GENERAL: the OR of positive bigram atoms, to rank by
    #: when there is no ``main``
    cjk: str | None = None
    where: str | None = None  #: GENERAL: the condition on ``note`` (bound with ``params``)
    params: list[object] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)  #: top-level positive tag and folder filters
    cjk_terms: tuple[str, ...] = ()  #: positive CJK terms, marked in snippets
    words: tuple[str, ...] = ()  #: positive non-CJK words and phrases as typed (for suggestions)


def _text(node: Text, tokenize: fts_query.Tokenize) -> Compiled | None:
    """A word: its CJK runs and the rest, all required; a phrase: one word-table phrase."""
    if node.phrase and tokenize(fts_query.CJK_RUN.sub(" ", node.text)):
        return Leaf(Table.FTS, fts_query.quote(fts_query.prepare(node.text)[0]), node.text)
    leaves: list[Compiled] = []
    for piece, is_cjk in fts_query.pieces(node.text):
        if is_cjk:
            leaves.append(Leaf(Table.CJK, fts_query.cjk_phrase(piece), piece))
        elif not node.phrase and tokenize(piece):
            leaves.append(Leaf(Table.FTS, fts_query.quote(piece), piece))
    return None if not leaves else leaves[0] if len(leaves) == 1 else Both(tuple(leaves))


def compile_node(node: search_syntax.Node, tokenize: fts_query.Tokenize) -> Compiled | None:
    """The compiled form of ``node``; None for what holds nothing searchable (dropped)."""
    if isinstance(node, Text):
        return _text(node, tokenize)
    if isinstance(node, Tag):
        tag = normalize_tag(node.name)
        return TagIs(tag) if tag else None
    if isinstance(node, Folder):
        folder = normalize_folder(node.path)
        return FolderIs(folder) if folder else None
    if isinstance(node, Not):
        child = compile_node(node.child, tokenize)
        return None if child is None else child.child if isinstance(child, Neg) else Neg(child)
    kept = tuple(c for c in (compile_node(n, tokenize) for n in node.children) if c is not None)
    if not kept:
        return None
    if len(kept) == 1:
        return kept[0]
    return Both(kept) if isinstance(node, All) else Either(kept)


def _conjuncts(node: Compiled) -> list[Compiled]:
    if isinstance(node, Both):
        return [leaf for child in node.children for leaf in _conjuncts(child)]
    return [node]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


class _Inexpressible(Exception):
    """The node needs the GENERAL mode."""


def fts_expression(node: Compiled) -> str:
    """``node`` as one FTS5 expression on the word table; raises _Inexpressible when it cannot be
    (a CJK leaf, a filter, or a NOT with nothing positive beside it)."""
    if isinstance(node, Leaf):
        if node.table is not Table.FTS:
            raise _Inexpressible
        return node.match
    if isinstance(node, Both):
        positive = [fts_expression(c) for c in node.children if not isinstance(c, Neg)]
        negative = [fts_expression(c.child) for c in node.children if isinstance(c, Neg)]
        if not positive:
            raise _Inexpressible
        expr = " AND ".join(f"({p})" for p in positive)
        for n in negative:
            expr = f"({expr}) NOT ({n})"
        return expr
    if isinstance(node, Either):
        return " OR ".join(f"({fts_expression(c)})" for c in node.children)
    raise _Inexpressible


def _sql(node: Compiled, params: list[object]) -> str:
    if isinstance(node, Leaf):
        params.append(node.match)
        return f"note.id IN (SELECT rowid FROM {node.table} WHERE {node.table} MATCH ?)"
    if isinstance(node, TagIs):
        params.append(node.tag)
        return "note.id IN (SELECT id FROM tag WHERE tag = ?)"
    if isinstance(node, FolderIs):
        params += [node.folder, node.folder + "/", node.folder + "0"]  # "0" sorts right after "/"
        return "(note.folder = ? OR (note.folder >= ? AND note.folder < ?))"
    if isinstance(node, Neg):
        return f"NOT ({_sql(node.child, params)})"
    joiner = " AND " if isinstance(node, Both) else " OR "
    return "(" + joiner.join(_sql(c, params) for c in node.children) + ")"


def _positive_leaves(node: Compiled) -> list[Leaf]:
    if isinstance(node, Leaf):
        return [node]
    if isinstance(node, (Both, Either)):
        return [leaf for child in node.children for leaf in _positive_leaves(child)]
    return []  # under a NOT, or a filter


def plan(query: str, tokenize: fts_query.Tokenize) -> QueryPlan:
    """The plan for ``query``; never raises, whatever it holds."""
    parsed = search_syntax.parse(query)
    compiled = compile_node(parsed, tokenize) if parsed is not None else None
    if compiled is None:
        return QueryPlan(Mode.EMPTY)
    parts = _conjuncts(compiled)
    filters: list[Filter] = [p for p in parts if isinstance(p, (TagIs, FolderIs))]
    rest = [p for p in parts if not isinstance(p, (TagIs, FolderIs))]
    positive = _positive_leaves(Both(tuple(rest))) if rest else []
    out = QueryPlan(
        Mode.GENERAL,
        filters=filters,
        cjk_terms=tuple(_unique([leaf.shown for leaf in positive if leaf.table is Table.CJK])),
        words=tuple(_unique([leaf.shown for leaf in positive if leaf.table is Table.FTS])),
    )
    if rest and all(isinstance(p, Leaf) for p in rest):
        out.mode = Mode.CONJUNCTION
        out.main = " AND ".join(_unique([p.match for p in positive if p.table is Table.FTS])) or None
        out.cjk = " AND ".join(_unique([p.match for p in positive if p.table is Table.CJK])) or None
        return out
    if rest:
        try:
            out.main = fts_expression(rest[0] if len(rest) == 1 else Both(tuple(rest)))
        except _Inexpressible:
            pass
        else:
            out.mode = Mode.EXPRESSION
            return out
        out.where = _sql(Both(tuple(rest)) if len(rest) > 1 else rest[0], out.params)
    out.main = " OR ".join(_unique([p.match for p in positive if p.table is Table.FTS])) or None
    out.cjk = None if out.main else " OR ".join(_unique([p.match for p in positive if p.table is Table.CJK])) or None
    return out
