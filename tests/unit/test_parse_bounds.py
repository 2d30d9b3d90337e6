"""Every parser of untrusted bytes stops at its bound, before it builds anything: YAML (a note's
header, a base), JSON (a canvas, app.json), a base's link expressions, an EPUB's ZIP directory and
the search query. Each bound is tested at its edge (at the bound, and one past it), and hypothesis
draws hostile inputs: a bounded parser raises nothing but its documented error, and what it lets
through stays inside its budget."""

from __future__ import annotations

from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.methods.sources import SourceKind
from protocol.parse_limits import MAX_JSON_DEPTH, MAX_YAML_ALIAS_NODES, MAX_YAML_DEPTH, MAX_YAML_NODES, MAX_ZIP_ENTRIES
from tests.support.bombs import alias_bomb, central_directory_flood, epub_with_entries, nested_flow, nested_json, nested_maps
from vaultd.lint.files import parse_document
from vaultd.lint.gather import read_documents
from vaultd.sources.media import Media, metadata
from vaultd.sources.pdf_probe import probe
from vaultd.vault import frontmatter, json_text, search_syntax
from vaultd.vault.yaml_bounds import YamlRefused, load_base, screen

SLOW = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- YAML ---------------------------------------------------------------------------------------


def test_an_alias_bomb_is_refused_before_it_is_expanded() -> None:
    with pytest.raises(YamlRefused) as refused:
        load_base(alias_bomb())
    assert refused.value.kind == "alias"
    assert str(MAX_YAML_ALIAS_NODES) in str(refused.value)
    assert refused.value.line is not None and refused.value.line < 9  # found early, at the level that passes the bound


def test_aliases_may_repeat_up_to_the_bound_and_not_one_node_more() -> None:
    at_bound = "a: &a x\nb: [" + ", ".join(["*a"] * MAX_YAML_ALIAS_NODES) + "]\n"
    assert load_base(at_bound)["b"] == ["x"] * MAX_YAML_ALIAS_NODES
    with pytest.raises(YamlRefused):
        load_base(at_bound.replace("]\n", ", *a]\n"))


