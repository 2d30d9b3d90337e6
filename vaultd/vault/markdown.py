"""Scan a note body for what the index keeps: headings, block ids, links, tags and a word count.

The scanner is pure and built for a cold start over 100,000 notes, so it avoids a Python loop per
line. It works in two steps:

1. **Mask.** One left-to-right pass finds what Obsidian never reads as structure: fenced code
   (backticks or tildes), inline code spans, HTML comments ``<!-- -->`` and Obsidian comments
   ``%% %%``. It builds a *clean* copy of the body of the same length, with fences and comments
   turned into spaces and code spans into NUL characters (so a line holding only a code span stays
   a non-blank paragraph line). Newlines are kept, so offsets and line numbers in the clean copy
   are those of the real text. Most notes hold none of these and skip the pass.
2. **Match.** Compiled regexes run over the clean copy: one for links and tags together (a link's
   span hides the ``#`` of its anchor from the tag rule), and line-anchored ones for headings and
   block ids. Text that is reported (targets, labels, heading text) is cut from the real text.

Deliberate simplifications, each cheaper than a full CommonMark parse and right for notes:
fences may be indented or inside a quote, because notes nest them in list items; indented
(four-space) code blocks are not skipped; a ``^id`` is accepted at the end of any line (after a
space) or alone on a line. Lines may end in CRLF: a ``\r`` before a newline counts as trailing
whitespace everywhere.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from sys import intern
from urllib.parse import unquote

from vaultd.vault.model import Block, Heading, Link, LinkKind, MarkdownScan, Tag, Task
from vaultd.vault.task_line import parse_task

__all__ = ["links_in_value", "parse_wiki_inner", "scan", "section_spans"]

# -- step 1: masking ---------------------------------------------------------------------------
# The scanner works on ``"\n" + body`` so every line, the first included, starts after a newline:
# patterns then begin with a literal ``\n`` and the regex engine can skip ahead with memchr
# instead of trying ``^`` at every character.

_FENCE_RE = re.compile(r"\n(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})")
_BLANK_LINE_RE = re.compile(r"\n[ \t\r]*(?:\n|\Z)")


@lru_cache(maxsize=64)
def _closing_fence(char: str, length: int) -> re.Pattern[str]:
    """A closing fence: the opener's character, at least as many, nothing else on the line."""
    return re.compile(rf"\n(?:[ \t]*>)*[ \t]*{re.escape(char)}{{{length},}}[ \t\r]*(?=\n|\Z)")


@lru_cache(maxsize=64)
def _closing_ticks(length: int) -> re.Pattern[str]:
    """A code span closes on a backtick run of exactly the opener's length."""
    return re.compile("`" * length + f"(?<!`{{{length + 1}}})(?!`)")


def _fill(segment: str, char: str) -> str:
    """``segment`` with every character but newlines replaced, so offsets and lines survive."""
    if "\n" not in segment:
        return char * len(segment)
    return "\n".join(char * len(part) for part in segment.split("\n"))


