"""The links of a note, rewritten for move and merge: which ones a change breaks, and what they say
now; and, for a note copied into another vault, its links that would be dead there made text.

Where links should point after the change, and how a target resolves before and after it, is a
:class:`~vaultd.relink._relocation.Relocation`. Every link of every note that could be affected is
judged: one that still resolves where it should keeps its bytes; one that would not is rewritten
in the style it was written in (:func:`~vaultd.relink._relocation.styled_target`: rooted,
relative, vault path or bare name, ``.md`` kept when written), and then:

- wiki-links, embeds and frontmatter wiki-links keep the ``#heading``/``#^block`` anchor, the
  ``|label`` (also the ``\\|`` of a table row) and the spacing inside the brackets;
- Markdown links keep angle brackets, or percent-encoding (fully, or only where needed, as the
  original did);
- code spans, fences and comments are never touched (the scanner does not report links there).

A frontmatter rewrite is done in the header's text and read back; when the YAML quoting would
not carry the new text, the changed keys are emitted losslessly instead (only those keys).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import msgspec

from vaultd.relink._relocation import styled_target
from vaultd.vault import frontmatter, markdown
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.link_targets import ResolutionStatus
from vaultd.vault.model import Link, LinkKind

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.relink._relocation import Relocation
    from vaultd.vault.link_targets import LinkResolver

__all__ = [
    "WIKI_LINK_RE",
    "LinkEdit",
    "Rewrite",
    "apply_edits",
    "link_edits",
    "dead_links_as_text",
    "map_strings",
    "rewrite_links",
    "rewrite_wiki_link",
]

WIKI_LINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# Characters a Markdown link destination cannot hold raw (outside angle brackets).
_MD_UNSAFE = re.compile(r"[\s%()<>\[\]\\`{}|\"^#?]")
_URI_SAFE = "/!$&'*+,;=:@~-._"


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One rewritten link, for previews and receipts."""

    path: str  #: the file holding the link (where it is before the change)
    line: int
    kind: str
    old: str  #: the link as written
    new: str  #: as rewritten

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.old} → {self.new}"


@dataclass(frozen=True, slots=True)
class LinkEdit:
    """One link's new text, at its character span in the text it was found in."""

    start: int
    end: int
    new: str
    rewrite: Rewrite


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


def rewrite_wiki_link(raw: str, source: str, reloc: Relocation, line: int) -> str | None:
    """The new text of one ``[[...]]`` or ``![[...]]``, or None when it stays."""
    open_len = 3 if raw.startswith("!") else 2
    inner = raw[open_len:-2]
    parsed = markdown.parse_wiki_inner(inner)
    if parsed is None:
        return None
    need = reloc.wanted(parsed[0], source)
    if need is None:
        return None
    text = styled_target(parsed[0], source, need[0], need[1], reloc)
    reloc.check_link(text, source, need[1], raw, line)
    start, end = _target_span(inner)
    return raw[:open_len] + inner[:start] + text + inner[end:] + "]]"


def _rewrite_wiki_string(s: str, source: str, reloc: Relocation, line: int, found: list[tuple[int, str, str]] | None = None) -> str:
    """Every wiki-link inside a string (a header, or one frontmatter value) fixed for ``reloc``."""
    if "[[" not in s:
        return s
    out: list[str] = []
    pos = 0
    counted = 0  # lines counted on from the last link: one pass, however many links the string holds
    for m in WIKI_LINK_RE.finditer(s):
        line += s.count("\n", counted, m.start())
        counted = m.start()
        new = rewrite_wiki_link(m.group(0), source, reloc, line)
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


def _rewrite_markdown(raw: str, link: Link, source: str, reloc: Relocation) -> str | None:
    need = reloc.wanted(link.target, source)
    if need is None:
        return None
    span = _split_markdown(raw)
    if span is None:
        return None
    written = raw[span[0] : span[1]]
    angle = raw[span[0] - 1] == "<"
    path = styled_target(link.target.strip(), source, need[0], need[1], reloc)
    encoded = _encode(path, written, angle)
    reloc.check_link(unquote(encoded) if "%" in encoded else encoded, source, need[1], raw, link.line)
    return raw[: span[0]] + encoded + raw[span[1] :]


