"""Properties of the query language, its plan, the text preparation, snippets, and search as a whole.

Any text a user can type (words, quotes, OR, NOT, -, parentheses, tag:, path:, FTS5's own syntax)
is planned without raising; its MATCH expressions are quoted FTS5 strings joined only by our own
operators and parentheses, and its SQL only our own fragments with bound parameters, so user text
never reaches FTS5 or SQL as syntax. The hits of a search are exactly the notes an independent
evaluation of the parsed query over the documents selects.
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

from vaultd.vault import fts_query, search_syntax
from vaultd.vault.cache import IndexCache, SearchDoc, query_plan
from vaultd.vault.cache.query_plan import Both, Compiled, Either, FolderIs, Leaf, Neg, Table, TagIs
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
#: Everything a MATCH expression may hold: quoted strings (a prefix * after one), our parentheses
#: and our operators between them.
MATCH_TOKEN = re.compile(rf"{QUOTED}\*?|\(|\)| AND | OR | NOT ")
#: Everything the GENERAL mode's SQL may hold besides bound parameters.
SQL_FRAGMENTS = [
    "note.id IN (SELECT rowid FROM fts WHERE fts MATCH ?)",
    "note.id IN (SELECT rowid FROM cjk WHERE cjk MATCH ?)",
    "note.id IN (SELECT id FROM tag WHERE tag = ?)",
    "(note.folder = ? OR (note.folder >= ? AND note.folder < ?))",
    "NOT (",
    " AND ",
    " OR ",
    "(",
    ")",
]

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
SYNTAX = ['"', "*", "-", "(", ")", "^", ":", "NEAR(", "OR", "AND", "NOT", "+", "\x00", "{", "}", "title:", "tag:", "path:", "tag:#", "-("]

terms = st.one_of(
    st.sampled_from(VOCAB),
    st.builds(lambda a, b: a + b, st.sampled_from(SYNTAX), st.sampled_from(VOCAB)),
    st.builds(lambda a, b: a + b, st.sampled_from(VOCAB), st.sampled_from(SYNTAX)),
    st.sampled_from(SYNTAX),
    st.text(max_size=8),
)
OPERATORS = ["OR", "AND", "NOT", "-", "(", ")", '"', "tag:t", "tag:#t/u", "tag:v", "path:e", "path:e/", "path:x", 'path:"e"']
queries = st.one_of(
    st.text(),
    st.lists(terms, max_size=5).map(" ".join),
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(" ".join),
    st.lists(st.one_of(st.sampled_from(VOCAB), st.sampled_from(OPERATORS)), min_size=1, max_size=8).map(" ".join),
    st.lists(st.one_of(st.sampled_from(VOCAB), st.sampled_from(OPERATORS)), min_size=1, max_size=8).map("".join),
)

DOCS = [
    ("a.md", "Alpha notes", "x-ray e-mail", "alpha beta gamma café in Zürich, naïve über 2024"),
    ("b.md", "Beta", "", "beta delta NEAR OR AND NOT words; İstanbul ǆemal ß"),
    ("c.md", "사업단 소개", "해외사업단", "우리 해외사업단은 새 API를 쓴다. alpha"),
    ("d.md", "検索", "", "全文検索エンジン と 中文 検索. gamma delta"),
    ("e/f.md", "Gamma", "alias delta", "cafe zurich naive uber alpha API"),
]
TAGS = {"a.md": ["t/u"], "b.md": ["t"], "c.md": ["v/w"], "d.md": [], "e/f.md": ["t/u", "x"]}


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
            SearchDoc(title=title, description=meta, body=body, tags=TAGS[path]),
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


# -- the plan -------------------------------------------------------------------------------------


def _is_ours(match: str) -> bool:
    """Whether a MATCH expression is only quoted strings, our parentheses and our operators."""
    return "".join(MATCH_TOKEN.findall(match)) == match


_SLOTS = re.compile(
    r"FROM (fts|cjk) WHERE \1 MATCH \?|FROM tag WHERE tag = \?|note\.folder = \? OR \(note\.folder >= \? AND note\.folder < \?\)"
)


def _match_strings(plan: query_plan.QueryPlan) -> list[tuple[str, str]]:
    """Every MATCH expression the plan runs, with its table: the ranking ones and, in the
    GENERAL mode, each MATCH parameter of its condition (read off in order of its slots)."""
    found = [("fts", plan.main)] if plan.main else []
    found += [("cjk", plan.cjk)] if plan.cjk else []
    params = list(plan.params)
    for slot in _SLOTS.finditer(plan.where or ""):
        if slot.group(1):
            found.append((slot.group(1), str(params.pop(0))))
        elif slot.group(0).startswith("FROM tag"):
            params.pop(0)
        else:
            del params[:3]
    assert not params, "every parameter has its slot"
    return found


def _sql_is_ours(where: str) -> bool:
    rest = where
    for fragment in SQL_FRAGMENTS:
        rest = rest.replace(fragment, "")
    return rest == ""


@given(queries)
@settings(max_examples=600, deadline=None)
@example('a"b NEAR(c d) -e f* ^g title:h (i OR j)')
@example('\x00"\x00')
@example("\ud800 lone surrogate")
@example('alpha OR "beta delta" -gamma (사업 OR API) tag:#t path:e/')
@example("NOT NOT ( ( ( ( ( ( ( ( ( x")
def test_a_plan_never_raises_and_only_quoted_text_reaches_fts5(query: str) -> None:
    plan = query_plan.plan(query, tokenize)
    for table, match in _match_strings(plan):
        assert _is_ours(match), match
        assert _CON.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (match,)).get >= 0
    if plan.where is not None:
        assert _sql_is_ours(plan.where), plan.where
        for param in plan.params:
            assert isinstance(param, str)
    parsed = search_syntax.parse(query)
    leaves = _leaves(query_plan.compile_node(parsed, tokenize)) if parsed is not None else []
    assert len(leaves) <= fts_query.MAX_TERMS
    for leaf in leaves:
        if isinstance(leaf, Leaf):
            assert _is_ours(leaf.match), leaf.match
            assert _CON.execute(f"SELECT count(*) FROM {leaf.table} WHERE {leaf.table} MATCH ?", (leaf.match,)).get >= 0
            if leaf.table is Table.FTS:
                assert tokenize(leaf.shown) or tokenize(fts_query.prepare(leaf.shown)[0]), leaf  # kept pieces hold something


def _leaves(node: Compiled | None) -> list[Compiled]:
    if node is None:
        return []
    if isinstance(node, Neg):
        return _leaves(node.child)
    if isinstance(node, (Both, Either)):
        return [leaf for c in node.children for leaf in _leaves(c)]
    return [node]


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1), max_size=6))
@settings(max_examples=300, deadline=None)
def test_a_word_is_dropped_exactly_when_nothing_in_it_is_indexable(words: list[str]) -> None:
    for word in words:
        text = search_syntax.clean(word).strip()
        if not text or any(c in text for c in '"()') or text.startswith("-") or text in ("OR", "AND", "NOT"):
            continue
        if text.lower().startswith(("tag:", "path:")):
            continue
        node = query_plan.compile_node(search_syntax.Text(text), tokenize)
        expected = any(tokenize(piece) or is_cjk for piece, is_cjk in fts_query.pieces(text))
        assert (node is not None) == expected, text


def test_cjk_terms_compile_to_bigram_phrases() -> None:
    q = query_plan.plan("사업단 検索 단 API를", tokenize)
    assert q.mode is query_plan.Mode.CONJUNCTION
    assert q.cjk == '"사업 업단" AND "検索" AND "단"* AND "를"*'
    assert q.main == '"API"'
    assert q.cjk_terms == ("사업단", "検索", "단", "를")


def test_each_syntax_has_its_mode() -> None:
    modes = {
        'alpha "beta gamma"': query_plan.Mode.CONJUNCTION,
        "alpha OR beta -gamma": query_plan.Mode.EXPRESSION,
        "(alpha OR beta) tag:#t": query_plan.Mode.EXPRESSION,
        "사업 OR alpha": query_plan.Mode.GENERAL,
        "-alpha": query_plan.Mode.GENERAL,
        "tag:t": query_plan.Mode.GENERAL,
        "alpha OR tag:x": query_plan.Mode.GENERAL,
        "-- ( )": query_plan.Mode.EMPTY,
    }
    for query, mode in modes.items():
        assert query_plan.plan(query, tokenize).mode is mode, query
    assert query_plan.plan("alpha OR beta -gamma", tokenize).main == '("alpha") OR ((("beta")) NOT ("gamma"))'
    assert query_plan.plan('"x-ray e-mail"', tokenize).main == '"x-ray e-mail"'


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
    shaped = fts_query.shape_snippet(raw, cjk_terms)
    snippet = shaped.snippet
    assert len(snippet) <= fts_query.SNIPPET_MAX_CHARS
    assert fts_query.MARK_OPEN not in snippet and fts_query.MARK_CLOSE not in snippet
    assert fts_query.ZWSP not in snippet
    # the excerpt is the snippet without our marks, and the highlights are where the marks were
    rebuilt, pos = [], 0
    for start, end in shaped.highlights:
        assert pos <= start < end <= len(shaped.excerpt)
        rebuilt += [shaped.excerpt[pos:start], "**", shaped.excerpt[start:end], "**"]
        pos = end
    rebuilt.append(shaped.excerpt[pos:])
    assert "".join(rebuilt) == snippet


@given(
    st.lists(
        st.sampled_from(["see ", "[[", "]]", "Alpha", " Plan", "](", "[", ")", "x", fts_query.MARK_OPEN, fts_query.MARK_CLOSE]), max_size=30
    )
)
@example(["[[", "](", "[[", ")", fts_query.MARK_OPEN, "see "])  # a link cut open inside another link's destination
@settings(max_examples=400, deadline=None)
def test_a_highlight_never_lands_inside_a_link(parts: list[str]) -> None:
    shaped = fts_query.shape_snippet("".join(parts))
    for m in re.finditer(r"!?\[\[[^\[\]\n]*\]\]|!?\[[^\[\]\n]*\]\([^()\n]*\)", shaped.excerpt):
        for start, end in shaped.highlights:
            inside_start = m.start() < start < m.end()
            inside_end = m.start() < end < m.end()
            assert not inside_start and not inside_end, (shaped.excerpt, m.group(0), (start, end))


def test_highlights_cover_whole_links_and_leave_the_notes_own_bold() -> None:
    o, c = fts_query.MARK_OPEN, fts_query.MARK_CLOSE
    shaped = fts_query.shape_snippet(f"a **bold** {o}word{c} in [[Alpha {o}Plan{c}|the plan]] and [x]({o}Alpha{c}.md)")
    assert shaped.snippet == "a **bold** **word** in **[[Alpha Plan|the plan]]** and **[x](Alpha.md)**"
    assert shaped.excerpt == "a **bold** word in [[Alpha Plan|the plan]] and [x](Alpha.md)"
    assert [shaped.excerpt[a:b] for a, b in shaped.highlights] == ["word", "[[Alpha Plan|the plan]]", "[x](Alpha.md)"]


# -- search --------------------------------------------------------------------------------------

COLUMNS = {path: (title, meta, body) for path, title, meta, body in DOCS}


def _tag_keys(path: str) -> set[str]:
    keys = set()
    for tag in TAGS[path]:
        parts = tag.lower().split("/")
        keys |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
    return keys


def _in_folder(path: str, folder: str) -> bool:
    parent = path.rpartition("/")[0]
    return parent == folder or parent.startswith(folder + "/")


def _holds(node: Compiled, path: str) -> bool:
    """The query's meaning, evaluated without FTS5: what the hits must be."""
    texts = COLUMNS[path]
    if isinstance(node, Leaf):
        if node.table is Table.FTS:
            needle = node.match[1:-1].replace('""', '"')
            return any(contains_tokens(t, needle) for t in texts)
        return any(node.shown in unicodedata.normalize("NFC", t) for t in texts)
    if isinstance(node, TagIs):
        return node.tag in _tag_keys(path)
    if isinstance(node, FolderIs):
        return _in_folder(path, node.folder)
    if isinstance(node, Neg):
        return not _holds(node.child, path)
    if isinstance(node, Both):
        return all(_holds(c, path) for c in node.children)
    return any(_holds(c, path) for c in node.children)


