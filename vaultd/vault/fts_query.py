"""How text meets FTS5: what the cache indexes, how a user's query compiles, how snippets look.

Two FTS5 tables hold the same three columns (title, meta, body); see :mod:`vaultd.vault.cache.sqlite_file`:

* ``fts`` (``unicode61 remove_diacritics 2``) indexes the text itself. unicode61 would glue a
  Latin word to the Hangul particle after it (``API를`` is one token), so :func:`prepare`
  puts a zero-width space (a unicode61 separator) at every boundary between a CJK run and a
  Latin letter or digit; ``API`` then finds ``API를``. The zero-width spaces are stripped from
  everything shown to a caller.
* ``cjk`` (``ascii`` tokenizer, contentless) indexes only the CJK runs as overlapping character
  bigrams (NFC), each run followed by its last character: ``해외사업단`` becomes
  ``해외 외사 사업 업단 단``. A 2-character query term is one bigram lookup, a longer one the
  phrase of its consecutive bigrams, and a single character the prefix ``"사"*`` (a bigram
  starting with it, or a run's trailing character). The trailing character also keeps a phrase
  from matching across two runs. ``ascii`` treats every non-ASCII code point as a token
  character, so bigrams survive whatever Unicode version SQLite's tables know.

A query's words (parsed by :mod:`vaultd.vault.search_syntax`, planned by
:mod:`vaultd.vault.cache.query_plan`) are cut into CJK runs and the rest; the rest is quoted as
one FTS5 string (:func:`quote`: so ``"``, ``*``, ``-``, ``NEAR``, ``OR``, ``:`` and parentheses
inside it are only text) and dropped when the table's own tokenizer finds nothing indexable in it.

Snippets (:func:`shape_snippet`) mark what matched with ``**``; a mark that would fall inside a
``[[link]]`` or a Markdown link covers the whole link instead, so the snippet's links stay links.
The same text without the marks and the marked spans (:class:`Shaped`) let a client highlight it
in a way the note's own ``**`` cannot be confused with.
"""

from __future__ import annotations

import itertools
import operator
import re
import unicodedata
from collections.abc import Callable, Sequence

import msgspec

#: Hangul (jamo, compatibility jamo, syllables, halfwidth), Hiragana, Katakana (with phonetic
#: extensions, halfwidth) and Han (unified, extensions, compatibility, iteration marks).
_CJK = (
    "\u1100-\u11ff\u3005-\u3007\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
    "\uff66-\uff9f\uffa1-\uffdc\U0001b000-\U0001b16f\U00020000-\U000323af"
)
CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_RUN = CJK_RUN
_SPLIT_RUNS = re.compile(f"([{_CJK}]+)")
_SURROGATE = re.compile("[\ud800-\udfff]")

ZWSP = "\u200b"
#: Snippet markers while a snippet is being shaped; noncharacters, removed from indexed text.
MARK_OPEN = "\ufdd0"
MARK_CLOSE = "\ufdd1"
_SENTINELS = str.maketrans({MARK_OPEN: " ", MARK_CLOSE: " "})

#: What callers see around a matched term, and at a cut.
HIGHLIGHT_OPEN = "**"
HIGHLIGHT_CLOSE = "**"
ELLIPSIS = "\u2026"
SNIPPET_MAX_CHARS = 300

MAX_QUERY_CHARS = 1024
MAX_TERMS = 32

Tokenize = Callable[[str], Sequence[str]]


def is_storable(text: str) -> bool:
    """False for text SQLite cannot hold: lone surrogates (undecodable file-name bytes, YAML escapes)."""
    return text.isascii() or _SURROGATE.search(text) is None