def test_an_alias_counts_all_its_target_holds() -> None:
    ten = "a: &a [" + ", ".join(["x"] * 9) + "]\n"  # a list and its nine items: ten nodes

    def uses(n: int) -> str:
        return ten + "b: [" + ", ".join(["*a"] * n) + "]\n"

    assert len(load_base(uses(MAX_YAML_ALIAS_NODES // 10))["b"]) == MAX_YAML_ALIAS_NODES // 10
    with pytest.raises(YamlRefused):
        load_base(uses(MAX_YAML_ALIAS_NODES // 10 + 1))


def test_an_alias_inside_its_own_collection_is_refused() -> None:
    with pytest.raises(YamlRefused):
        load_base("a: &a [1, *a]\n")


def test_yaml_nests_up_to_the_bound_and_not_one_level_more() -> None:
    # The root mapping is one level: MAX_YAML_DEPTH - 1 collections fit inside it.
    assert screen(nested_maps(MAX_YAML_DEPTH - 1), aliases=False) is True
    with pytest.raises(YamlRefused) as refused:
        screen(nested_maps(MAX_YAML_DEPTH), aliases=False)
    assert refused.value.kind == "depth"
    assert screen(nested_flow(MAX_YAML_DEPTH - 1), aliases=False) is True
    with pytest.raises(YamlRefused):
        screen(nested_flow(MAX_YAML_DEPTH), aliases=False)


@pytest.mark.parametrize("levels", [100, 999, 8000, 100_000])
def test_deep_yaml_is_refused_whatever_the_depth(levels: int) -> None:
    for text in (nested_flow(levels), "a: " + "{a: " * levels + "x" + "}" * levels + "\n", "- " * levels + "x\n"):
        with pytest.raises(YamlRefused) as refused:
            screen(text, aliases=True)
        assert refused.value.kind == "depth"


def test_yaml_holds_up_to_the_node_bound_and_not_one_more() -> None:
    # The root sequence is one node, each item one more.
    assert screen("[" + "1," * (MAX_YAML_NODES - 1) + "]", aliases=False) is True
    with pytest.raises(YamlRefused) as refused:
        screen("[" + "1," * MAX_YAML_NODES + "]", aliases=False)
    assert refused.value.kind == "nodes"


@pytest.mark.parametrize(
    "text",
    [nested_flow(8000), "a: " + "{a: " * 8000 + "x" + "}" * 8000 + "\n", "a:\n  " + "- " * 8000 + "x\n", nested_maps(200)],
    ids=["flow-seq", "flow-map", "compact-seq", "block-maps"],
)
def test_a_deeply_nested_header_is_an_issue_not_a_stall(text: str) -> None:
    """ruamel.yaml's scanner is quadratic in nesting: the old careful path spent 94 s on the first."""
    parsed = frontmatter.parse("---\n" + text + "---\n# Body\n")
    assert parsed.data is None
    assert [i.code for i in parsed.issues] == ["N01"]
    assert f"deeper than {MAX_YAML_DEPTH} levels" in parsed.issues[0].message
    assert parsed.body_offset > 0


def test_a_header_at_the_depth_bound_is_read() -> None:
    parsed = frontmatter.parse("---\n" + nested_maps(MAX_YAML_DEPTH - 1) + "---\n")
    assert parsed.issues == [] and parsed.data is not None
    assert frontmatter.parse("---\n" + nested_maps(MAX_YAML_DEPTH) + "---\n").issues[0].code == "N01"


def test_an_alias_bomb_in_a_header_is_n04() -> None:
    parsed = frontmatter.parse("---\n" + alias_bomb() + "---\n")
    assert [i.code for i in parsed.issues] == ["N04"]


_SCALARS = st.sampled_from(["x", "1", "'q'", '"d"', "true", "~", "[]", "{}"])


@st.composite
def yaml_soup(draw: st.DrawFn) -> str:
    """Hostile YAML: anchors, aliases, deep brackets and indicators in any order."""
    parts = st.one_of(
        _SCALARS,
        st.sampled_from(["[", "]", "{", "}", ", ", ": ", "- ", "\n", "  ", "? ", "&a ", "&b ", "*a", "*b", "!!str ", "#c"]),
        st.builds(lambda n, s: s * n, st.integers(1, 300), st.sampled_from(["[", "{a: ", "- ", "  "])),
        st.text(max_size=4),
    )
    return "".join(draw(st.lists(parts, max_size=40)))


def _expanded(value: Any, depth: int = 1) -> tuple[int, int]:
    """(nodes, depth) of a loaded document, every alias expanded."""
    if isinstance(value, dict):
        pairs = [_expanded(v, depth + 1) for kv in value.items() for v in kv]
    elif isinstance(value, list):
        pairs = [_expanded(v, depth + 1) for v in value]
    else:
        return 1, depth - 1
    return 1 + sum(n for n, _ in pairs), max([depth, *(d for _, d in pairs)])


@SLOW
@given(yaml_soup())
def test_a_screened_base_stays_inside_its_budget(text: str) -> None:
    """Whatever the text, load_base raises only its documented errors, and what it returns,
    every alias expanded, is within the depth and node bounds (the bomb cannot hide)."""
    try:
        data = load_base(text)
    except (YamlRefused, yaml.YAMLError):
        return
    nodes, depth = _expanded(data)
    assert depth <= MAX_YAML_DEPTH
    assert nodes <= MAX_YAML_NODES + MAX_YAML_ALIAS_NODES


@SLOW
@given(yaml_soup())
def test_a_header_of_any_soup_is_data_or_an_issue(text: str) -> None:
    parsed = frontmatter.parse("---\n" + text + "\n---\n")
    if parsed.data is not None:
        assert _expanded(parsed.data)[1] <= MAX_YAML_DEPTH
    else:
        assert parsed.issues


# -- JSON ---------------------------------------------------------------------------------------


def test_json_nests_up_to_the_bound_and_not_one_level_more() -> None:
    assert json_text.load(nested_json(MAX_JSON_DEPTH)) is not None
    with pytest.raises(ValueError, match=f"deeper than {MAX_JSON_DEPTH}"):
        json_text.load(nested_json(MAX_JSON_DEPTH + 1))


@pytest.mark.parametrize("levels", [1000, 8000, 1_000_000])
def test_deep_json_is_a_value_error_not_a_recursion_error(levels: int) -> None:
    with pytest.raises(ValueError, match="deeper than"):
        json_text.load(nested_json(levels))
    with pytest.raises(ValueError):
        json_text.strings('{"nodes": ' + nested_json(levels) + "}")


@SLOW
@given(
    st.text(alphabet='[]{}":,1a \n\\', max_size=400) | st.builds(lambda n, c: c * n, st.integers(1, 5000), st.sampled_from(["[", '{"a":']))
)
def test_json_load_raises_only_value_error_and_keeps_its_depth(text: str) -> None:
    try:
        doc = json_text.load(text)
    except ValueError:
        return
    assert _expanded(doc)[1] <= MAX_JSON_DEPTH


# -- lint's canvases and bases ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "text", "says"),
    [
        ("Bomb.base", alias_bomb(), "aliases that repeat more than"),
        ("Deep.base", "filters: " + "[" * 8000 + "]" * 8000 + "\n", "deeper than"),
        ("Deep.base", "filters:\n" + "".join("  " * i + "- a:\n" for i in range(1, 2000)), "deeper than"),
        ("Deep.canvas", '{"nodes": ' + nested_json(8000) + ', "edges": []}', "deeper than"),
        ("Deep.canvas", '{"nodes": ' + nested_json(500) + ', "edges": []}', "deeper than"),
        ("NaN.canvas", '{"nodes": [], "edges": [], "x": NaN}', "not JSON"),
        ("Bad.canvas", '{"nodes": [', "not valid JSON (line 1)"),
        ("Bad.base", "filters: [unclosed\n", "not valid YAML"),
    ],
)
def test_an_unreadable_document_is_one_finding(path: str, text: str, says: str) -> None:
    doc = parse_document(path, text)
    assert doc.data is None
    assert doc.problem is not None and says in doc.problem


def test_a_readable_document_is_its_data() -> None:
    assert parse_document("A.base", "filters:\n  - link('x')\n").data == {"filters": ["link('x')"]}
    assert parse_document("A.canvas", '{"nodes": [], "edges": []}').data == {"nodes": [], "edges": []}
    assert parse_document("A.canvas", "  ").data == {}


def test_documents_past_the_time_budget_are_left_unread(tmp_path: Any) -> None:
    for name in ("a.base", "b.canvas"):
        (tmp_path / name).write_text("{}")
    assert read_documents(tmp_path, ["a.base", "b.canvas"], seconds=0) == {}
    assert set(read_documents(tmp_path, ["a.base", "b.canvas"])) == {"a.base", "b.canvas"}


def test_a_long_line_of_unclosed_base_calls_is_one_pass() -> None:
    """``link("`` repeated with no closing quote: a lazy match with a backreference rescanned the
    line once per call (quadratic); the character class stops at the next quote."""
    from vaultd.lint import files

    line = 'link("' * 200_000
    found = [files._arg(m) for m in files._BASE_LINK.finditer(line)]
    assert found == ["link("] * 100_000
    assert [files._arg(m) for m in files._BASE_LINK.finditer("""link("it's") file.hasLink('say "hi"')""")] == ["it's", 'say "hi"']


# -- EPUB / ZIP ---------------------------------------------------------------------------------

EPUB = Media("application/epub+zip", SourceKind.EPUB, "epub")


def test_an_epub_directory_up_to_the_entry_bound_is_read() -> None:
    at_bound = epub_with_entries(MAX_ZIP_ENTRIES - 3)
    assert metadata(at_bound, EPUB).fields == {"doc_title": "T"}
    past = epub_with_entries(MAX_ZIP_ENTRIES - 2)
    meta = metadata(past, EPUB)
    assert meta.fields == {}
    assert meta.problem is not None and f"more than {MAX_ZIP_ENTRIES} entries" in meta.problem


def test_a_directory_flood_is_refused_before_zipfile_reads_it() -> None:
    meta = metadata(central_directory_flood(MAX_ZIP_ENTRIES + 1), EPUB)
    assert meta.problem is not None and "entries" in meta.problem


@SLOW
@given(st.binary(max_size=2000), st.integers(0, 3))
def test_epub_metadata_never_raises(tail: bytes, floods: int) -> None:
    data = epub_with_entries(0)[: len(tail) % 400 + 30] + tail + b"PK\x01\x02" * floods
    assert isinstance(metadata(data, EPUB).fields, dict)


# -- PDF ----------------------------------------------------------------------------------------


def _pdf_page_tree_flood(pages: int) -> bytes:
    """A PDF whose page tree lists ``pages`` pages: pypdf's page list holds an object for each."""
    kids = " ".join("3 0 R" for _ in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Count {pages} /Kids [{kids}] >>".encode(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return out + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


def test_pdf_metadata_is_read_in_a_bounded_child() -> None:
    data = _pdf_page_tree_flood(3)
    assert probe(data) == ({"doc_pages": "3"}, None)
    fields, problem = probe(data, memory=16 * 1024 * 1024)  # too little for an interpreter: the bound refuses
    assert fields == {} and problem is not None and "16 MiB memory bound" in problem
    fields, problem = probe(data, seconds=0.001)
    assert fields == {} and problem is not None and "took more than" in problem


def test_a_page_tree_flood_is_read_without_walking_it() -> None:
    """The page count is the one the tree declares: ``len(reader.pages)`` built an object per page."""
    assert metadata(_pdf_page_tree_flood(5000), PDF).fields == {"doc_pages": "5000"}


PDF = Media("application/pdf", SourceKind.PDF, "pdf")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300), st.integers(0, 2000))
def test_pdf_metadata_never_raises(junk: bytes, cut: int) -> None:
    meta = metadata(_pdf_page_tree_flood(2)[:cut] + junk, PDF)
    assert all(isinstance(v, str) for v in meta.fields.values())
    assert meta.problem is None or meta.problem.startswith("the PDF's metadata")


# -- the search query ---------------------------------------------------------------------------


@SLOW
@given(st.text(alphabet='()"-| aOR:#', max_size=1024) | st.builds(lambda n: "(" * n + "x" + ")" * n, st.integers(1, 1000)))
def test_the_search_query_parser_never_raises_and_nests_at_most_its_bound(query: str) -> None:
    node = search_syntax.parse(query)

    def depth(n: Any) -> int:
        kids = [*getattr(n, "children", ()), *([n.child] if isinstance(n, search_syntax.Not) else [])]
        return 1 + max((depth(k) for k in kids), default=0)

    if node is not None:
        assert depth(node) <= 2 * search_syntax.MAX_DEPTH + 2