@given(queries, st.sampled_from([None, "t", "t/u", "v", "nope"]), st.sampled_from([None, "", "e", "x"]))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example("alpha", None, None)
@example("사업단 api", None, None)
@example("CAFE zurich", None, "e")
@example("alpha OR 検索 -gamma", None, None)
@example('"beta delta" OR tag:x', None, None)
@example("-alpha", "t", None)
@example("", "t", None)
def test_the_hits_are_exactly_the_notes_the_query_selects(populated: IndexCache, query: str, tag: str | None, folder: str | None) -> None:
    _check_hits(populated, query, tag, folder)


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "사업", "検索", "API", "café", "zurich", "x-ray", "단", "nothing"])
_LEAF = st.one_of(
    _WORDS.map(search_syntax.Text),
    st.sampled_from(["beta gamma", "alpha beta", "delta NEAR", "사업단 소개"]).map(lambda t: search_syntax.Text(t, phrase=True)),
    st.sampled_from(["t", "#t/u", "v", "x"]).map(search_syntax.Tag),
    st.sampled_from(["e", "e/"]).map(search_syntax.Folder),
)
STRUCTURED = st.recursive(
    _LEAF,
    lambda kids: st.one_of(
        kids.map(search_syntax.Not),
        st.lists(kids, min_size=2, max_size=3).map(lambda c: search_syntax.All(tuple(c))),
        st.lists(kids, min_size=2, max_size=3).map(lambda c: search_syntax.Any(tuple(c))),
    ),
    max_leaves=6,
).map(search_syntax.render)