def _mask(s: str) -> str:
    """The clean copy of ``s`` (``"\n" + body``, see the module docstring); ``s`` when nothing hides.

    Fences, code spans and comments are taken in order of appearance, so a backtick inside a
    comment or a ``%%`` inside code is never read as an opener. Each kind's next occurrence is
    looked up once and kept until the scan passes it, so the pass stays linear.
    """
    has_tick = "`" in s
    if not has_tick and "~~~" not in s and "<!--" not in s and "%%" not in s:
        return s
    n = len(s)
    out: list[str] = []
    done = pos = 0  # s[:done] is already in out; nothing before pos opens anything
    nxt = {"fence": -2, "tick": -2 if has_tick else -1, "html": -2, "pct": -2}  # -1: none left
    fence_m: re.Match[str] | None = None
    para_end = -1  # end of the paragraph the last code-span opener was in ...
    no_close: set[int] = set()  # ... and the opener lengths known to have no closer before it
    while True:
        if -1 != nxt["fence"] < pos:
            fence_m = _FENCE_RE.search(s, max(pos - 1, 0))
            nxt["fence"] = fence_m.start() + 1 if fence_m is not None else -1
        if -1 != nxt["tick"] < pos:
            nxt["tick"] = s.find("`", pos)
        if -1 != nxt["html"] < pos:
            nxt["html"] = s.find("<!--", pos)
        if -1 != nxt["pct"] < pos:
            nxt["pct"] = s.find("%%", pos)
        live = [(at, kind) for kind, at in nxt.items() if at >= 0]
        if not live:
            break
        start, kind = min(live)
        filler = " "
        if kind == "fence":
            assert fence_m is not None  # set whenever nxt["fence"] >= 0
            run = fence_m.group(1)
            eol = s.find("\n", fence_m.end())
            eol = n if eol < 0 else eol
            if run[0] == "`" and "`" in s[fence_m.end() : eol]:
                # A backtick info string cannot hold a backtick: no fence here; the ticks decide.
                fence_m = _FENCE_RE.search(s, eol)
                nxt["fence"] = fence_m.start() + 1 if fence_m is not None else -1
                continue
            close = _closing_fence(run[0], len(run)).search(s, eol)
            end = close.end() if close is not None else n  # an unclosed fence runs to the end
        elif kind == "tick":
            stop = start + 1
            while stop < n and s[stop] == "`":
                stop += 1
            if stop > para_end:
                para = _BLANK_LINE_RE.search(s, stop)
                para_end = para.start() if para is not None else n
                no_close.clear()
            length = stop - start
            close = None if length in no_close else _closing_ticks(length).search(s, stop, para_end)
            if close is None:  # an unmatched run is literal text
                no_close.add(length)
                pos = stop
                continue
            end, filler = close.end(), "\0"
        else:
            closer = "-->" if kind == "html" else "%%"
            found = s.find(closer, start + (4 if kind == "html" else 2))
            end = n if found < 0 else found + len(closer)  # an unclosed comment hides the rest
        out.append(s[done:start])
        out.append(_fill(s[start:end], filler))
        done = pos = end
    if not out:
        return s
    out.append(s[done:])
    return "".join(out)


# -- step 2: headings ---------------------------------------------------------------------------

_ATX_RE = re.compile(r"\n {0,3}(#{1,6})(?=[ \t\r\n]|\Z)([^\n]*)")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t])#+[ \t\r]*$")
_SETEXT_RE = re.compile(r"\n {0,3}(=+|-+)[ \t\r]*(?=\n|\Z)")
# Lines that cannot belong to a paragraph (so a following ``---`` is a thematic break) ...
_NOT_PARA_RE = re.compile(r" {0,3}(?:#{1,6}(?:\s|$)|(?:[-*_]\s*){3,}$|(?:=+|-+)\s*$)")
# ... and lines a paragraph below them would lazily continue (so it is no setext heading either).
_CONTAINER_RE = re.compile(r"[ \t]*(?:>|\||[-+*](?:\s|$)|\d{1,9}[.)](?:\s|$))")

# One heading as found: (offset of its line in s, level, text, 0-based line index in the body).
_Found = tuple[int, int, str, int]


def _newlines(s: str) -> list[int]:
    """Offsets of the newlines in ``s``. Line ``k`` of the body is ``s[nls[k] + 1 : nls[k + 1]]``
    and the body line holding offset ``p`` is ``bisect_left(nls, p) - 1``."""
    return [m.start() for m in re.finditer("\n", s)]


def _find_headings(s: str, clean: str, nls: list[int]) -> list[_Found]:
    """ATX and Setext headings in document order, fences and comments excluded."""
    found: list[_Found] = []
    if "#" in clean:
        for m in _ATX_RE.finditer(clean):
            text = _ATX_CLOSE_RE.sub("", s[m.start(2) : m.end(2)]).strip()
            found.append((m.start() + 1, len(m.group(1)), text, bisect_left(nls, m.start())))
    if "=" in clean or "-" in clean:
        for m in _SETEXT_RE.finditer(clean):
            para = _setext_paragraph(s, clean, nls, bisect_left(nls, m.start()))
            if para is not None:
                level = 1 if m.group(1)[0] == "=" else 2
                found.append((para[0], level, para[1], bisect_left(nls, para[0]) - 1))
        found.sort()
    return found


