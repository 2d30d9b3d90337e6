"""Link rules: dead links (L01), ambiguous links (L02), missing anchors (L03), embeds of missing
attachments (L13); and the two fixes that cannot change what a link means.

- A bare ``[[alias]]`` is dead (aliases are not link targets), but when exactly one note carries
  that alias the writer meant that note: ``[[Note|alias]]`` links it and shows the same text.
- An ambiguous ``[[Name]]``, where one candidate sits in the linking note's own folder, is the
  one Obsidian opens: the path-qualified ``[[folder/Name|Name]]`` says so and shows the same
  text. With no candidate there, no choice is safe: the finding lists each candidate's rewrite
  and a person picks.

Fixes are made for wiki-links and embeds in the body only (frontmatter links are reported, not
rewritten). A fix keeps the link's anchor and label; a label added to keep the shown text uses
``\\|`` inside a table row, as Obsidian writes it there.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from dataclasses import replace

from protocol.methods.lint import LintCode
from vaultd.graph.snapshot import Resolved
from vaultd.lint.model import Finding, Fix, LintInput
from vaultd.vault.link_targets import ResolutionStatus, check_anchor
from vaultd.vault.model import LinkKind
from vaultd.vault.walk import is_note_path

MAX_CANDIDATES_SHOWN = 5
_WIKI_KINDS = (LinkKind.WIKI, LinkKind.EMBED)
_RESOLVED = ResolutionStatus.RESOLVED
_MISSING = ResolutionStatus.MISSING


def link_text(inp: LintInput, path: str) -> str:
    """The shortest text naming ``path`` unambiguously: its bare name, else its path (memoized
    per lint: the same note is often the target of many fixes)."""
    memo = inp.memo.setdefault("link_text", {})
    if path not in memo:
        memo[path] = _link_text(inp, path)
    return memo[path]


def _link_text(inp: LintInput, path: str) -> str:
    name = path.rpartition("/")[2]
    bare = name[:-3] if is_note_path(name) else name
    if inp.resolve is not None:
        res = inp.resolve(bare, "")
        if res.status is ResolutionStatus.RESOLVED and res.path == path:
            return bare
    full = path[:-3] if is_note_path(path) else path
    return full if "/" in full else "/" + full


def _rewrite_wiki(raw: str, new_target: str, keep_shown: bool, in_table: bool) -> str | None:
    """``raw`` (``[[t#a|l]]`` or ``![[t]]``) with its target replaced, the anchor and label kept."""
    embed = raw.startswith("!")
    open_len = 3 if embed else 2
    if not raw.endswith("]]"):
        return None
    inner = raw[open_len:-2]
    bar = inner.find("|")
    head, tail = (inner, "") if bar < 0 else (inner[:bar], inner[bar:])
    escaped = head.endswith("\\")
    if escaped:
        head, tail = head[:-1], "\\" + tail
    hash_at = head.find("#")
    target, anchor = (head, "") if hash_at < 0 else (head[:hash_at], head[hash_at:])
    shown = target.strip()
    if not shown:
        return None
    label = tail
    if not label and keep_shown and not embed and not anchor:
        label = ("\\|" if in_table else "|") + shown
    return raw[:open_len] + new_target + anchor + label + "]]"


def _in_table(text_line: str) -> bool:
    return text_line.lstrip().startswith("|")


def _repair(inp: LintInput, source: str, res: Resolved, new_path: str) -> tuple[Resolved, str, str] | None:
    """(link, new path, new target text) when the link can be pointed at ``new_path`` by a
    rewrite of its target alone: a body wiki-link or embed whose new target resolves there."""
    link = res.link
    if link.kind not in _WIKI_KINDS or link.start < 0 or inp.resolve is None:
        return None
    target = link_text(inp, new_path)
    check = inp.resolve(target, source)
    if check.status is not ResolutionStatus.RESOLVED or check.path != new_path:
        return None
    return res, new_path, target


def make_fix(finding: Finding, text_of: TextOf) -> Finding:
    """``finding`` with its fix, made from the note's text as the index parsed it (unchanged
    when the text is not at hand, or no longer holds a wiki-link there)."""
    if finding.repair is None or finding.fix is not None:
        return finding
    res, _new_path, target = finding.repair
    raw, line_text = _span(text_of(finding.note), res)
    if raw is None or not raw.startswith(("[[", "![[")):
        return finding
    new = _rewrite_wiki(raw, target, keep_shown=True, in_table=_in_table(line_text))
    if new is None or new == raw:
        return finding
    return replace(finding, fix=Fix(finding.note, res.link.line, res.link.start, res.link.end, raw, new))


def _qualified(path: str) -> str:
    full = path[:-3] if is_note_path(path) else path
    return full if "/" in full else "/" + full


def _raw(res: Resolved) -> str:
    """The link as written, rebuilt from the record (the index keeps offsets, not the text)."""
    link = res.link
    anchor = f"#{link.anchor}" if link.anchor else ""
    label = f"|{link.label}" if link.label is not None else ""
    if link.kind is LinkKind.MARKDOWN:
        return f"[{link.label or ''}]({link.target}{anchor})"
    return ("!" if link.kind is LinkKind.EMBED else "") + f"[[{link.target}{anchor}{label}]]"


TextOf = Callable[[str], str | None]


def _span(text: str | None, res: Resolved) -> tuple[str | None, str]:
    """(the link as written, its line) from the note's text, when the text is at hand."""
    link = res.link
    if text is None or link.start < 0 or link.end > len(text):
        return None, ""
    start = text.rfind("\n", 0, link.start) + 1
    end = text.find("\n", link.start)
    return text[link.start : link.end], text[start : len(text) if end < 0 else end]


def link_findings(inp: LintInput) -> Iterator[Finding]:
    """L01, L02, L03 and L13 for every link of every note.

    A finding that can be fixed carries its ``repair``; the fix itself is made from the note's
    text by :func:`make_fix`, for the findings that need it (those listed, or those lint.fix
    applies), so a lint never reads a file for a finding nobody sees.
    """
    snap = inp.snap
    notes = snap.notes
    anchors: dict[tuple[str, str], str | None] = {}  #: (note, anchor) -> problem; anchors recur across a vault
    nearby: dict[tuple[tuple[str, ...], str], list[str]] = {}  #: (candidates, folder) -> those in the folder
    for source in sorted(snap.flagged):
        record = notes[source]
        answers = snap.answers[source]
        for i in snap.flagged[source]:
            inp.deadline.tick()
            link, answer = record.links[i], answers[i]
            status, path = answer[0], answer[1]
            if status is _RESOLVED:
                if path is None or link.anchor is None or path not in notes:
                    continue
                key = (path, link.anchor)
                if key in anchors:
                    problem = anchors[key]
                else:
                    target = notes[path]
                    problem = anchors[key] = check_anchor(link.anchor, target.headings, target.blocks)
                if problem:
                    yield Finding(LintCode.L03, source, f"{_raw(Resolved(link, *answer))}: {problem}", link.line)
            elif not link.target.strip() and not link.anchor:
                continue
            elif status is _MISSING:
                yield _dead(inp, source, Resolved(link, *answer))
            else:
                folder = source.rpartition("/")[0]
                near_key = (answer[2], folder)
                near = nearby.get(near_key)
                if near is None:
                    near = nearby[near_key] = [c for c in answer[2] if c.rpartition("/")[0] == folder]
                yield _ambiguous(inp, source, Resolved(link, *answer), near)


def _dead(inp: LintInput, source: str, res: Resolved) -> Finding:
    link = res.link
    target = link.target.strip()
    ext = posixpath.splitext(target)[1].lower()
    if link.kind is LinkKind.EMBED and ext and ext != ".md":
        return Finding(LintCode.L13, source, f"{_raw(res)} embeds {target}, which does not exist", link.line)
    owners = inp.by_alias(target) if "/" not in target else []
    if len(owners) == 1 and link.kind in (LinkKind.WIKI, LinkKind.EMBED):
        message = f"{_raw(res)} names an alias of {owners[0]}; aliases are not link targets"
        return Finding(LintCode.L01, source, message, link.line, repair=_repair(inp, source, res, owners[0]))
    return Finding(LintCode.L01, source, f"{_raw(res)} names no note or file", link.line, hint=target)


def _ambiguous(inp: LintInput, source: str, res: Resolved, near: list[str]) -> Finding:
    link = res.link
    candidates = list(res.candidates)
    raw = _raw(res)
    if len(near) == 1:
        message = f"{raw} matches {len(candidates)} files; Obsidian opens {near[0]}"
        return Finding(LintCode.L02, source, message, link.line, repair=_repair(inp, source, res, near[0]))
    if not candidates:
        return Finding(LintCode.L02, source, f"{raw} matches several files; write it with the folder path", link.line)
    shown = [f"[[{_qualified(c)}]]" for c in candidates[:MAX_CANDIDATES_SHOWN]]
    more = f" (and {len(candidates) - MAX_CANDIDATES_SHOWN} more)" if len(candidates) > MAX_CANDIDATES_SHOWN else ""
    return Finding(LintCode.L02, source, f"{raw} matches {len(candidates)} files; write {' or '.join(shown)}{more}", link.line)
