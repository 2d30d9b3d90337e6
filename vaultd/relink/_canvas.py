"""Links in Obsidian's JSON files, rewritten for move and merge: a canvas's ``file`` nodes and the
Markdown of its text nodes (JSON Canvas 1.0), and the file bookmarks of
``.obsidian/bookmarks.json``.

A ``file`` node and a file bookmark name their file by its vault path with its extension, as
Obsidian stores them; one that named a file the change moves (or a merge repoints) gets the new
path, and its ``subpath`` (``#Heading``) stays. A text node's Markdown is a note's body for links:
each link it breaks is rewritten as in a note (:mod:`vaultd.relink._notes`), resolved from the
canvas file's own folder. Only the changed characters of the changed strings are re-encoded
(:mod:`vaultd.vault.json_text`); every other byte of the file stays, and the result is read back
and compared with the intended document before anything is planned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import ValidationFailed
from vaultd.relink._notes import Rewrite, link_edits
from vaultd.vault import json_text
from vaultd.vault.layout import BOOKMARKS_FILE

if TYPE_CHECKING:
    from vaultd.relink._relocation import Relocation

BOOKMARKS = BOOKMARKS_FILE


def _at(doc: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        if isinstance(step, int) and isinstance(doc, list) and step < len(doc):
            doc = doc[step]
        elif isinstance(step, str) and isinstance(doc, dict):
            doc = doc.get(step)
        else:
            return None
    return doc


def _set(doc: Any, path: tuple[str | int, ...], value: str) -> None:
    parent = _at(doc, path[:-1])
    parent[path[-1]] = value


class _Lines:
    """The line of an offset in one text, counted on from the offset asked before: the tokens are
    asked for in text order, so a file of many links costs one pass, not one per link."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def at(self, offset: int) -> int:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _file_path(value: str, holder: str, reloc: Relocation) -> str | None:
    """The new vault path of a stored file path that names a file the change moves or repoints."""
    if not value or value.startswith("/"):
        return None
    need = reloc.wanted("/" + value, holder)
    return None if need is None else need[1]


class _Edits:
    """The planned string edits of one JSON file, and the document they should give."""

    def __init__(self, text: str, path: str, kind: str) -> None:
        self.text = text
        self.path = path
        self.kind = kind
        self.doc = json_text.load(text)
        self.expected = json_text.load(text)
        self.tokens: list[tuple[json_text.JsonString, list[tuple[int, int, str]]]] = []
        self.rewrites: list[Rewrite] = []
        self.lines = _Lines(text)

    def whole(self, token: json_text.JsonString, new: str) -> None:
        line = self.lines.at(token.start)
        self.tokens.append((token, [(0, len(token.value), new)]))
        self.rewrites.append(Rewrite(self.path, line, self.kind, token.value, new))
        _set(self.expected, token.path, new)

    def links(self, token: json_text.JsonString, reloc: Relocation) -> None:
        edits = link_edits(token.value, self.path, reloc)
        if not edits:
            return
        line = self.lines.at(token.start)
        self.tokens.append((token, [(e.start, e.end, e.new) for e in edits]))
        self.rewrites += [Rewrite(self.path, line, e.rewrite.kind, e.rewrite.old, e.rewrite.new) for e in edits]
        new_value = token.value
        for e in reversed(edits):
            new_value = new_value[: e.start] + e.new + new_value[e.end :]
        _set(self.expected, token.path, new_value)

    def result(self) -> str:
        """The canvas text with its links rewritten in place, every other byte kept.

        Raises:
            ValidationFailed: VALIDATION (V03), the rewritten text would not read back as the links
                meant.
        """
        if not self.tokens:
            return self.text
        out: list[str] = []
        pos = 0
        for token, edits in self.tokens:
            out += [self.text[pos : token.start], json_text.replace_in_string(self.text, token, edits)]
            pos = token.end
        out.append(self.text[pos:])
        new = "".join(out)
        if json_text.load(new) != self.expected:  # never plan a file that does not read back as meant
            message = f"the links of {self.path} cannot be rewritten in place; edit them by hand"
            raise ValidationFailed(message, issues=[Issue(code=IssueCode.V03, path=self.path, message=message)])
        return new


def rewrite_canvas(text: str, path: str, reloc: Relocation) -> tuple[str, list[Rewrite]]:
    """The canvas ``text`` (at ``path``) with its file nodes and text-node links fixed for ``reloc``.

    Raises:
        ValueError: the text is not JSON.
        ValidationFailed: VALIDATION (V03) when a link cannot be written unambiguously.
    """
    plan = _Edits(text, path, "canvas-file")
    for token in json_text.strings(text):
        if len(token.path) != 3 or token.path[0] != "nodes" or not isinstance(token.path[1], int):
            continue
        node = _at(plan.doc, token.path[:2])
        if not isinstance(node, dict):
            continue
        if token.path[2] == "file" and node.get("type") == "file":
            new = _file_path(token.value, path, reloc)
            if new is not None:
                plan.whole(token, new)
        elif token.path[2] == "text" and node.get("type") == "text":
            plan.links(token, reloc)
    return plan.result(), plan.rewrites


def rewrite_bookmarks(text: str, reloc: Relocation) -> tuple[str, list[Rewrite]]:
    """``bookmarks.json`` with each file bookmark (in groups too) naming its file's new path.

    Raises:
        ValueError: the text is not JSON.
    """
    plan = _Edits(text, BOOKMARKS, "bookmark")
    for token in json_text.strings(text):
        if len(token.path) < 3 or token.path[0] != "items" or token.path[-1] != "path":
            continue
        item = _at(plan.doc, token.path[:-1])
        if isinstance(item, dict) and item.get("type") == "file":
            new = _file_path(token.value, BOOKMARKS, reloc)
            if new is not None:
                plan.whole(token, new)
    return plan.result(), plan.rewrites
