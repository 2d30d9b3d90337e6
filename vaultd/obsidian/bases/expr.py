"""Bases' expression language: tokens, the syntax tree, a precedence parser and its printer.

An expression is untrusted text from a ``.base`` file, so the parser is bounded in length and in
nesting before it builds anything deep, and every error names the construct and where it stands
(line and column inside the expression). The printer writes a tree back as text that parses to
the same tree, which the property tests check.

Grammar, loosest binding first: ``||``; ``&&``; ``==`` ``!=``; ``<`` ``<=`` ``>`` ``>=``; ``+``
``-``; ``*`` ``/`` ``%``; prefix ``!`` and ``-``; then calls ``f(x)``, members ``a.b`` and
indexing ``a[i]``. Atoms: numbers, strings in single or double quotes, ``true``, ``false``,
``null``, lists ``[a, b]``, regular expressions ``/re/flags``, identifiers, parentheses.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPRESSION_CHARS",
    "Binary",
    "Call",
    "ExprError",
    "Ident",
    "Index",
    "ListLit",
    "Literal",
    "Member",
    "Node",
    "RegexLit",
    "Unary",
    "parse",
    "to_text",
]

MAX_EXPRESSION_CHARS: Final = 4096  #: one filter or formula; real ones fit on a line
MAX_DEPTH: Final = 64  #: nested parentheses, calls, lists and operators in one expression

_BINARY: Final = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}
_PREFIX_RANK: Final = 7
_POSTFIX_RANK: Final = 8
_PUNCT: Final = ("||", "&&", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "(", ")", "[", "]", ",", ".")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_KEYWORDS: Final = {"true": True, "false": False, "null": None}


class ExprError(ValueError):
    """An expression that cannot be read or run; ``column`` and ``line`` are 1-based positions in
    the expression's own text, ``construct`` names what was not accepted."""

    def __init__(self, message: str, text: str, offset: int, construct: str = "") -> None:
        self.offset = max(0, min(offset, len(text)))
        before = text[: self.offset]
        self.line = before.count("\n") + 1
        self.column = self.offset - (before.rfind("\n") + 1) + 1
        self.construct = construct
        self.reason = message
        super().__init__(f"{message} at line {self.line}, column {self.column}")


@dataclass(frozen=True, slots=True)
class Node:
    pos: int = field(default=0, compare=False, kw_only=True)  #: offset of the node's first character


@dataclass(frozen=True, slots=True)
class Literal(Node):
    value: None | bool | int | float | str = None


@dataclass(frozen=True, slots=True)
class RegexLit(Node):
    source: str = ""
    flags: str = ""


@dataclass(frozen=True, slots=True)
class ListLit(Node):
    items: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True)
class Ident(Node):
    name: str = ""


@dataclass(frozen=True, slots=True)
class Member(Node):
    target: Node = field(default_factory=Literal)
    name: str = ""


@dataclass(frozen=True, slots=True)
class Index(Node):
    target: Node = field(default_factory=Literal)
    key: Node = field(default_factory=Literal)


@dataclass(frozen=True, slots=True)
class Call(Node):
    callee: Node = field(default_factory=Literal)  #: an Ident (global function) or a Member (method)
    args: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str = "!"
    operand: Node = field(default_factory=Literal)


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str = "+"
    left: Node = field(default_factory=Literal)
    right: Node = field(default_factory=Literal)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  #: num, str, ident, regex, op, end
    text: str
    pos: int
    value: object = None


