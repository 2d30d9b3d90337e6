"""Links in canvases, bases and bookmarks, rewritten for a move: fixed cases of each form, and a
property: after the rewrite every canvas file node and text-node link that named the moved note
names it at its new path, and nothing else in the document changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.errors import ValidationFailed
from vaultd.relink import Relocation, rewrite_base, rewrite_bookmarks, rewrite_canvas
from vaultd.vault.link_targets import LinkResolver, ResolutionStatus
from vaultd.vault.markdown import scan

PATHS = ["Home.md", "people/Ada Lovelace.md", "people/Grace.md", "projects/Plan.md", "attachments/pic.png"]


def move(old: str, new: str) -> Relocation:
    return Relocation(LinkResolver(PATHS), {old: new})


# -- canvases -------------------------------------------------------------------------------------


def test_only_file_nodes_and_text_node_links_change() -> None:
    doc: dict[str, Any] = {
        "nodes": [
            {"id": "1", "type": "file", "file": "people/Ada Lovelace.md", "subpath": "#Notes"},
            {"id": "2", "type": "text", "text": "[[Ada Lovelace]] `[[Ada Lovelace]]` [[Grace]]"},
            {"id": "3", "type": "link", "url": "https://example.com/people/Ada Lovelace.md", "file": "people/Ada Lovelace.md"},
            {"id": "4", "type": "group", "label": "[[Ada Lovelace]]", "background": "attachments/pic.png"},
            {"id": "5", "type": "file", "file": "attachments/pic.png"},
            {"id": "6", "text": "[[Ada Lovelace]]"},
        ],
        "edges": [{"id": "e", "fromNode": "1", "toNode": "2", "label": "[[Ada Lovelace]]"}],
        "extra": {"file": "people/Ada Lovelace.md"},
    }
    text = json.dumps(doc, indent="\t", ensure_ascii=False)
    out, found = rewrite_canvas(text, "boards/b.canvas", move("people/Ada Lovelace.md", "team/Ada King.md"))
    new = json.loads(out)
    doc["nodes"][0]["file"] = "team/Ada King.md"
    doc["nodes"][1]["text"] = "[[Ada King]] `[[Ada Lovelace]]` [[Grace]]"
    assert new == doc
    assert out == json.dumps(doc, indent="\t", ensure_ascii=False)  # the layout is the file's own
    assert [(f.kind, f.old, f.new, f.line) for f in found] == [
        ("canvas-file", "people/Ada Lovelace.md", "team/Ada King.md", 6),
        ("wiki", "[[Ada Lovelace]]", "[[Ada King]]", 12),
    ]


def test_a_canvas_that_names_nothing_moved_is_returned_as_is() -> None:
    text = '{"nodes":[{"id":"1","type":"file","file":"Home.md"}],"edges":[]}'
    out, found = rewrite_canvas(text, "b.canvas", move("people/Ada Lovelace.md", "team/Ada.md"))
    assert out is text and found == []


@pytest.mark.parametrize("bad", ['{"nodes": [', "[1, 2", '{"nodes": NaN}'])
def test_a_canvas_that_is_not_json_is_refused_for_the_caller_to_report(bad: str) -> None:
    with pytest.raises(ValueError):
        rewrite_canvas(bad, "b.canvas", move("people/Ada Lovelace.md", "team/Ada.md"))


# -- bookmarks ------------------------------------------------------------------------------------


def test_file_bookmarks_in_groups_follow_the_note_and_others_stay() -> None:
    doc = {
        "items": [
            {"type": "file", "ctime": 1, "path": "people/Ada Lovelace.md", "subpath": "#^b1"},
            {"type": "folder", "ctime": 2, "path": "people"},
            {"type": "group", "ctime": 3, "title": "g", "items": [{"type": "file", "ctime": 4, "path": "people/Ada Lovelace.md"}]},
            {"type": "search", "ctime": 5, "query": "people/Ada Lovelace.md"},
            {"type": "file", "ctime": 6, "path": "Home.md"},
        ]
    }
    text = json.dumps(doc, indent=2)
    out, found = rewrite_bookmarks(text, move("people/Ada Lovelace.md", "Ada.md"))
    assert out == text.replace('"path": "people/Ada Lovelace.md"', '"path": "Ada.md"')
    assert len(found) == 2 and {f.kind for f in found} == {"bookmark"}


# -- bases ----------------------------------------------------------------------------------------


def test_base_links_in_each_form_keep_their_style_and_the_yaml_its_bytes() -> None:
    text = (
        "filters:\n"
        "  or:\n"
        '    - file.hasLink("Ada Lovelace")  # by name\n'
        "    - file.hasLink('people/Ada Lovelace')\n"
        "    - 'related.contains(link(\"Ada Lovelace#^b1\"))'\n"
        '    - up == "[[../people/Ada Lovelace|Ada]]"\n'
        '    - file.inFolder("people")\n'
        "formulas:\n"
        '  page: file("people/Ada Lovelace.md").name\n'
    )
    out, found = rewrite_base(text, "views/v.base", move("people/Ada Lovelace.md", "team/Ada King.md"))
    assert out == (
        "filters:\n"
        "  or:\n"
        '    - file.hasLink("Ada King")  # by name\n'
        "    - file.hasLink('team/Ada King')\n"
        "    - 'related.contains(link(\"Ada King#^b1\"))'\n"
        '    - up == "[[../team/Ada King|Ada]]"\n'
        '    - file.inFolder("people")\n'
        "formulas:\n"
        '  page: file("team/Ada King.md").name\n'
    )
    assert [f.line for f in found] == [3, 4, 5, 6, 9]


def test_a_base_link_spelled_with_yaml_escapes_refuses_instead_of_breaking() -> None:
    text = 'filters:\n  and:\n    - "file.hasLink(\\"Ada Lovelace\\")"\n'
    with pytest.raises(ValidationFailed) as info:
        rewrite_base(text, "v.base", move("people/Ada Lovelace.md", "team/Ada.md"))
    assert info.value.issues[0].code == "V03" and "by hand" in info.value.message


def test_a_new_name_the_base_quoting_cannot_carry_refuses() -> None:
    text = "filters:\n  and:\n    - 'up == \"[[Ada Lovelace]]\"'\n"
    with pytest.raises(ValidationFailed):
        rewrite_base(text, "v.base", move("people/Ada Lovelace.md", "team/Ada's.md"))
    with pytest.raises(ValidationFailed):
        rewrite_base("a: link('Ada Lovelace')\n", "v.base", move("people/Ada Lovelace.md", "team/Ada's.md"))


def test_an_unreadable_base_is_only_an_error_when_it_names_the_note() -> None:
    reloc = move("people/Ada Lovelace.md", "team/Ada.md")
    assert rewrite_base("a: [unclosed\n", "v.base", reloc) == ("a: [unclosed\n", [])
    with pytest.raises(ValueError):
        rewrite_base('a: [file.hasLink("Ada Lovelace")\n', "v.base", reloc)


# -- the property ---------------------------------------------------------------------------------

_FORMS = ["[[{name}]]", "[[{path}|x]]", "![[{path}#H]]", "[t]({enc})", "[[/{path}]]"]


@st.composite
def canvases(draw: st.DrawFn) -> tuple[str, str, str, dict[str, Any]]:
    old = draw(st.sampled_from(PATHS[:4]))
    new = draw(st.sampled_from(["moved/Ada King.md", "Plan2.md", "deep/er/Grace.md", "x/Home.md"]))
    nodes: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 6))):
        target = draw(st.sampled_from(PATHS))
        if draw(st.booleans()):
            nodes.append({"id": str(i), "type": "file", "file": target})
        else:
            form = draw(st.sampled_from(_FORMS))
            link = form.format(
                name=target.rpartition("/")[2].removesuffix(".md"), path=target.removesuffix(".md"), enc=target.replace(" ", "%20")
            )
            nodes.append({"id": str(i), "type": "text", "text": f"see {link} é"})
    styles: list[dict[str, Any]] = [{"indent": "\t"}, {"separators": (",", ":")}, {"indent": 2, "ensure_ascii": True}]
    style = draw(st.sampled_from(styles))
    return old, new, json.dumps({"nodes": nodes, "edges": []}, **style), {"nodes": nodes}


@settings(max_examples=200, deadline=None)
@given(canvases())
def test_every_canvas_reference_to_the_moved_note_follows_it(case: tuple[str, str, str, dict[str, Any]]) -> None:
    old, new, text, doc = case
    source = "boards/b.canvas"
    before_resolver = LinkResolver(PATHS)
    after_resolver = LinkResolver([p for p in PATHS if p != old] + [new])
    out, found = rewrite_canvas(text, source, Relocation(before_resolver, {old: new}))
    result = json.loads(out)
    assert len(result["nodes"]) == len(doc["nodes"])
    for was, now in zip(doc["nodes"], result["nodes"], strict=True):
        assert {k: v for k, v in was.items() if k not in ("file", "text")} == {k: v for k, v in now.items() if k not in ("file", "text")}
        if was["type"] == "file":
            assert now["file"] == (new if was["file"] == old else was["file"])
            continue
        before_links, after_links = scan(was["text"]).links, scan(now["text"]).links
        assert len(before_links) == len(after_links)
        for b, a in zip(before_links, after_links, strict=True):
            res = before_resolver.resolve(b.target, source)
            if res.status != ResolutionStatus.RESOLVED:
                continue
            wanted = new if res.path == old else res.path
            assert after_resolver.resolve(a.target, source).path == wanted, (b, a)
    if not found:
        assert out == text
