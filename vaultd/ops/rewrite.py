"""Link rewriting for move and merge: which links a change breaks, and what they should say now.

A :class:`Relocation` describes the vault after some files move (``moved``: old path to new path,
or None for a file that goes away) and where links should point (``repoint``: a move repoints
each moved file to its new place; a merge repoints ``absorb`` to ``keep``). It resolves targets
against the vault as it is (``before``) and as the change leaves it (``after``) without copying
the index: every lookup a target can make (by name, by path, by path suffix) only ever returns
files whose link name equals the target's last component, so the after-state of one target is a
tiny resolver over just those files, with the moved ones swapped.

The rule, applied to every link of every note that could be affected: a link that resolved to
``P`` before must resolve to ``repoint[P]`` (or ``P``) after. One that still does keeps its bytes
(a folder move leaves ``[[Name]]`` alone, as Obsidian does); one that would not is rewritten:

- wiki-links, embeds and frontmatter wiki-links get the shortest unambiguous text Obsidian
  writes: the bare name when no other file has it, else the vault path without ``.md`` (with a
  leading ``/`` for a note at the root, whose path would read as its bare name); the
  ``#heading``/``#^block`` anchor, the ``|label`` (also the ``\\|`` of a table row) and the
  spacing inside the brackets are kept;
- Markdown links keep their style: rooted (``/x.md``), relative to the note (``../x.md``, or
  ``./sub/x.md``: without ``./`` a path would be read from the vault root first), vault path, or
  bare name; ``.md`` when it was written; angle brackets, or percent-encoding (fully, or only
  where needed, as the original did);
- code spans, fences and comments are never touched (the scanner does not report links there).

A frontmatter rewrite is done in the header's text and read back; when the YAML quoting would
not carry the new text, the changed keys are emitted losslessly instead (only those keys).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from protocol.errors import Issue
from vaultd.errors import ValidationFailed
from vaultd.vault import frontmatter, markdown
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.link_targets import LinkResolver, Resolution, ResolutionStatus, name_key
from vaultd.vault.model import Link, LinkKind

__all__ = ["Relocation", "Rewrite", "link_name", "link_path", "link_text_for", "rewrite_links"]

_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# Characters a Markdown link destination cannot hold raw (outside angle brackets).
_MD_UNSAFE = re.compile(r"[\s%()<>\[\]\\`{}|\"^#?]")
_URI_SAFE = "/!$&'*+,;=:@~-._"


def _is_note(path: str) -> bool:
    return path[-3:].lower() == ".md"


def link_name(path: str) -> str:
    """The name a bare link uses: the stem of a note, the whole file name of an attachment."""
    name = path.rpartition("/")[2]
    return name[:-3] if _is_note(path) else name


def link_path(path: str) -> str:
    """The vault path a link uses: ``.md`` dropped for notes."""
    return path[:-3] if _is_note(path) else path


def link_text_for(resolver: LinkResolver, path: str) -> str:
    """The shortest text that names ``path`` unambiguously in the vault as it is."""
    return Relocation(resolver, {}).link_text(path)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One rewritten link, for previews and receipts."""

    path: str  #: the note holding the link (where it is before the change)
    line: int
    kind: str
    old: str  #: the link as written
    new: str  #: as rewritten

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.old} → {self.new}"