def _is_digit(text: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also takes superscripts, which ``int()`` refuses."""
    return bool(text) and all("0" <= c <= "9" for c in text)


def _is_ident_start(ch: str) -> bool:
    return ch.isalpha() or ch in "_$"


def _is_ident_part(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.last: _Token | None = None

    def error(self, message: str, at: int, construct: str = "") -> ExprError:
        return ExprError(message, self.text, at, construct)

    def next(self) -> _Token:
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos] in " \t\r\n":
            self.pos += 1
        start = self.pos
        if start >= n:
            token = _Token("end", "", start)
        else:
            ch = text[start]
            if _is_digit(ch) or (ch == "." and start + 1 < n and _is_digit(text[start + 1])):
                token = self._number(start)
            elif ch in "\"'":
                token = self._string(start, ch)
            elif _is_ident_start(ch):
                end = start + 1
                while end < n and _is_ident_part(text[end]):
                    end += 1
                self.pos = end
                token = _Token("ident", text[start:end], start)
            elif ch == "/" and self._regex_allowed():
                token = self._regex(start)
            else:
                for punct in _PUNCT:
                    if text.startswith(punct, start):
                        self.pos = start + len(punct)
                        token = _Token("op", punct, start)
                        break
                else:
                    if ch in "{}":
                        raise self.error("object literals are not supported", start, "object literal")
                    if ch == "=":
                        raise self.error("'=' is not an operator (compare with '==')", start, "=")
                    if ch in "?:":
                        raise self.error(f"the '{ch}' operator is not supported (use if())", start, ch)
                    raise self.error(f"unexpected character {ch!r}", start, ch)
        self.last = token
        return token

    def _regex_allowed(self) -> bool:
        last = self.last
        if last is None:
            return True
        return last.kind == "op" and last.text not in (")", "]")

    def _number(self, start: int) -> _Token:
        text, n, end = self.text, len(self.text), start
        while end < n and _is_digit(text[end]):
            end += 1
        if end < n and text[end] == "." and end + 1 < n and _is_digit(text[end + 1]):
            end += 1
            while end < n and _is_digit(text[end]):
                end += 1
        if end < n and text[end] in "eE":
            mark = end + 1
            if mark < n and text[mark] in "+-":
                mark += 1
            if mark < n and _is_digit(text[mark]):
                end = mark
                while end < n and _is_digit(text[end]):
                    end += 1
        if end < n and _is_ident_start(text[end]):
            raise self.error("a number runs into a name", end, "number")
        raw = text[start:end]
        self.pos = end
        value: int | float
        value = int(raw) if _is_digit(raw) and len(raw) <= 15 else float(raw)
        if isinstance(value, float) and math.isinf(value):
            raise self.error("number out of range", start, "number")
        return _Token("num", raw, start, value)

    def _string(self, start: int, quote: str) -> _Token:
        text, n, pos = self.text, len(self.text), start + 1
        out: list[str] = []
        while True:
            if pos >= n:
                raise self.error("unterminated string", start, "string")
            ch = text[pos]
            if ch == quote:
                break
            if ch == "\\":
                if pos + 1 >= n:
                    raise self.error("unterminated string", start, "string")
                esc = text[pos + 1]
                if esc == "u":
                    digits = text[pos + 2 : pos + 6]
                    if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                        raise self.error("bad \\u escape", pos, "string escape")
                    out.append(chr(int(digits, 16)))
                    pos += 6
                    continue
                out.append(_ESCAPES.get(esc, esc))
                pos += 2
                continue
            out.append(ch)
            pos += 1
        self.pos = pos + 1
        return _Token("str", text[start : pos + 1], start, "".join(out))

    def _regex(self, start: int) -> _Token:
        text, n, pos = self.text, len(self.text), start + 1
        in_class = False
        while True:
            if pos >= n or text[pos] == "\n":
                raise self.error("unterminated regular expression", start, "regular expression")
            ch = text[pos]
            if ch == "\\":
                pos += 2
                continue
            if ch == "[":
                in_class = True
            elif ch == "]":
                in_class = False
            elif ch == "/" and not in_class:
                break
            pos += 1
        source = text[start + 1 : pos]
        if not source:
            raise self.error("empty regular expression", start, "regular expression")
        end = pos + 1
        while end < n and _is_ident_part(text[end]):
            end += 1
        flags = text[pos + 1 : end]
        if any(f not in "gimsuy" for f in flags) or len(set(flags)) != len(flags):
            raise self.error(f"unknown regular expression flags {flags!r}", pos + 1, "regular expression flags")
        self.pos = end
        return _Token("regex", text[start:end], start, (source, flags))


class _Parser:
    def __init__(self, text: str) -> None:
        self.lexer = _Lexer(text)
        self.token = self.lexer.next()
        self.depth = 0

    def error(self, message: str, at: int, construct: str = "") -> ExprError:
        return self.lexer.error(message, at, construct)

    def advance(self) -> _Token:
        token = self.token
        self.token = self.lexer.next()
        return token

    def expect(self, text: str) -> _Token:
        if self.token.kind != "op" or self.token.text != text:
            found = self.token.text or "the end"
            raise self.error(
                f"expected '{text}', found {found!r}" if self.token.text else f"expected '{text}' before the end", self.token.pos
            )
        return self.advance()

    def enter(self, at: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"nests deeper than {MAX_DEPTH} levels", at, "nesting")

    def expression(self, rank: int = 0) -> Node:
        self.enter(self.token.pos)
        left = self.prefix()
        chained = 0  # a chain ``a + b + c ...`` nests one level deeper at each operator
        while self.token.kind == "op" and (op_rank := _BINARY.get(self.token.text)) is not None and op_rank > rank:
            op = self.advance()
            self.enter(op.pos)
            chained += 1
            right = self.expression(op_rank)
            left = Binary(op=op.text, left=left, right=right, pos=left.pos)
        self.depth -= 1 + chained
        return left

    def prefix(self) -> Node:
        token = self.token
        if token.kind == "op" and token.text in ("!", "-"):
            self.advance()
            self.enter(token.pos)
            operand = self.prefix()
            self.depth -= 1
            return Unary(op=token.text, operand=operand, pos=token.pos)
        if token.kind == "op" and token.text == "+":
            raise self.error("unary '+' is not supported", token.pos, "unary +")
        return self.postfix(self.atom())

    def postfix(self, node: Node) -> Node:
        depth = 0
        while self.token.kind == "op" and self.token.text in (".", "(", "["):
            depth += 1
            self.enter(self.token.pos)
            token = self.advance()
            if token.text == ".":
                name = self.token
                if name.kind != "ident":
                    raise self.error("expected a name after '.'", name.pos, "member")
                self.advance()
                node = Member(target=node, name=name.text, pos=name.pos)  # errors point at the name
            elif token.text == "[":
                key = self.expression()
                self.expect("]")
                node = Index(target=node, key=key, pos=node.pos)
            else:
                if not isinstance(node, Ident | Member):
                    raise self.error("only a function or a method can be called", token.pos, "call")
                node = Call(callee=node, args=self.arguments(")"), pos=node.pos)
        self.depth -= depth
        return node

    def arguments(self, close: str) -> tuple[Node, ...]:
        items: list[Node] = []
        if self.token.kind == "op" and self.token.text == close:
            self.advance()
            return ()
        while True:
            items.append(self.expression())
            if self.token.kind == "op" and self.token.text == ",":
                self.advance()
                continue
            self.expect(close)
            return tuple(items)

    def atom(self) -> Node:
        token = self.token
        if token.kind == "num" or token.kind == "str":
            self.advance()
            return Literal(value=token.value, pos=token.pos)  # type: ignore[arg-type]
        if token.kind == "regex":
            self.advance()
            pair = token.value
            assert isinstance(pair, tuple)
            return RegexLit(source=str(pair[0]), flags=str(pair[1]), pos=token.pos)
        if token.kind == "ident":
            self.advance()
            if token.text in _KEYWORDS:
                return Literal(value=_KEYWORDS[token.text], pos=token.pos)
            return Ident(name=token.text, pos=token.pos)
        if token.kind == "op" and token.text == "(":
            self.advance()
            inner = self.expression()
            self.expect(")")
            return inner
        if token.kind == "op" and token.text == "[":
            self.advance()
            self.enter(token.pos)
            items = self.arguments("]")
            self.depth -= 1
            return ListLit(items=items, pos=token.pos)
        if token.kind == "end":
            raise self.error("the expression ends too early", token.pos, "end")
        raise self.error(f"unexpected {token.text!r}", token.pos, token.text)


def parse(text: str) -> Node:
    """The syntax tree of one expression.

    Raises:
        ExprError: the text is too long, too deep, or not an expression.
    """
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExprError(f"is longer than {MAX_EXPRESSION_CHARS} characters", text, MAX_EXPRESSION_CHARS, "length")
    if not text.strip():
        raise ExprError("is empty", text, 0, "empty")
    parser = _Parser(text)
    node = parser.expression()
    if parser.token.kind != "end":
        raise parser.error(f"unexpected {parser.token.text!r} after the expression", parser.token.pos, parser.token.text)
    return node


def _literal_text(value: None | bool | int | float | str) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _rank(node: Node) -> int:
    if isinstance(node, Binary):
        return _BINARY[node.op]
    if isinstance(node, Unary):
        return _PREFIX_RANK
    if isinstance(node, Literal) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool) and node.value < 0:
        return _PREFIX_RANK
    return _POSTFIX_RANK


def to_text(node: Node) -> str:
    """Text that :func:`parse` reads back as ``node``, with only the parentheses it needs."""

    def wrap(child: Node, need: int) -> str:
        text = to_text(child)
        return f"({text})" if _rank(child) < need else text

    if isinstance(node, Literal):
        return _literal_text(node.value)
    if isinstance(node, RegexLit):
        return f"/{node.source}/{node.flags}"
    if isinstance(node, ListLit):
        return "[" + ", ".join(to_text(i) for i in node.items) + "]"
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Member):
        return f"{wrap(node.target, _POSTFIX_RANK)}.{node.name}"
    if isinstance(node, Index):
        return f"{wrap(node.target, _POSTFIX_RANK)}[{to_text(node.key)}]"
    if isinstance(node, Call):
        return f"{wrap(node.callee, _POSTFIX_RANK)}(" + ", ".join(to_text(a) for a in node.args) + ")"
    if isinstance(node, Unary):
        return f"{node.op}{wrap(node.operand, _PREFIX_RANK)}"
    if isinstance(node, Binary):
        rank = _BINARY[node.op]
        # left-associative: the right side needs a tighter rank than the operator's own
        return f"{wrap(node.left, rank)} {node.op} {wrap(node.right, rank + 1)}"
    raise TypeError(f"not an expression node: {node!r}")


def size(node: Node) -> int:
    """How many nodes the tree holds: the work one evaluation of it costs, without list calls."""
    if isinstance(node, ListLit):
        return 1 + sum(size(i) for i in node.items)
    if isinstance(node, Member):
        return 1 + size(node.target)
    if isinstance(node, Index):
        return 1 + size(node.target) + size(node.key)
    if isinstance(node, Call):
        return 1 + size(node.callee) + sum(size(a) for a in node.args)
    if isinstance(node, Unary):
        return 1 + size(node.operand)
    if isinstance(node, Binary):
        return 1 + size(node.left) + size(node.right)
    return 1
