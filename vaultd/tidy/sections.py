"""A note's body as H2 sections, for the rules that add or fold one (T03, T05, T06).

Headings come from the Markdown scanner, so a ``## Topics`` line inside a code fence is text, not
a section. A section runs from its heading line to the next heading of level 1 or 2. Only the
lines a rule adds or removes change; every other line keeps its bytes and its line ending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultd.vault import frontmatter, markdown

RELEVANT = "Relevant Notes"
TOPICS = "Topics"
_WIKI = re.compile(r"!?\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    start: int  #: index (0-based) of the heading line in the note's lines
    end: int  #: index just past the section's last line


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def sections(text: str) -> list[Section]:
    """The note's H2 sections, in order."""
    parsed = frontmatter.parse(text)
    scan = markdown.scan(text, parsed.body_offset, parsed.body_line, count_words=False)
    total = len(lines_of(text))
    cuts = [h for h in scan.headings if h.level <= 2]
    found: list[Section] = []
    for i, heading in enumerate(cuts):
        if heading.level != 2:
            continue
        end = cuts[i + 1].line - 1 if i + 1 < len(cuts) else total
        found.append(Section(heading.text, heading.line - 1, end))
    return found


def find(text: str, title: str) -> Section | None:
    return next((s for s in sections(text) if s.title.casefold() == title.casefold()), None)


def links_in(lines: list[str]) -> list[str]:
    """The wiki link targets of ``lines``, in order, each once."""
    seen: list[str] = []
    for line in lines:
        for m in _WIKI.finditer(line):
            target = m.group(1).strip()
            if target not in seen:
                seen.append(target)
    return seen


def _trimmed_end(lines: list[str], section: Section) -> int:
    """Past the section's last line that is not blank."""
    end = section.end
    while end > section.start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def add_to_section(text: str, title: str, items: list[str], *, before: str | None = None) -> tuple[str, int]:
    """``text`` with ``items`` (whole lines, without line breaks) at the end of the ``## title``
    section, made where absent (before the ``## before`` section when there is one, else at the
    end); and the 1-based line of the first item added."""
    nl = newline_of(text)
    lines = lines_of(text)
    section = find(text, title)
    added = [item + nl for item in items]
    if section is not None:
        at = _trimmed_end(lines, section)
        if not lines[at - 1].endswith(("\n", "\r")):
            lines[at - 1] += nl
        lines[at:at] = added
        return "".join(lines), at + 1
    block = [f"## {title}{nl}", nl, *added]
    anchor = find(text, before) if before else None
    if anchor is not None:
        at = anchor.start
        lines[at:at] = [*block, nl]
        return "".join(lines), at + 3
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += nl
    if lines and lines[-1].strip():
        lines.append(nl)
    first = len(lines) + 3
    lines += block
    return "".join(lines), first


def remove_section(text: str, section: Section) -> tuple[str, list[str]]:
    """``text`` without ``section`` (its heading, its lines and the blank lines after); and the
    section's own lines, without the heading."""
    lines = lines_of(text)
    body = lines[section.start + 1 : section.end]
    del lines[section.start : section.end]
    return "".join(lines), body


_TOPIC_ITEM = re.compile(r"[ \t]*[-*+][ \t]+\[\[[^\]\n]+\]\][ \t]*\r?\n?")


def sync_topics(text: str, names: list[str]) -> str:
    """``text`` with its ``## Topics`` list naming ``names``: the list's link items replaced (every
    other line of the section kept), the section added at the end when the note has none."""
    items = [f"- [[{name}]]" for name in names]
    section = find(text, TOPICS)
    if section is None:
        return add_to_section(text, TOPICS, items)[0] if items else text
    nl = newline_of(text)
    lines = lines_of(text)
    own = lines[section.start + 1 : section.end]
    kept = [line for line in own if not _TOPIC_ITEM.fullmatch(line)]
    first = next((i for i, line in enumerate(own) if _TOPIC_ITEM.fullmatch(line)), None)
    at = first if first is not None else len(kept)
    while first is None and at > 0 and not kept[at - 1].strip():
        at -= 1
    if first is None and items and not (kept[:at] and not kept[at - 1].strip()):
        items = ["", *items]
    new = [*kept[:at], *(item + nl for item in items), *kept[at:]]
    if new and not new[-1].endswith(("\n", "\r")) and section.end < len(lines):
        new[-1] += nl
    lines[section.start + 1 : section.end] = new
    return "".join(lines)