def _setext_paragraph(s: str, clean: str, nls: list[int], under: int) -> tuple[int, str] | None:
    """The paragraph a setext underline on body line ``under`` makes a heading, if there is one.

    Returns its start offset and its text (lines joined by a space); None when the line above is
    blank, a heading, a break, or the lazy continuation of a list item, quote or table.
    """
    lines: list[tuple[int, int]] = []
    k = under - 1
    while k >= 0:
        start, end = nls[k] + 1, nls[k + 1]
        line = clean[start:end]
        if not line.strip():
            break
        if _NOT_PARA_RE.match(line):
            break
        if _CONTAINER_RE.match(line):
            return None
        lines.append((start, end))
        k -= 1
    if not lines:
        return None
    lines.reverse()
    return lines[0][0], " ".join(s[a:b].strip() for a, b in lines)


# -- step 2: links and tags ---------------------------------------------------------------------

_LABEL = r"(?:[^\[\]\n]|\[[^\[\]\n]*\])*"
_DEST = r"[^()\n]*(?:\([^()\n]*\)[^()\n]*)*"
# Every branch starts with a literal so the regex engine skips ahead to ``[``, ``!`` or ``#``.
_INLINE_RE = re.compile(
    rf"""
      \[\[(?P<w>[^\[\]\n]+)\]\]
    | !\[\[(?P<e>[^\[\]\n]+)\]\]
    | \[(?P<ml>{_LABEL})\]\((?P<md>{_DEST})\)
    | !\[(?P<il>{_LABEL})\]\((?P<id>{_DEST})\)
    | \#(?<![\w/#&\\`\0\u0300-\u036f]\#)(?P<tag>[\w/\u0300-\u036f-]+)
    """,
    re.VERBOSE,
)
_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_TAG_WORD_RE = re.compile(r"[^\W\d]")  # a tag needs a letter or underscore, not only digits
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//")
_TITLE_RE = re.compile(r"""\s*(?:"[^"]*"|'[^']*'|\([^()]*\))\s*""")
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
_BLOCK_RE = re.compile(r"\^([A-Za-z0-9-]+)[ \t\r]*$", re.MULTILINE)


def parse_wiki_inner(inner: str) -> tuple[str, str | None, str | None] | None:
    """Split the text between ``[[`` and ``]]`` into (target, anchor, label).

    ``\\|`` counts as the label separator: it is how a link is written inside a table row. The
    anchor keeps nested headings as ``"H1#H2"`` and block refs as ``"^id"``. None when the link
    names neither a target nor an anchor (``[[]]``, ``[[#]]``, ``[[|x]]``).
    """
    label: str | None = None
    bar = inner.find("|")
    if bar >= 0:
        label = inner[bar + 1 :]
        inner = inner[:bar]
        inner = inner.removesuffix("\\")
    anchor: str | None = None
    hash_at = inner.find("#")
    if hash_at >= 0:
        anchor = inner[hash_at + 1 :].strip() or None
        inner = inner[:hash_at]
    target = inner.strip()
    if not target and anchor is None:
        return None
    return target, anchor, label


def _parse_dest(raw: str) -> tuple[str, str | None] | None:
    """(target, anchor) of a Markdown link destination; None for URLs and malformed ones."""
    raw = raw.strip()
    if raw.startswith("<"):
        close = raw.find(">")
        if close < 0:
            return None
        title = raw[close + 1 :]
        if title.strip() and not _TITLE_RE.fullmatch(title):
            return None
        dest = raw[1:close]
    else:
        parts = raw.split(None, 1)
        if not parts:
            return None
        dest = parts[0]
        if len(parts) > 1 and not _TITLE_RE.fullmatch(parts[1]):
            return None  # a bare space in the destination: not a link, as in CommonMark
    if _SCHEME_RE.match(dest):
        return None  # http:, mailto:, obsidian:, //host: outside the vault
    anchor: str | None = None
    hash_at = dest.find("#")
    if hash_at >= 0:
        anchor = dest[hash_at + 1 :]
        dest = dest[:hash_at]
        anchor = (unquote(anchor) if "%" in anchor else anchor).strip() or None
    target = unquote(dest) if "%" in dest else dest
    if not target and anchor is None:
        return None
    return target, anchor


