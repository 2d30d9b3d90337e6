"""Properties of the query compiler, the text preparation, snippets, and search as a whole.

Any text a user can type compiles to a conjunction of quoted FTS5 strings, never raises, and
never reaches FTS5 as syntax; every hit holds every term it was asked for.
"""

from __future__ import annotations

import itertools
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from vaultd.vault import fts_query
from vaultd.vault.cache import IndexCache, SearchDoc
from vaultd.vault.model import NoteRecord

if TYPE_CHECKING:
    from collections.abc import Iterator

_CON = apsw.Connection(":memory:")
_CON.execute(
    "CREATE VIRTUAL TABLE fts USING fts5(title, meta, body, tokenize='unicode61 remove_diacritics 2');"
    "CREATE VIRTUAL TABLE cjk USING fts5(title, meta, body, tokenize='ascii',"
    " content='', contentless_delete=1);"
    "INSERT INTO fts VALUES ('t', 'm', 'b');"
)
_TOKENIZER = _CON.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])


def tokenize(text: str) -> list[str]:
    tokens: list[str] = _TOKENIZER(text.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False, include_colocated=False)  # type: ignore[assignment]
    return tokens


QUOTED = r'"(?:[^"\x00]|"")*"'
MAIN_SHAPE = re.compile(rf"{QUOTED}(?: AND {QUOTED})*")
CJK_SHAPE = re.compile(rf"{QUOTED}\*?(?: AND {QUOTED}\*?)*")

VOCAB = [
    "alpha",
    "Beta",
    "café",
    "CAFE",
    "naïve",
    "x-ray",
    "e-mail",
    "zürich",
    "über",
    "2024",
    "NEAR",
    "OR",
    "AND",
    "NOT",
    "사업단",
    "해외사업단",
    "사업",
    "단",
    "検索",
    "エンジン",
    "全文検索",
    "中文",
    "API",
    "API를",
    "gamma",
    "delta",
    "ß",
    "İstanbul",
    "ǆemal",
]
SYNTAX = ['"', "*", "-", "(", ")", "^", ":", "NEAR(", "OR", "AND", "NOT", "+", "\x00", "{", "}", "title:"]

terms = st.one_of(
    st.sampled_from(VOCAB),
    st.builds(lambda a, b: a + b, st.sampled_from(SYNTAX), st.sampled_from(VOCAB)),
    st.builds(lambda a, b: a + b, st.sampled_from(VOCAB), st.sampled_from(SYNTAX)),
    st.sampled_from(SYNTAX),
    st.text(max_size=8),
)
queries = st.one_of(
    st.text(),
    st.lists(terms, max_size=5).map(" ".join),
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(" ".join),
)

DOCS = [
    ("a.md", "Alpha notes", "x-ray e-mail", "alpha beta gamma café in Zürich, naïve über 2024"),
    ("b.md", "Beta", "", "beta delta NEAR OR AND NOT words; İstanbul ǆemal ß"),
    ("c.md", "사업단 소개", "해외사업단", "우리 해외사업단은 새 API를 쓴다. alpha"),
    ("d.md", "検索", "", "全文検索エンジン と 中文 検索. gamma delta"),
    ("e/f.md", "Gamma", "alias delta", "cafe zurich naive uber alpha API"),
]


@pytest.fixture(scope="module")
def populated() -> Iterator[IndexCache]:
    folder = Path(tempfile.mkdtemp())
    cache = IndexCache.open(folder / "p.sqlite")
    cache.apply(
        (
            NoteRecord(
                path=path,
                size=1,
                mtime_ns=1,
                ino=1,
                sha256="",
                title=title,
                frontmatter=None,
                aliases=[],
                tags=[],
                headings=[],
                blocks=[],
                links=[],
                issues=[],
                words=0,
                body_offset=0,
            ),
            SearchDoc(title=title, description=meta, body=body, tags=["t/u"]),
        )
        for path, title, meta, body in DOCS
    )
    yield cache
    cache.close()


def fold(text: str) -> str:
    """Case and diacritics folded the way the brief states the property (not via FTS5)."""
    decomposed = unicodedata.normalize("NFKD", text.replace(fts_query.ZWSP, " "))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def contains_tokens(haystack: str, piece: str) -> bool:
    """Whether the FTS5 tokens of ``piece`` occur consecutively in those of ``haystack`` as indexed."""
    hay, needle = tokenize(fts_query.prepare(haystack)[0]), tokenize(piece)
    return any(hay[i : i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))


# -- compile_query -------------------------------------------------------------------------------