class Relocation:
    """The vault before and after files move, and where links should point afterwards."""

    def __init__(self, resolver: LinkResolver, moved: Mapping[str, str | None], repoint: Mapping[str, str] | None = None) -> None:
        self.base = resolver
        self.moved = dict(moved)
        self.repoint = {old: new for old, new in moved.items() if new is not None} | dict(repoint or {})
        self._added = [new for new in moved.values() if new is not None]

    def new_source(self, source: str) -> str:
        return self.moved.get(source) or source

    def before(self, target: str, source: str) -> Resolution:
        return self.base.resolve(target, source)

    def named(self, name: str) -> list[str]:
        """The files the after-state holds under one link name (note stem or attachment name)."""
        if not name.strip() or "/" in name:
            return []
        res = self.base.resolve(name, "")
        found = ({res.path} if res.path else set(res.candidates)) - self.moved.keys()
        found |= {new for new in self._added if LinkResolver([new]).resolve(name, "").path == new}
        return sorted(found)

    def after(self, target: str, source: str) -> Resolution:
        """What ``target`` written in ``source`` (its after-state path) resolves to after the change."""
        target = target.strip()
        if not target:
            return Resolution(ResolutionStatus.RESOLVED, source, reason="a link to the note itself")
        rel = target.lstrip("/")
        names = {
            posixpath.normpath(rel).rpartition("/")[2],
            posixpath.normpath(posixpath.join(posixpath.dirname(source), rel)).rpartition("/")[2],
        }
        files = {p for name in names for p in self.named(name)}
        return LinkResolver(sorted(files)).resolve(target, source)

    def link_text(self, path: str) -> str:
        """The shortest text that names ``path`` unambiguously after the change."""
        name = link_name(path)
        if self.named(name) == [path]:
            return name
        # A note at the root shares its path with its bare name: the leading '/' says "the root".
        return link_path(path) if "/" in path else "/" + link_path(path)

    def wanted(self, target: str, source: str) -> tuple[str, str] | None:
        """(what the link named before, what it must name after) when the link needs rewriting."""
        if not target.strip():
            return None
        was = self.before(target, source)
        if was.status != ResolutionStatus.RESOLVED or was.path is None:
            return None  # missing or ambiguous links stay as written
        if was.path in self.moved and self.moved[was.path] is None:
            return None  # its file goes away; a delete reports these, it does not rewrite them
        want = self.repoint.get(was.path, was.path)
        now = self.after(target, self.new_source(source))
        if now.status == ResolutionStatus.RESOLVED and now.path == want:
            return None
        return was.path, want

    def check_link(self, target: str, source: str, want: str, written: str, line: int) -> None:
        now = self.after(target, self.new_source(source))
        if now.path != want:
            raise ValidationFailed(
                f"cannot write a link to {want} that resolves unambiguously from {self.new_source(source)}",
                issues=[Issue(code="V03", path=source, line=line, message=f"{written} cannot be rewritten to name {want} unambiguously")],
            )


# -- wiki-links ---------------------------------------------------------------------------------


def _target_span(inner: str) -> tuple[int, int]:
    """Where the target sits in the text between ``[[`` and ``]]`` (spaces around it excluded)."""
    bar = inner.find("|")
    head = inner if bar < 0 else inner[:bar]
    if bar >= 0 and head.endswith("\\"):
        head = head[:-1]
    hash_at = head.find("#")
    end = len(head) if hash_at < 0 else hash_at
    part = inner[:end]
    start = len(part) - len(part.lstrip())
    return start, start + len(part.strip())


def _rewrite_wiki(raw: str, source: str, reloc: Relocation, line: int) -> str | None:
    """The new text of one ``[[...]]`` or ``![[...]]``, or None when it stays."""
    open_len = 3 if raw.startswith("!") else 2
    inner = raw[open_len:-2]
    parsed = markdown.parse_wiki_inner(inner)
    if parsed is None:
        return None
    need = reloc.wanted(parsed[0], source)
    if need is None:
        return None
    text = reloc.link_text(need[1])
    reloc.check_link(text, source, need[1], raw, line)
    start, end = _target_span(inner)
    return raw[:open_len] + inner[:start] + text + inner[end:] + "]]"


def _rewrite_wiki_string(s: str, source: str, reloc: Relocation, line: int, found: list[tuple[int, str, str]] | None = None) -> str:
    """Every wiki-link inside a string (a header, or one frontmatter value) fixed for ``reloc``."""
    if "[[" not in s:
        return s
    out: list[str] = []
    pos = 0
    for m in _WIKI_RE.finditer(s):
        new = _rewrite_wiki(m.group(0), source, reloc, line + s.count("\n", 0, m.start()))
        if new is None:
            continue
        if found is not None:
            found.append((m.start(), m.group(0), new))
        out += [s[pos : m.start()], new]
        pos = m.end()
    out.append(s[pos:])
    return "".join(out)


# -- Markdown links -----------------------------------------------------------------------------


def _split_markdown(raw: str) -> tuple[int, int] | None:
    """The span, inside ``[label](dest)``, of the destination's path part (before ``#``)."""
    if not raw.endswith(")"):
        return None
    label_end = _label_end(raw)
    if label_end is None:
        return None
    start = label_end + 2  # past "]("
    dest = raw[start:-1]
    lead = len(dest) - len(dest.lstrip())
    if dest[lead:].startswith("<"):
        close = dest.find(">", lead)
        if close < 0:
            return None
        path = dest[lead + 1 : close]
        offset = start + lead + 1
    else:
        token = dest[lead:].split(None, 1)[0] if dest[lead:].strip() else ""
        path = token
        offset = start + lead
    hash_at = path.find("#")
    return offset, offset + (len(path) if hash_at < 0 else hash_at)


def _label_end(raw: str) -> int | None:
    """Index of the ``]`` that closes the label of ``[label](...)`` or ``![alt](...)``."""
    depth = 0
    for i in range(1 if raw.startswith("!") else 0, len(raw)):
        ch = raw[i]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i if raw.startswith("](", i) else None
    return None


