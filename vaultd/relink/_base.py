"""Links in an Obsidian base (``.base``, YAML), rewritten for move and merge.

A base names notes in its filters and formulas in three ways, each rewritten when the change
breaks it, resolved from the base file's own folder:

- a wiki-link inside a string (``up == "[[Alpha Plan]]"``), as in a note;
- ``link("Alpha Plan")`` and ``file.hasLink("Alpha Plan")``: the argument is a link target, so it
  is rewritten in its own style (bare name, vault path, relative, rooted; see
  :func:`~vaultd.relink._relocation.styled_target`), its ``#anchor`` kept;
- ``file("projects/Alpha Plan.md")``: a vault path with its extension, which gets the new path.

``file.inFolder(...)`` names a folder, which moving one note never changes. The text is edited
in place (comments, quoting, order and every other byte stay), then read back: the YAML must
give the data the base had with exactly these strings changed, else the move is refused (V03)
rather than write a base Obsidian would read differently.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import ValidationFailed
from vaultd.relink._notes import WIKI_LINK_RE, Rewrite, map_strings, rewrite_wiki_link
from vaultd.relink._relocation import styled_target
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from vaultd.relink._relocation import Relocation

# A call whose first argument is a quoted string without backslashes or line breaks.
_CALL: Final = re.compile(r"""\b(?P<fn>link|hasLink|file)\(\s*(?P<q>["'])(?P<arg>[^"'\\\n]*)(?P=q)""")
_FOUND = re.compile(f"{WIKI_LINK_RE.pattern}|{_CALL.pattern}")


def _refuse(path: str, line: int, message: str) -> ValidationFailed:
    return ValidationFailed(f"refused: {message}", issues=[Issue(code=IssueCode.V03, path=path, line=line, message=message)])


def _call_arg(fn: str, arg: str, path: str, reloc: Relocation, line: int) -> str | None:
    """The new argument of ``link``/``hasLink``/``file``, or None when it stays."""
    if fn == "file":
        if not arg or arg.startswith("/"):
            return None
        need = reloc.wanted("/" + arg, path)
        return None if need is None else need[1]
    target, hash_mark, anchor = arg.partition("#")
    need = reloc.wanted(target.strip(), path)
    if need is None:
        return None
    text = styled_target(target.strip(), path, need[0], need[1], reloc)
    reloc.check_link(text, path, need[1], f'{fn}("{arg}")', line)
    return text + hash_mark + anchor


def _rewrite_text(text: str, path: str, reloc: Relocation, first_line: int = 1) -> tuple[str, list[Rewrite]]:
    """``text`` with every link form above fixed for ``reloc``, and what was rewritten.

    Raises:
        ValidationFailed: VALIDATION (V03), a link cannot be rewritten in place (the new name holds
            a quote).
    """
    out: list[str] = []
    found: list[Rewrite] = []
    pos = 0
    line, counted = first_line, 0  # lines counted on from the last match: one pass, however many calls a line holds
    for m in _FOUND.finditer(text):
        line += text.count("\n", counted, m.start())
        counted = m.start()
        if m.group("fn") is None:
            new = rewrite_wiki_link(m.group(0), path, reloc, line)
        else:
            arg = _call_arg(m.group("fn"), m.group("arg"), path, reloc, line)
            if arg is not None and (m.group("q") in arg or "\\" in arg):
                raise _refuse(path, line, f"{m.group(0)} cannot be rewritten: the new name holds a quote")
            new = None if arg is None else text[m.start() : m.start("arg")] + arg + text[m.end("arg") : m.end()]
        if new is None or new == m.group(0):
            continue
        found.append(Rewrite(path, line, "base", m.group(0), new))
        out += [text[pos : m.start()], new]
        pos = m.end()
    out.append(text[pos:])
    return ("".join(out), found) if found else (text, [])


def rewrite_base(text: str, path: str, reloc: Relocation) -> tuple[str, list[Rewrite]]:
    """The base ``text`` (at ``path``) with its links fixed for ``reloc``.

    Raises:
        ValueError: the base is not a readable YAML mapping (and would need a rewrite).
        ValidationFailed: VALIDATION (V03) when a link cannot be rewritten, or not without
            changing what the YAML says beyond it (a link spelled with YAML escapes, say).
    """
    new, found = _rewrite_text(text, path, reloc)
    before, issues = frontmatter.load_header(text)
    if before is None or issues:
        if found:
            raise ValueError("not a readable YAML mapping")
        return text, []
    expected = map_strings(before, lambda s: _rewrite_text(s, path, reloc)[0])
    if not found and expected == before:
        return text, []
    after, issues = frontmatter.load_header(new)
    if after != expected or issues:
        line = found[0].line if found else None
        message = f"the links of {path} cannot be rewritten without changing its YAML quoting; edit them by hand"
        raise ValidationFailed(f"refused: {message}", issues=[Issue(code=IssueCode.V03, path=path, line=line, message=message)])
    return new, found