@given(queries)
@settings(max_examples=500, deadline=None)
@example('a"b NEAR(c d) -e f* ^g title:h (i OR j)')
@example('\x00"\x00')
@example("\ud800 lone surrogate")
def test_compile_never_raises_and_is_only_quoted_strings(query: str) -> None:
    q = fts_query.compile_query(query, tokenize)
    if q.main is not None:
        assert MAIN_SHAPE.fullmatch(q.main), q.main
        assert _CON.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (q.main,)).get >= 0
    if q.cjk is not None:
        assert CJK_SHAPE.fullmatch(q.cjk), q.cjk
        assert _CON.execute("SELECT count(*) FROM cjk WHERE cjk MATCH ?", (q.cjk,)).get >= 0
    assert q.empty == (q.main is None and q.cjk is None)
    assert len(q.latin) + len(q.cjk_terms) <= fts_query.MAX_TERMS
    for piece in q.latin:
        assert tokenize(piece), piece  # kept pieces have something indexable


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1), max_size=6))
@settings(max_examples=300, deadline=None)
def test_a_term_is_dropped_exactly_when_nothing_in_it_is_indexable(words: list[str]) -> None:
    q = fts_query.compile_query(" ".join(words), tokenize)
    text = unicodedata.normalize("NFC", " ".join(words).replace("\x00", " "))
    expected = any(
        tokenize(piece) or fts_query._CJK_RUN.fullmatch(piece)
        for term in text.split()
        for piece in fts_query._SPLIT_RUNS.split(term)
        if piece
    )
    assert (not q.empty) == expected


def test_cjk_terms_compile_to_bigram_phrases() -> None:
    q = fts_query.compile_query("사업단 検索 단 API를", tokenize)
    assert q.cjk == '"사업 업단" AND "検索" AND "단"* AND "를"*'
    assert q.main == '"API"'
    assert q.cjk_terms == ("사업단", "検索", "단", "를")


# -- prepare -------------------------------------------------------------------------------------


@given(st.text())
@settings(max_examples=500, deadline=None)
@example("API를 해외사업단")
def test_prepare_only_adds_separators(text: str) -> None:
    prepared, grams = fts_query.prepare(text)
    expected = unicodedata.normalize("NFC", text)
    expected = expected.replace(fts_query.MARK_OPEN, " ").replace(fts_query.MARK_CLOSE, " ")
    assert prepared.replace(fts_query.ZWSP, "") == expected.replace(fts_query.ZWSP, "")
    runs = fts_query._CJK_RUN.findall(prepared)
    assert bool(grams) == bool(runs)
    for run in runs:
        for a, b in itertools.pairwise(run):
            assert a + b in grams.split(" ")


# -- snippets ------------------------------------------------------------------------------------


@given(
    st.lists(
        st.one_of(st.text(max_size=40), st.sampled_from([fts_query.MARK_OPEN, fts_query.MARK_CLOSE, "\u200b"])),
        max_size=60,
    ).map("".join),
    st.lists(st.sampled_from(["사업", "検索", "단"]), max_size=2),
)
@settings(max_examples=300, deadline=None)
def test_snippets_are_bounded_and_balanced(raw: str, cjk_terms: list[str]) -> None:
    snippet = fts_query.shape_snippet(raw, cjk_terms)
    assert len(snippet) <= fts_query.SNIPPET_MAX_CHARS
    assert fts_query.MARK_OPEN not in snippet and fts_query.MARK_CLOSE not in snippet
    assert fts_query.ZWSP not in snippet


# -- search --------------------------------------------------------------------------------------


@given(queries, st.sampled_from([None, "t", "t/u", "v"]), st.sampled_from([None, "", "e", "x"]))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example("alpha", None, None)
@example("사업단 api", None, None)
@example("CAFE zurich", None, "e")
def test_search_never_raises_and_hits_hold_every_term(populated: IndexCache, query: str, tag: str | None, folder: str | None) -> None:
    hits = populated.search(query, tag=tag, folder=folder, limit=10)
    event("hits" if hits else "no hits")
    compiled = fts_query.compile_query(query, tokenize)
    if compiled.empty or tag == "v" or folder == "x":
        assert hits == []
        return
    columns = {path: (title, meta, body) for path, title, meta, body in DOCS}
    keys = [(-h.score, h.path) for h in hits]
    assert keys == sorted(keys)  # best first, ties by path
    for hit in hits:
        assert folder in (None, "") or hit.path.startswith(f"{folder}/")
        texts = columns[hit.path]
        assert hit.title == texts[0]
        assert len(hit.snippet) <= fts_query.SNIPPET_MAX_CHARS
        for piece in compiled.latin:
            assert any(contains_tokens(t, piece) for t in texts), (piece, hit.path)
            simple = [w for w in re.split(r"\W+", fold(piece)) if w]
            if piece.isascii():
                assert any(all(w in fold(t) for w in simple) for t in texts), (piece, hit.path)
        for term in compiled.cjk_terms:
            assert any(term in unicodedata.normalize("NFC", t) for t in texts), (term, hit.path)