def storable(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD."""
    return text if is_storable(text) else _SURROGATE.sub("\ufffd", text)


def prepare(text: str) -> tuple[str, str]:
    """The ``fts`` and ``cjk`` forms of one column's text.

    The first is ``text`` in NFC, without snippet sentinels or lone surrogates, with a
    zero-width space wherever a CJK run touches a letter or digit of another script (``2024년``,
    ``API를``); the second is the bigram text of its CJK runs, "" when it has none. One regex
    split serves both.
    """
    if text.isascii():
        return text, ""
    text = storable(text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if MARK_OPEN in text or MARK_CLOSE in text:
        text = text.translate(_SENTINELS)
    pieces = _SPLIT_RUNS.split(text)
    if len(pieces) == 1:
        return text, ""
    out = [pieces[0]]
    grams: list[str] = []
    for i in range(1, len(pieces), 2):
        run, before, after = pieces[i], pieces[i - 1], pieces[i + 1]
        if before and before[-1].isalnum():
            out.append(ZWSP)
        out.append(run)
        if after and after[0].isalnum():
            out.append(ZWSP)
        out.append(after)
        grams.extend(map(operator.add, run, run[1:]))  # pairwise, without a tuple per pair
        grams.append(run[-1])
    return "".join(out), " ".join(grams)


_HIRAGANA_PAIR = re.compile("[\u3041-\u309f\u30fc]{2}")


def question_grams(text: str) -> list[str]:
    """The bigrams a ranked (any-word) question asks the chunk index for, most telling kept.

    A Japanese question is mostly particles and verb endings written in hiragana (の, を,
    したい, ですか) around the few words that carry it (容量, ディスク, 確認): asked as
    alternatives, their bigrams (した, たい) match most passages and outvote the rare ones.
    A bigram of two hiragana, and a run's trailing single character, are left out; a question
    written in hiragana alone keeps every bigram, so it is never asked as nothing.
    """
    grams = prepare(text)[1].split()
    telling = [g for g in grams if len(g) == 2 and _HIRAGANA_PAIR.fullmatch(g) is None]
    return telling or grams


def cjk_phrase(run: str) -> str:
    """The bigram-table atom of one CJK run: the phrase of its bigrams, or a prefix for one character."""
    if len(run) == 1:
        return f'"{run}"*'
    return '"' + " ".join(a + b for a, b in itertools.pairwise(run)) + '"'


def quote(text: str) -> str:
    """``text`` as one FTS5 string: everything inside is literal text, a ``"`` doubled."""
    return '"' + text.replace('"', '""') + '"'


def pieces(term: str) -> list[tuple[str, bool]]:
    """``term`` cut into its CJK runs and the rest, in order: (piece, is a CJK run)."""
    return [(piece, bool(i % 2)) for i, piece in enumerate(_SPLIT_RUNS.split(term)) if piece]


def _mark_cjk(text: str, terms: Sequence[str]) -> str:
    """Wrap every occurrence of the CJK ``terms`` in sentinels, longest term first."""
    if not terms:
        return text
    pattern = "|".join(re.escape(t) for t in sorted(set(terms), key=len, reverse=True))
    return re.sub(pattern, lambda m: MARK_OPEN + m.group(0) + MARK_CLOSE, text)


class Shaped(msgspec.Struct, frozen=True):
    """A snippet as text plus marked spans, and as Markdown with ``**`` around them."""

    snippet: str  #: at most SNIPPET_MAX_CHARS, matches in ``**``, cuts as ``…``
    excerpt: str  #: the same text without the marks
    highlights: tuple[tuple[int, int], ...]  #: [start, end) of each match in ``excerpt``, in order


# A link the snippet may show whole: [[...]] or ![[...]], and [label](dest) or ![alt](dest).
_LINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]|!?\[[^\[\]\n]*\]\([^()\n]*\)")


def _link_spans(plain: str) -> list[tuple[int, int]]:
    """The links in ``plain``, and a wiki-link the snippet's cut left open at either end."""
    spans = [m.span() for m in _LINK.finditer(plain)]
    first_close, first_open = plain.find("]]"), plain.find("[[")
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        spans.append((1 if plain.startswith(ELLIPSIS) else 0, first_close + 2))
    last_open, last_close = plain.rfind("[["), plain.rfind("]]")
    if last_open > last_close:
        spans.append((last_open, len(plain) - (1 if plain.endswith(ELLIPSIS) else 0)))
    return spans