def _scan_inline(s: str, clean: str, nls: list[int], offset: int, line0: int) -> tuple[list[Link], list[Tag]]:
    """Links and tags in order; ``offset`` and ``line0`` map positions in ``s`` to the whole text."""
    links: list[Link] = []
    tags: list[Tag] = []
    urls = [(u.start(), u.end()) for u in _URL_RE.finditer(clean)] if "://" in clean else []
    for m in _INLINE_RE.finditer(clean):
        group = m.lastgroup
        start = m.start()
        if group is None:  # every branch has a group; this keeps the type checker honest
            continue
        if group == "tag":
            name = m.group("tag")
            if _TAG_WORD_RE.search(name) is None:
                continue
            if urls:
                k = bisect_left(urls, (start, start)) - 1
                if k >= 0 and urls[k][1] > start:
                    continue  # the #fragment of a bare URL
            tags.append(Tag(name, line0 + bisect_left(nls, start)))
            continue
        line = line0 + bisect_left(nls, start)
        if group == "w" or group == "e":
            parsed = parse_wiki_inner(s[m.start(group) : m.end(group)])
            if parsed is None:
                continue
            kind = LinkKind.WIKI if group == "w" else LinkKind.EMBED
            links.append(Link(kind, parsed[0], parsed[1], parsed[2], line, start + offset, m.end() + offset))
        else:
            dest = _parse_dest(s[m.start(group) : m.end(group)])
            if dest is None:
                continue
            kind = LinkKind.MARKDOWN if group == "md" else LinkKind.EMBED
            label_group = "ml" if group == "md" else "il"
            label = s[m.start(label_group) : m.end(label_group)]
            links.append(Link(kind, dest[0], dest[1], label, line, start + offset, m.end() + offset))
    return links, tags


def _scan_blocks(clean: str, nls: list[int], line0: int) -> list[Block]:
    """``^id`` at the end of a line after a space, or alone on its line."""
    blocks: list[Block] = []
    if "^" not in clean:
        return blocks
    for m in _BLOCK_RE.finditer(clean):
        start = m.start()
        if clean[start - 1] in " \t\n":
            blocks.append(Block(m.group(1), line0 + bisect_left(nls, start)))
    return blocks


# -- step 2: tasks ----------------------------------------------------------------------------

# A candidate task line in the clean copy (so a checkbox in fenced code never counts); the line
# itself is then read from the real text by :func:`parse_task`.
_CHECKBOX_RE = re.compile(r"\[[^\]\r\n]\]")  # a first test: starts with a literal, so the engine skips ahead
_TASK_CANDIDATE_RE = re.compile(r"\n[ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[[^\]\r\n]\]")


def _day(text: str | None) -> str | None:
    """A task's day, interned: the vault's tasks then share one string per day."""
    return None if text is None else intern(text)


def _scan_tasks(s: str, clean: str, nls: list[int], body_line: int, headings: list[Heading]) -> list[Task]:
    tasks: list[Task] = []
    if _CHECKBOX_RE.search(clean) is None:
        return tasks
    h = 0
    for m in _TASK_CANDIDATE_RE.finditer(clean):
        k = bisect_left(nls, m.start())  # the body line (0-based) is k, its text s[nls[k]+1 : nls[k+1]]
        end = nls[k + 1] if k + 1 < len(nls) else len(s)
        parsed = parse_task(s[nls[k] + 1 : end])
        if parsed is None:
            continue
        line = body_line + k
        while h < len(headings) and headings[h].line < line:
            h += 1
        tasks.append(
            Task(
                line,
                parsed.status,
                parsed.text,
                headings[h - 1].text if h else None,
                _day(parsed.due),
                _day(parsed.scheduled),
                _day(parsed.start),
                _day(parsed.created),
                _day(parsed.done),
                _day(parsed.cancelled),
                parsed.priority,
                parsed.recurrence,
                parsed.tags,
            )
        )
    return tasks


# -- step 2: words ------------------------------------------------------------------------------

# Han and kana are written without spaces: each character counts as a word. Hangul is written
# with spaces between words, so a Korean word counts once, like a Latin one.
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]")
_CJK_ANY_RE = re.compile(r"[\u3040-\U0002fa1f]")  # one range: a cheaper first test than _CJK_RE
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def _ascii_class(code: int) -> int | None:
    char = chr(code)
    if char.isspace():
        return ord(" ")
    return ord("a") if char.isalnum() or char == "_" else None