# -- whole notes --------------------------------------------------------------------------------


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` (frontmatter: lists, maps, scalars) with ``fn`` applied to every string in it."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value


def _rewrite_header(text: str, source: str, reloc: Relocation, rewrites: list[Rewrite]) -> str:
    bounds = frontmatter.find_header(text)
    if bounds is None or not bounds.closed:
        return text
    header = text[bounds.start : bounds.end]
    first_line = text.count("\n", 0, bounds.start) + 1
    found: list[tuple[int, str, str]] = []
    new_header = _rewrite_wiki_string(header, source, reloc, first_line, found)
    if new_header == header:
        return text
    parsed = frontmatter.parse(text)
    if parsed.data is None or parsed.issues:
        return text
    expected = map_strings(parsed.data, lambda s: _rewrite_wiki_string(s, source, reloc, first_line))
    result = text[: bounds.start] + new_header + text[bounds.end :]
    again = frontmatter.parse(result)
    if again.data != expected or again.issues:
        # The quoting of some value cannot carry the new text as is: emit the changed keys.
        changed = {k: v for k, v in expected.items() if parsed.data.get(k) != v}
        result = emit(text, changed) if changed else text
    rewrites += [Rewrite(source, first_line + header.count("\n", 0, at), str(LinkKind.FRONTMATTER), old, new) for at, old, new in found]
    return result


def link_edits(text: str, source: str, reloc: Relocation, *, body_offset: int = 0, body_line: int = 1) -> list[LinkEdit]:
    """The links of ``text`` (Markdown, read from ``body_offset``) that ``reloc`` breaks, each
    with its new text; ``source`` is the file holding the text, before the change.

    Raises:
        ValidationFailed: VALIDATION (V03) when a link cannot be written unambiguously.
    """
    edits: list[LinkEdit] = []
    for link in markdown.scan(text, body_offset, body_line, count_words=False).links:
        raw = text[link.start : link.end]
        if link.kind in (LinkKind.WIKI, LinkKind.EMBED) and raw.endswith("]]"):
            new = rewrite_wiki_link(raw, source, reloc, link.line)
        elif link.kind in (LinkKind.MARKDOWN, LinkKind.EMBED):
            new = _rewrite_markdown(raw, link, source, reloc)
        else:
            new = None
        if new is not None and new != raw:
            edits.append(LinkEdit(link.start, link.end, new, Rewrite(source, link.line, str(link.kind), raw, new)))
    return edits


def apply_edits(text: str, edits: list[LinkEdit]) -> str:
    """``text`` with each edit's span replaced (edits in order, not overlapping)."""
    out: list[str] = []
    pos = 0
    for edit in edits:
        out += [text[pos : edit.start], edit.new]
        pos = edit.end
    out.append(text[pos:])
    return "".join(out)


def rewrite_links(text: str, source: str, reloc: Relocation, *, header: bool = True) -> tuple[str, list[Rewrite]]:
    """``text`` (the note at ``source`` before the change) with every link ``reloc`` breaks fixed.

    Returns the new text (``text`` itself when nothing changes) and what was rewritten.

    Raises:
        ValidationFailed: VALIDATION (V03) when a link cannot be written unambiguously.
        ValidationFailed: VALIDATION (V01) when a frontmatter link needs a header that cannot be
            edited losslessly.
    """
    body_offset, body_line = frontmatter.body_start(text)
    edits = link_edits(text, source, reloc, body_offset=body_offset, body_line=body_line)
    rewrites = [e.rewrite for e in edits]
    result = apply_edits(text, edits) if edits else text
    if header:
        head_rewrites: list[Rewrite] = []
        result = _rewrite_header(result, source, reloc, head_rewrites)
        rewrites = head_rewrites + rewrites
    return result, rewrites


# -- a copy into another vault ------------------------------------------------------------------


def dead_links_as_text(text: str, org: LinkResolver, dest: str) -> tuple[str, list[str]]:
    """The note's text, copied to ``dest`` in the vault ``org`` resolves in, with every link that
    vault cannot resolve turned into its text (its label, or its target), so no dead link lands
    there; and each link so dropped (``line: link``, or ``frontmatter: key`` for a header value,
    whose key is dropped)."""
    parsed = frontmatter.parse(text)
    scan = markdown.scan(text, parsed.body_offset, parsed.body_line)
    dropped: list[str] = []
    out, at = [], 0
    for link in scan.links:
        if link.kind is LinkKind.FRONTMATTER or not link.target.strip():
            continue
        if org.resolve(link.target, dest).status == ResolutionStatus.RESOLVED:
            continue
        out.append(text[at : link.start])
        shown = link.label if link.label and link.kind is not LinkKind.EMBED else link.target
        out.append(shown)
        at = link.end
        dropped.append(f"{link.line}: {text[link.start : link.end]}")
    out.append(text[at:])
    copied = "".join(out)
    dead_keys = sorted(
        {
            key
            for key, value in (parsed.data or {}).items()
            for link in markdown.links_in_value(msgspec.json.encode(value).decode(), 0)
            if link.target.strip() and org.resolve(link.target, dest).status != ResolutionStatus.RESOLVED
        }
    )
    if dead_keys:
        copied = emit(copied, {}, dead_keys)
        dropped += [f"frontmatter: {k}" for k in dead_keys]
    return copied, dropped