@given(STRUCTURED, st.sampled_from([None, "t"]), st.sampled_from([None, "e"]))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_or_not_groups_and_filters_select_exactly_their_notes(
    populated: IndexCache, query: str, tag: str | None, folder: str | None
) -> None:
    _check_hits(populated, query, tag, folder)


def test_render_gives_back_the_tree() -> None:
    for query in ["a b OR c", '-(a OR "b c") tag:#t path:"My F/"', "NOT a (b OR c) -d"]:
        parsed = search_syntax.parse(query)
        assert parsed is not None and search_syntax.parse(search_syntax.render(parsed)) == parsed


def _check_hits(populated: IndexCache, query: str, tag: str | None, folder: str | None) -> None:
    hits = populated.search(query, tag=tag, folder=folder, limit=10)
    event("hits" if hits else "no hits")
    event(f"mode {query_plan.plan(query, tokenize).mode.value}")
    parsed = search_syntax.parse(query)
    compiled = query_plan.compile_node(parsed, tokenize) if parsed is not None else None
    filtered = tag is not None or bool(folder)
    expected = set()
    for path in COLUMNS:
        if compiled is None and not filtered:
            continue
        if compiled is not None and not _holds(compiled, path):
            continue
        if tag is not None and tag not in _tag_keys(path):
            continue
        if folder and not _in_folder(path, folder):
            continue
        expected.add(path)
    assert {h.path for h in hits} == expected, (query, tag, folder)
    keys = [(-h.score, h.path) for h in hits]
    assert keys == sorted(keys)  # best first, ties (and notes found only by filters) by path
    for hit in hits:
        assert hit.title == COLUMNS[hit.path][0]
        assert len(hit.snippet) <= fts_query.SNIPPET_MAX_CHARS


