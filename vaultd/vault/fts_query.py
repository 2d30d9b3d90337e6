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

A query is whitespace-separated literal terms, all required. Each term is cut into CJK runs and
the rest; the rest is quoted as one FTS5 string (so ``"``, ``*``, ``-``, ``NEAR``, ``OR``,
``:`` and parentheses are only text) and dropped when the table's own tokenizer finds nothing
indexable in it.
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
_CJK_RUN = re.compile(f"[{_CJK}]+")
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


class CompiledQuery(msgspec.Struct, frozen=True):
    """A query split by table; either side may be absent, and both absent means "no results"."""

    main: str | None  #: MATCH expression for ``fts`` (non-CJK terms), None when there are none
    cjk: str | None  #: MATCH expression for ``cjk``, None when there are no CJK terms
    latin: tuple[str, ...] = ()  #: the non-CJK pieces kept, as typed (NFC)
    cjk_terms: tuple[str, ...] = ()  #: the CJK runs kept (NFC), for snippet marking

    @property
    def empty(self) -> bool:
        return self.main is None and self.cjk is None


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


def _cjk_phrase(run: str) -> str:
    if len(run) == 1:
        return f'"{run}"*'
    return '"' + " ".join(a + b for a, b in itertools.pairwise(run)) + '"'


def compile_query(query: str, tokenize: Tokenize) -> CompiledQuery:
    """Compile user text into AND-ed literal phrases; never raises, whatever ``query`` holds.

    ``tokenize`` must be the ``fts`` table's tokenizer (see ``IndexCache``), so that "has
    something indexable" means exactly what FTS5 will do with the quoted string.
    """
    # Lone surrogates cannot be encoded for SQLite; NUL ends an FTS5 string early.
    text = query[:MAX_QUERY_CHARS].encode("utf-8", "ignore").decode("utf-8")
    text = unicodedata.normalize("NFC", text.replace("\x00", " "))
    main: list[str] = []
    latin: list[str] = []
    cjk: list[str] = []
    cjk_terms: list[str] = []
    for term in text.split()[: MAX_TERMS * 4]:
        for index, piece in enumerate(_SPLIT_RUNS.split(term)):
            if not piece:
                continue
            if index % 2:  # a CJK run
                phrase = _cjk_phrase(piece)
                if phrase not in cjk and len(cjk) + len(main) < MAX_TERMS:
                    cjk.append(phrase)
                    cjk_terms.append(piece)
            elif tokenize(piece):
                phrase = '"' + piece.replace('"', '""') + '"'
                if phrase not in main and len(cjk) + len(main) < MAX_TERMS:
                    main.append(phrase)
                    latin.append(piece)
    return CompiledQuery(
        main=" AND ".join(main) or None,
        cjk=" AND ".join(cjk) or None,
        latin=tuple(latin),
        cjk_terms=tuple(cjk_terms),
    )


def _mark_cjk(text: str, terms: Sequence[str]) -> str:
    """Wrap every occurrence of the CJK ``terms`` in sentinels, longest term first."""
    if not terms:
        return text
    pattern = "|".join(re.escape(t) for t in sorted(set(terms), key=len, reverse=True))
    return re.sub(pattern, lambda m: MARK_OPEN + m.group(0) + MARK_CLOSE, text)


def shape_snippet(raw: str, cjk_terms: Sequence[str] = (), *, cut_before: bool = False, cut_after: bool = False) -> str:
    """Turn sentinel-marked text into what callers see: one line, ``**`` marks, at most 300 chars.

    Whitespace runs collapse to one space, CJK terms are marked too (FTS5 only marks what the
    ``fts`` query matched), a cut never leaves a mark open, and a cut is shown as an ellipsis.
    """
    return marked_snippet(raw, cjk_terms, cut_before=cut_before, cut_after=cut_after)[0]


def marked_snippet(
    raw: str, cjk_terms: Sequence[str] = (), *, cut_before: bool = False, cut_after: bool = False
) -> tuple[str, list[tuple[int, int]]]:
    """:func:`shape_snippet`'s text and where its marks are: for each marked term, the
    ``[start, end)`` character range of the term itself, the ``**`` right outside it. A ``**`` of
    the note's own text is never in that list, so a client can tell the two apart."""
    text = " ".join(raw.replace(ZWSP, "").split())
    text = _mark_cjk(text, cjk_terms)
    budget = SNIPPET_MAX_CHARS - len(ELLIPSIS) - len(HIGHLIGHT_CLOSE)
    out: list[str] = [ELLIPSIS] if cut_before else []
    used = len(out)
    inside = False
    truncated = False
    marks: list[tuple[int, int]] = []
    for ch in text:
        if ch == MARK_OPEN:
            if inside:
                continue
            cost = len(HIGHLIGHT_OPEN)
            piece = HIGHLIGHT_OPEN
        elif ch == MARK_CLOSE:
            if not inside:
                continue
            cost = len(HIGHLIGHT_CLOSE)
            piece = HIGHLIGHT_CLOSE
        else:
            cost = 1
            piece = ch
        if used + cost > budget:
            truncated = True
            break
        out.append(piece)
        used += cost
        if ch == MARK_OPEN:
            inside = True
            marks.append((used, used))
        elif ch == MARK_CLOSE:
            inside = False
            marks[-1] = (marks[-1][0], used - len(HIGHLIGHT_CLOSE))
    if inside:
        if out and out[-1] == HIGHLIGHT_OPEN:
            out.pop()
            marks.pop()
        else:
            out.append(HIGHLIGHT_CLOSE)
            marks[-1] = (marks[-1][0], used)
    if truncated or (cut_after and out):
        out.append(ELLIPSIS)
    return "".join(out), [(start, end) for start, end in marks if end > start]


def cjk_window(text: str, terms: Sequence[str], *, before: int = 80, width: int = 400) -> tuple[str, list[tuple[int, int]]] | None:
    """A snippet (with its marks, as :func:`marked_snippet`) around the first occurrence of any
    CJK term in ``text``; None when none occurs."""
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
    return marked_snippet(text[start:end], terms, cut_before=start > 0, cut_after=end < len(text))