_SENTINEL_SPLIT = re.compile(f"([{MARK_OPEN}{MARK_CLOSE}])")


def _marked(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text without sentinels, and the marked spans in it (merged, in order); a mark
    touching a link is widened to the whole link, and to every link that one touches."""
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    inside = False
    for piece in _SENTINEL_SPLIT.split(text):
        if piece == MARK_OPEN:
            inside = True
        elif piece == MARK_CLOSE:
            inside = False
        elif piece:
            if inside:
                spans.append((at, at + len(piece)))
            plain.append(piece)
            at += len(piece)
    joined = "".join(plain)
    if spans and ("[" in joined or "]" in joined):
        # Until no link is left half covered: a link that widens a mark may itself overlap
        # another link (a wiki-link cut open inside a Markdown link's destination, say).
        links = _link_spans(joined)
        while touching := [(a, b) for a, b in links if any(s < b and a < e for s, e in spans)]:
            spans += touching
            links = [link for link in links if link not in touching]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return joined, merged


def shape_snippet(raw: str, cjk_terms: Sequence[str] = (), *, cut_before: bool = False, cut_after: bool = False) -> Shaped:
    """Turn sentinel-marked text into what callers see: one line, marks, at most 300 chars.

    Whitespace runs collapse to one space, CJK terms are marked too (FTS5 only marks what the
    ``fts`` query matched), a mark never lands inside a link (it covers the link), a cut never
    leaves a mark open, and a cut is shown as an ellipsis.
    """
    text = " ".join(raw.replace(ZWSP, "").split())
    plain, spans = _marked(_mark_cjk(text, cjk_terms))
    budget = SNIPPET_MAX_CHARS - len(ELLIPSIS) - len(HIGHLIGHT_CLOSE)
    lead = ELLIPSIS if cut_before else ""
    out: list[str] = [lead]
    kept: list[tuple[int, int]] = []
    used, pos, cut = len(lead), 0, len(plain)
    truncated = False
    for start, end in [*spans, (len(plain), len(plain))]:
        if start - pos > budget - used:  # the unmarked text before the next mark
            cut = pos + max(budget - used, 0)
            out.append(plain[pos:cut])
            truncated = True
            break
        out.append(plain[pos:start])
        used += start - pos
        if start == end:
            break
        room = budget - used - len(HIGHLIGHT_OPEN)
        if room < 1:
            cut, truncated = start, True
            break
        take = min(end, start + room)
        out += [HIGHLIGHT_OPEN, plain[start:take], HIGHLIGHT_CLOSE]
        kept.append((len(lead) + start, len(lead) + take))
        used += len(HIGHLIGHT_OPEN) + (take - start) + len(HIGHLIGHT_CLOSE)
        if take < end:
            cut, truncated = take, True
            break
        pos = end
    tail = ELLIPSIS if truncated or (cut_after and (lead or plain)) else ""
    return Shaped("".join(out) + tail, lead + plain[:cut] + tail, tuple(kept))


def lead_snippet(text: str) -> Shaped:
    """The start of a note's text, unmarked: the snippet of a hit found by filters alone."""
    return shape_snippet(text[:400], cut_after=len(text) > 400)


def cjk_window(text: str, terms: Sequence[str], *, before: int = 80, width: int = 400) -> Shaped | None:
    """A snippet around the first occurrence of any CJK term in ``text``; None when none occurs."""
    positions = [p for p in (text.find(t) for t in terms) if p >= 0]
    if not positions:
        return None
    start = max(0, min(positions) - before)
    # Start at a word boundary when one is near, so the window does not open mid-word.
    if start:
        space = text.find(" ", start, start + 20)
        if space != -1 and space < min(positions):
            start = space + 1
    end = start + width
    return shape_snippet(text[start:end], terms, cut_before=start > 0, cut_after=end < len(text))