def test_a_question_asks_its_telling_bigrams_not_its_endings() -> None:
    """Particles and endings in hiragana (の, を, したい) are left out of a ranked question;
    kanji, katakana and a kanji with its hiragana are kept."""
    grams = fts_query.question_grams("ディスクの空き容量を確認したい")
    assert "容量" in grams and "ディ" in grams and "空き" in grams and "量を" in grams
    assert not {"した", "たい", "い"} & set(grams)
    assert fts_query.question_grams("API를 찾기") == ["찾기"]  # Hangul pairs are kept: no run is hiragana
    assert fts_query.question_grams("english only") == []


@given(st.text(alphabet="あいうえおかきくけこしたのをー漢字容量カタナ ", max_size=30))
def test_a_question_with_cjk_text_is_never_asked_as_nothing(text: str) -> None:
    grams = fts_query.question_grams(text)
    all_grams = fts_query.prepare(text)[1].split()
    assert set(grams) <= set(all_grams)
    assert bool(grams) == bool(all_grams)  # hiragana alone keeps every bigram
    for g in grams:
        if (
            len(g) == 2
            and re.fullmatch("[\u3041-\u309f\u30fc]{2}", g)
            and any(not re.fullmatch("[\u3041-\u309f\u30fc]{2}", h) for h in all_grams if len(h) == 2)
        ):
            raise AssertionError(f"{g!r} kept beside a telling bigram")
