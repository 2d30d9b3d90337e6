"""The search query language, parsed into a small tree; nothing here knows FTS5 or SQL.

What a person types, as in Obsidian's search box:

- ``alpha beta``: notes holding both words (AND is implied; ``AND`` may be written);
- ``"exact phrase"``: the words next to each other, in order (an unclosed quote runs to the end);
- ``alpha OR beta``: either; OR binds looser than AND, so ``a b OR c`` is ``(a b) OR c``;
- ``-draft`` or ``NOT draft``: notes without it (a word, a phrase, a filter or a group);
- ``( ... )``: grouping;
- ``tag:#project`` (or ``tag:project``): notes with the tag or a tag nested below it;
- ``path:projects/alpha/`` (or without the slash): notes in that folder or below it;
  ``tag:"a b"`` and ``path:"My Folder/"`` quote a value with spaces.

``OR``, ``AND`` and ``NOT`` are operators only in capitals; anything else is text, matched
literally (``x-ray``, ``C++``, ``title:x``). A query is parsed whatever it holds, never raising:
an operator with nothing to apply to, an unmatched parenthesis or an empty group is dropped.
At most :data:`MAX_LEAVES` words, phrases and filters are kept, and groups nest at most
:data:`MAX_DEPTH` deep (a deeper parenthesis is read as grouping nothing).
"""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass
from typing import Final

from vaultd.vault.fts_query import MAX_QUERY_CHARS
from vaultd.vault.fts_query import MAX_TERMS as MAX_LEAVES

MAX_DEPTH: Final = 8


@dataclass(frozen=True, slots=True)
class Text:
    """A word, or a quoted phrase, to find in a note's title, description or body."""

    text: str
    phrase: bool = False


@dataclass(frozen=True, slots=True)
class Tag:
    name: str  #: as typed, without the ``tag:`` prefix (``#a/b`` or ``a/b``)


@dataclass(frozen=True, slots=True)
class Folder:
    path: str  #: as typed, without the ``path:`` prefix


@dataclass(frozen=True, slots=True)
class Not:
    child: Node


@dataclass(frozen=True, slots=True)
class All:
    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Any:
    children: tuple[Node, ...]


Node = Text | Tag | Folder | Not | All | Any


class _Kind(enum.Enum):
    WORD = "word"
    PHRASE = "phrase"
    TAG = "tag"
    FOLDER = "folder"
    OR = "or"
    AND = "and"
    NOT = "not"
    OPEN = "open"
    CLOSE = "close"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: _Kind
    text: str = ""
    negated: bool = False


_OPERATORS: Final = {"OR": _Kind.OR, "AND": _Kind.AND, "NOT": _Kind.NOT}
_FILTERS: Final = {"tag:": _Kind.TAG, "path:": _Kind.FOLDER}


def clean(query: str) -> str:
    """The query as parsed: bounded, NFC, without NUL or lone surrogates (SQLite carries neither)."""
    text = query[:MAX_QUERY_CHARS].encode("utf-8", "ignore").decode("utf-8")
    return unicodedata.normalize("NFC", text.replace("\x00", " "))


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The text after the quote at ``i`` up to the next quote (or the end), and where it ends."""
    end = text.find('"', i + 1)
    return (text[i + 1 :], len(text)) if end < 0 else (text[i + 1 : end], end + 1)


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        negated = text[i] == "-" and i + 1 < n and not text[i + 1].isspace()
        if negated:
            i += 1
        c = text[i]
        if c == "(":
            out.append(_Token(_Kind.OPEN, negated=negated))
            i += 1
        elif c == ")":
            out.append(_Token(_Kind.CLOSE))
            i += 1
        elif c == '"':
            value, i = _quoted(text, i)
            out.append(_Token(_Kind.PHRASE, value, negated))
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in '")':
                i += 1
            word = text[start:i]
            kind = next((k for prefix, k in _FILTERS.items() if word.lower().startswith(prefix)), None)
            if kind is not None:
                value = word.partition(":")[2]
                if not value and i < n and text[i] == '"':
                    value, i = _quoted(text, i)
                out.append(_Token(kind, value, negated) if value.strip() else _Token(_Kind.WORD, word, negated))
            elif word in _OPERATORS and not negated:
                out.append(_Token(_OPERATORS[word]))
            else:
                out.append(_Token(_Kind.WORD, word, negated))
    return out


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.leaves = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def any_of(self, depth: int) -> Node | None:
        parts = [self.all_of(depth)]
        while (tok := self.peek()) is not None and tok.kind is _Kind.OR:
            self.at += 1
            parts.append(self.all_of(depth))
        kept = tuple(p for p in parts if p is not None)
        return None if not kept else kept[0] if len(kept) == 1 else Any(kept)

    def all_of(self, depth: int) -> Node | None:
        parts: list[Node] = []
        while (tok := self.peek()) is not None and tok.kind not in (_Kind.OR, _Kind.CLOSE):
            if tok.kind is _Kind.AND:
                self.at += 1
                continue
            node = self.unary(depth)
            if node is not None:
                parts.append(node)
        return None if not parts else parts[0] if len(parts) == 1 else All(tuple(parts))

    def unary(self, depth: int) -> Node | None:
        tok = self.tokens[self.at]
        self.at += 1
        if tok.kind is _Kind.NOT:
            if self.peek() is None or self.peek().kind in (_Kind.OR, _Kind.CLOSE):  # type: ignore[union-attr]
                return None
            child = self.unary(depth)
            return None if child is None else child.child if isinstance(child, Not) else Not(child)
        if tok.kind is _Kind.OPEN:
            node = self.any_of(depth + 1) if depth < MAX_DEPTH else None
            if (close := self.peek()) is not None and close.kind is _Kind.CLOSE:
                self.at += 1
            if node is None or not tok.negated:
                return node
            return node.child if isinstance(node, Not) else Not(node)
        if self.leaves >= MAX_LEAVES:
            return None
        self.leaves += 1
        leaf: Node
        if tok.kind is _Kind.TAG:
            leaf = Tag(tok.text)
        elif tok.kind is _Kind.FOLDER:
            leaf = Folder(tok.text)
        else:
            leaf = Text(tok.text, phrase=tok.kind is _Kind.PHRASE)
        return Not(leaf) if tok.negated else leaf

    def parse(self) -> Node | None:
        parts = []
        while self.at < len(self.tokens):
            node = self.any_of(0)
            if node is not None:
                parts.append(node)
            if self.peek() is not None:  # an unmatched ')' at the top: dropped
                self.at += 1
        return None if not parts else parts[0] if len(parts) == 1 else All(tuple(parts))


def parse(query: str) -> Node | None:
    """The query's tree, or None when it holds nothing to search for."""
    return _Parser(_tokens(clean(query))).parse()


def _quote_if_needed(value: str) -> str:
    return f'"{value}"' if any(c.isspace() or c in '"()' for c in value) else value


def render(node: Node) -> str:
    """The query text that parses to ``node`` (to show a corrected query)."""
    if isinstance(node, Text):
        return f'"{node.text}"' if node.phrase else node.text
    if isinstance(node, Tag):
        return "tag:" + _quote_if_needed(node.name)
    if isinstance(node, Folder):
        return "path:" + _quote_if_needed(node.path)
    if isinstance(node, Not):
        inner = render(node.child)
        return "-" + (f"({inner})" if isinstance(node.child, (All, Any)) else inner)
    if isinstance(node, All):
        return " ".join(f"({render(c)})" if isinstance(c, Any) else render(c) for c in node.children)
    return " OR ".join(render(c) for c in node.children)