# A word is a whitespace-separated token holding a letter, digit or underscore ("-", "|", "—",
# "##" are syntax, not words). Counted on the UTF-8 bytes without making a string per token:
# punctuation is deleted, whitespace becomes " " and every other byte "a" (a non-ASCII byte is
# part of a word character once the non-ASCII spaces and punctuation are replaced), so each
# word is a run of "a" and is counted where it starts.
_WORD_BYTES = bytes(ord("a") if code > 127 else (_ascii_class(code) or 0) for code in range(256))
_PUNCTUATION_BYTES = bytes(code for code in range(128) if _ascii_class(code) is None)


def _count_words(clean: str) -> int:
    cjk = 0
    if not clean.isascii():
        if _CJK_ANY_RE.search(clean) is not None:
            cjk = len(_CJK_RE.findall(clean))
            clean = _CJK_RE.sub(" ", clean)
        for char in set(_NON_ASCII_RE.findall(clean)):
            if char.isspace():
                clean = clean.replace(char, " ")
            elif not char.isalnum():
                clean = clean.replace(char, "")
    runs = clean.encode("utf-8", "surrogatepass").translate(_WORD_BYTES, _PUNCTUATION_BYTES)
    return cjk + runs.count(b" a") + runs.startswith(b"a")


def _count_characters(s: str, nls: list[int]) -> int:
    """The body's characters (code points), line breaks (LF or CRLF) left out."""
    crlf = s.count("\r\n") if "\r" in s else 0
    return len(s) - len(nls) - crlf


# -- public API ---------------------------------------------------------------------------------


def scan(text: str, body_offset: int = 0, body_line: int = 1, *, count_words: bool = True) -> MarkdownScan:
    """Scan the body of one note.

    Args:
        text: the whole note text (frontmatter included); only ``text[body_offset:]`` is read.
        body_offset: where the body starts, as a character offset into ``text``.
        body_line: the 1-based line of ``text`` on which the body starts.
        count_words: off for callers that only want the structure (a write checking links):
            counting is a third of the scan, and ``words`` is then 0.

    Returns:
        Headings, block ids, links, inline tags and the word count, each line and offset relative
        to the whole ``text`` so callers can edit the note in place.
    """
    s = "\n" + text[body_offset:]
    clean = _mask(s)
    nls = _newlines(s)
    line0 = body_line - 1
    found = _find_headings(s, clean, nls)
    links, tags = _scan_inline(s, clean, nls, body_offset - 1, line0)
    headings = [Heading(level, heading, body_line + k) for _, level, heading, k in found]
    return MarkdownScan(
        headings=headings,
        blocks=_scan_blocks(clean, nls, line0),
        links=links,
        tags=tags,
        words=_count_words(clean) if count_words else 0,
        tasks=_scan_tasks(s, clean, nls, body_line, headings),
        characters=_count_characters(s, nls) if count_words else 0,
    )


def links_in_value(s: str, line: int) -> list[Link]:
    """Wiki-links inside one frontmatter string value (``up: "[[Parent]]"``).

    They count for backlinks and renames, but have no body offsets: ``start`` and ``end`` are -1.
    """
    links: list[Link] = []
    if "[[" not in s:
        return links
    for m in _WIKI_RE.finditer(s):
        parsed = parse_wiki_inner(m.group(2))
        if parsed is not None:
            links.append(Link(LinkKind.FRONTMATTER, parsed[0], parsed[1], parsed[2], line, -1, -1))
    return links


def section_spans(text: str, body_offset: int, name: str, level: int = 2) -> list[tuple[int, int]]:
    """Every section of heading ``level`` (H2 unless asked) whose heading text is exactly ``name``
    (after trimming).

    A span runs from the first character of the heading line to just before the next heading of
    that level or above (or the end of ``text``); headings inside fenced code do not count. All
    matches are returned so the caller can refuse a duplicate instead of silently picking the first.
    """
    s = "\n" + text[body_offset:]
    found = _find_headings(s, _mask(s), _newlines(s))
    want = name.strip()
    spans: list[tuple[int, int]] = []
    for i, (pos, found_level, heading, _) in enumerate(found):
        if found_level != level or heading != want:
            continue
        end = next((p for p, lvl, _, _ in found[i + 1 :] if lvl <= level), len(s))
        spans.append((pos - 1 + body_offset, end - 1 + body_offset))
    return spans


def mask_code(body: str) -> str:
    """``body`` with fenced code, code spans and comments blanked, its length and newlines kept:
    where Obsidian reads no links, for a caller that looks for plain prose (wikify)."""
    return _mask("\n" + body)[1:]
