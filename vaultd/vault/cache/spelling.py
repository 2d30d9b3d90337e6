"""Did you mean: when a query finds nothing, the same query with its unknown words (and tags)
replaced by the closest ones the vault has.

A word is unknown when one of its tokens is in no note (the word table's vocabulary, read
through an ``fts5vocab`` view); its replacement is the indexed term nearest to it by edit
ratio (rapidfuzz, at least :data:`MIN_SCORE`), among terms that start with the same letter and
are about as long, the most common first on a tie. A ``tag:`` that no note has gets the nearest
tag. CJK text and words under a NOT are left as they are. The caller decides whether to show the
suggestion: only when it finds notes the caller may see.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from vaultd.vault import fts_query, search_syntax
from vaultd.vault.cache.records import normalize_tag
from vaultd.vault.search_syntax import All, Any, Node, Not, Tag, Text

if TYPE_CHECKING:
    from vaultd.vault.cache.connections import Reader

MIN_SCORE: Final = 75.0  #: "alpah" finds "alpha" (80), "serch" finds "search" (91)
MAX_LENGTH_GAP: Final = 2  #: a candidate is at most this many characters longer or shorter
MAX_CANDIDATES: Final = 50_000  #: terms read per word at most (one first letter of a huge vault)


def _known(reader: Reader, table: str, token: str) -> bool:
    return reader.con.execute(f"SELECT 1 FROM {table} WHERE term = ?", (token,)).fetchone() is not None


def closest_term(reader: Reader, token: str) -> str | None:
    """The indexed term nearest to an unknown ``token``, or None (known, or nothing near)."""
    from rapidfuzz import fuzz, process  # loaded with the first search that misses

    table = reader.vocab()
    if not token or _known(reader, table, token):
        return None
    first = token[0]
    after = chr(ord(first) + 1) if ord(first) < 0x10FFFF else first + "\U0010ffff"  # the terms starting with ``first``
    rows = reader.con.execute(
        f"SELECT term, doc FROM {table} WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ? LIMIT ?",
        (first, after, len(token) - MAX_LENGTH_GAP, len(token) + MAX_LENGTH_GAP, MAX_CANDIDATES),
    ).fetchall()
    docs: dict[str, int] = {str(term): doc for term, doc in rows if isinstance(doc, int)}
    best = process.extract(token, list(docs), scorer=fuzz.ratio, score_cutoff=MIN_SCORE, limit=5)
    if not best:
        return None
    return str(max(best, key=lambda b: (b[1], docs[b[0]], b[0]))[0])


def closest_tag(reader: Reader, tag: str) -> str | None:
    """The vault's tag nearest to ``tag`` when no note has ``tag``, else None."""
    from rapidfuzz import fuzz, process  # loaded with the first search that misses

    key = normalize_tag(tag)
    if not key or reader.con.execute("SELECT 1 FROM tag WHERE tag = ? LIMIT 1", (key,)).fetchone() is not None:
        return None
    tags = [t for (t,) in reader.con.execute("SELECT DISTINCT tag FROM tag LIMIT ?", (MAX_CANDIDATES,))]
    best = process.extractOne(key, tags, scorer=fuzz.ratio, score_cutoff=MIN_SCORE)
    return None if best is None else str(best[0])


def _fix_text(reader: Reader, node: Text) -> Text:
    text = node.text
    for piece, is_cjk in fts_query.pieces(node.text):
        if is_cjk:
            continue
        for token in reader.tokenize(piece):
            better = closest_term(reader, token)
            if better is None:
                continue
            fixed = re.sub(re.escape(token), better, text, flags=re.IGNORECASE)
            # a token is the word folded (case, diacritics); when it is not in the text as typed,
            # the word is replaced whole
            text = fixed if fixed != text else text.replace(piece, better)
    return replace(node, text=text)


def _fix(reader: Reader, node: Node) -> Node:
    if isinstance(node, Text):
        return _fix_text(reader, node)
    if isinstance(node, Tag):
        better = closest_tag(reader, node.name)
        return node if better is None else Tag("#" + better)
    if isinstance(node, Not):
        return node  # a word to leave out: whether the vault has it changes nothing found
    if isinstance(node, All):
        return All(tuple(_fix(reader, c) for c in node.children))
    if isinstance(node, Any):
        return Any(tuple(_fix(reader, c) for c in node.children))
    return node


def suggest(reader: Reader, query: str) -> str | None:
    """The corrected query, or None when no word or tag of it needs (or has) a correction."""
    parsed = search_syntax.parse(query)
    if parsed is None:
        return None
    fixed = _fix(reader, parsed)
    return None if fixed == parsed else search_syntax.render(fixed)