def _encode(path: str, written: str, angle: bool) -> str:
    if angle:
        return path
    if "%" in written and written.isascii():
        return quote(path, safe=_URI_SAFE)  # the writer encoded everything (as Obsidian does)
    return _MD_UNSAFE.sub(lambda m: quote(m.group()), path)  # only where a raw character would break it


def _markdown_path(written: str, target: str, source: str, was: str, want: str, reloc: Relocation) -> str:
    """The new destination path of a Markdown link, in the style ``written`` had."""
    new_source = reloc.new_source(source)
    keep_ext = not _is_note(want) or target.lower().endswith(".md")
    from_source = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
    if target.startswith("/"):
        path = "/" + want
    elif target.startswith(("./", "../")) or (
        "/" in target and name_key(from_source).removesuffix(".md") == name_key(was).removesuffix(".md")
    ):
        path = posixpath.relpath(want, posixpath.dirname(new_source) or ".")
        if not path.startswith("../"):
            path = "./" + path  # without it, a path reads as vault-relative first (or as a bare name)
    elif "/" in target and "/" in want:
        path = want
    else:
        path = reloc.link_text(want) + (".md" if _is_note(want) else "")
    if _is_note(want) and not keep_ext:
        path = path[:-3]
    return path


def _rewrite_markdown(raw: str, link: Link, source: str, reloc: Relocation) -> str | None:
    need = reloc.wanted(link.target, source)
    if need is None:
        return None
    span = _split_markdown(raw)
    if span is None:
        return None
    written = raw[span[0] : span[1]]
    angle = raw[span[0] - 1] == "<"
    path = _markdown_path(written, link.target.strip(), source, need[0], need[1], reloc)
    encoded = _encode(path, written, angle)
    reloc.check_link(unquote(encoded) if "%" in encoded else encoded, source, need[1], raw, link.line)
    return raw[: span[0]] + encoded + raw[span[1] :]


# -- whole notes --------------------------------------------------------------------------------


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    return value


def _rewrite_header(text: str, source: str, reloc: Relocation, rewrites: list[Rewrite]) -> str:
    bounds = frontmatter.find_header(text)
    if bounds is None or not bounds.closed:
        return text
    parsed = frontmatter.parse(text)
    if parsed.data is None or parsed.issues:
        return text
    header = text[bounds.start : bounds.end]
    first_line = text.count("\n", 0, bounds.start) + 1
    found: list[tuple[int, str, str]] = []
    new_header = _rewrite_wiki_string(header, source, reloc, first_line, found)
    if new_header == header:
        return text
    expected = _map_strings(parsed.data, lambda s: _rewrite_wiki_string(s, source, reloc, first_line))
    result = text[: bounds.start] + new_header + text[bounds.end :]
    again = frontmatter.parse(result)
    if again.data != expected or again.issues:
        # The quoting of some value cannot carry the new text as is: emit the changed keys.
        changed = {k: v for k, v in expected.items() if parsed.data.get(k) != v}
        result = emit(text, changed) if changed else text
    rewrites += [Rewrite(source, first_line + header.count("\n", 0, at), str(LinkKind.FRONTMATTER), old, new) for at, old, new in found]
    return result


def rewrite_links(text: str, source: str, reloc: Relocation, *, header: bool = True) -> tuple[str, list[Rewrite]]:
    """``text`` (the note at ``source`` before the change) with every link ``reloc`` breaks fixed.

    Returns the new text (``text`` itself when nothing changes) and what was rewritten.

    Raises:
        ValidationFailed: VALIDATION (V03) when a link cannot be written unambiguously.
        ValidationFailed: VALIDATION (V01) when a frontmatter link needs a header that cannot be
            edited losslessly.
    """
    rewrites: list[Rewrite] = []
    fm = frontmatter.parse(text)
    scan = markdown.scan(text, fm.body_offset, fm.body_line)
    out: list[str] = []
    pos = 0
    for link in scan.links:
        raw = text[link.start : link.end]
        if link.kind in (LinkKind.WIKI, LinkKind.EMBED) and raw.endswith("]]"):
            new = _rewrite_wiki(raw, source, reloc, link.line)
        elif link.kind in (LinkKind.MARKDOWN, LinkKind.EMBED):
            new = _rewrite_markdown(raw, link, source, reloc)
        else:
            new = None
        if new is None or new == raw:
            continue
        rewrites.append(Rewrite(source, link.line, str(link.kind), raw, new))
        out += [text[pos : link.start], new]
        pos = link.end
    out.append(text[pos:])
    result = "".join(out) if rewrites else text
    if header:
        head_rewrites: list[Rewrite] = []
        result = _rewrite_header(result, source, reloc, head_rewrites)
        rewrites = head_rewrites + rewrites
    return result, rewrites
