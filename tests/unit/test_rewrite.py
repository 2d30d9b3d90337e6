"""Link rewriting for move and merge: fixed cases of every link form, and a property: after a
rewrite, every link that named the moved note resolves to its new path, with its kind, anchor and
label unchanged, while nothing else in the note changes."""

from __future__ import annotations

import posixpath
from itertools import pairwise
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultd.relink import Relocation, link_text_for, rewrite_links
from vaultd.vault import frontmatter
from vaultd.vault.app_config import LinkFormat, NewLinkFormat, parse_link_format
from vaultd.vault.link_targets import LinkResolver, ResolutionStatus
from vaultd.vault.markdown import scan

PATHS = [
    "README.md",
    "concepts/Link Syntax.md",
    "people/Ada Lovelace.md",
    "projects/alpha/Alpha Plan.md",
    "projects/alpha/Meeting Notes.md",
    "projects/beta/Meeting Notes.md",
    "attachments/diagram.png",
]


def move(old: str, new: str, paths: list[str] = PATHS) -> Relocation:
    return Relocation(LinkResolver(paths), {old: new})


def rewrite(text: str, source: str, reloc: Relocation) -> str:
    return rewrite_links(text, source, reloc)[0]


def after_resolver(paths: list[str], old: str, new: str) -> LinkResolver:
    return LinkResolver([p for p in paths if p != old] + [new])


# -- fixed cases ----------------------------------------------------------------------------------


def test_wiki_forms_keep_anchor_label_and_table_escape() -> None:
    r = move("projects/alpha/Alpha Plan.md", "archive/Roadmap.md")
    text = (
        "[[Alpha Plan]] [[Alpha Plan#Goals#Milestones|ms]] [[Alpha Plan#^goal-1]] ![[Alpha Plan]]\n"
        "| a | [[Alpha Plan#Goals\\|goals]] |\n[[ Alpha Plan | spaced ]] [[projects/alpha/Alpha Plan.md]]\n"
    )
    assert rewrite(text, "README.md", r) == (
        "[[Roadmap]] [[Roadmap#Goals#Milestones|ms]] [[Roadmap#^goal-1]] ![[Roadmap]]\n"
        "| a | [[Roadmap#Goals\\|goals]] |\n[[ Roadmap | spaced ]] [[archive/Roadmap.md]]\n"
    )


def test_links_that_still_resolve_keep_their_bytes() -> None:
    r = move("projects/alpha/Alpha Plan.md", "archive/Alpha Plan.md")
    text = "[[Alpha Plan]] and [[Alpha Plan#Goals|g]]\n"
    new, found = rewrite_links(text, "README.md", r)
    assert new is text and found == []
    path_link = "[[projects/alpha/Alpha Plan]]\n"
    assert rewrite(path_link, "README.md", r) == "[[archive/Alpha Plan]]\n"  # a path-qualified link keeps its path


def test_wiki_links_keep_the_style_they_were_written_in() -> None:
    r = move("people/Ada Lovelace.md", "team/ada.md")
    cases = {
        ("concepts/Link Syntax.md", "[[Ada Lovelace]]"): "[[ada]]",
        ("concepts/Link Syntax.md", "[[Ada Lovelace.md|A]]"): "[[ada.md|A]]",
        ("concepts/Link Syntax.md", "[[people/Ada Lovelace]]"): "[[team/ada]]",
        ("concepts/Link Syntax.md", "[[people/Ada Lovelace.md#Notes]]"): "[[team/ada.md#Notes]]",
        ("concepts/Link Syntax.md", "[[/people/Ada Lovelace]]"): "[[/team/ada]]",
        ("concepts/Link Syntax.md", "[[../people/Ada Lovelace]]"): "[[../team/ada]]",
        ("concepts/Link Syntax.md", "![[./../people/Ada Lovelace|300]]"): "![[../team/ada|300]]",
        ("people/Grace.md", "[[./Ada Lovelace]]"): "[[../team/ada]]",
        ("README.md", '---\nup: "[[people/Ada Lovelace]]"\n---\n'): '---\nup: "[[team/ada]]"\n---\n',
    }
    for (source, before), expected in cases.items():
        assert rewrite(before, source, r) == expected, before
    # a folder path read from the linking note's folder stays relative to it
    r2 = move("projects/alpha/Alpha Plan.md", "archive/Alpha Plan.md")
    assert rewrite("[[alpha/Alpha Plan]]", "projects/x.md", r2) == "[[../archive/Alpha Plan]]"
    assert rewrite("[[alpha/Alpha Plan]]", "README.md", r2) == "[[archive/Alpha Plan]]"  # a path suffix: the vault path
    # moved to the root: the vault path of a root note is its bare name, when unique
    assert rewrite("[[people/Ada Lovelace]]", "README.md", move("people/Ada Lovelace.md", "Ada.md")) == "[[Ada]]"


def test_a_bare_link_that_cannot_stay_bare_follows_the_new_link_format() -> None:
    text = "[[README]] and [[Alpha Plan#Goals|g]] and [x](README.md)\n"
    source = "people/Ada Lovelace.md"
    expected = {
        NewLinkFormat.SHORTEST: "[[archive/Alpha Plan]] and [[projects/alpha/Alpha Plan#Goals|g]] and [x](archive/Alpha%20Plan.md)\n",
        NewLinkFormat.ABSOLUTE: "[[archive/Alpha Plan]] and [[projects/alpha/Alpha Plan#Goals|g]] and [x](archive/Alpha%20Plan.md)\n",
        NewLinkFormat.RELATIVE: "[[../archive/Alpha Plan]] and [[../projects/alpha/Alpha Plan#Goals|g]] and [x](../archive/Alpha%20Plan.md)\n",
    }
    for fmt, want in expected.items():
        r = Relocation(LinkResolver(PATHS), {"README.md": "archive/Alpha Plan.md"}, fmt=LinkFormat(fmt))
        assert rewrite(text, source, r) == want, fmt
    # a bare name that stays unique stays bare whatever the format
    r = Relocation(LinkResolver(PATHS), {"README.md": "archive/Home.md"}, fmt=LinkFormat(NewLinkFormat.ABSOLUTE))
    assert rewrite("[[README]]", source, r) == "[[Home]]"


def test_app_json_is_read_with_obsidians_defaults() -> None:
    assert parse_link_format(b'{"newLinkFormat": "relative", "useMarkdownLinks": true}') == LinkFormat(NewLinkFormat.RELATIVE, True)
    assert parse_link_format(b'{"newLinkFormat": "absolute"}') == LinkFormat(NewLinkFormat.ABSOLUTE, False)
    for odd in (b"", b"not json", b"[]", b'{"newLinkFormat": "sideways", "useMarkdownLinks": "yes"}', b"\xff", b"[" * 100_000):
        assert parse_link_format(odd) == LinkFormat(), odd


def test_code_comments_and_other_targets_are_untouched() -> None:
    r = move("people/Ada Lovelace.md", "team/Ada.md")
    text = (
        "`[[Ada Lovelace]]` and\n```\n[[Ada Lovelace]]\n```\n%% [[Ada Lovelace]] %%\n"
        "<!-- [[Ada Lovelace]] -->\n[[README]] [[Nowhere]] [[Meeting Notes]] [[Ada Lovelace]]\n"
    )
    out = rewrite(text, "README.md", r)
    assert out == text.replace(
        "[[README]] [[Nowhere]] [[Meeting Notes]] [[Ada Lovelace]]", "[[README]] [[Nowhere]] [[Meeting Notes]] [[Ada]]"
    )


def test_markdown_links_keep_their_style() -> None:
    r = move("people/Ada Lovelace.md", "team/lead/Ada King.md")
    src = "concepts/Link Syntax.md"
    cases = {
        "[a](../people/Ada%20Lovelace.md)": "[a](../team/lead/Ada%20King.md)",
        "[a](<../people/Ada Lovelace.md>)": "[a](<../team/lead/Ada King.md>)",
        '[a](./../people/Ada%20Lovelace.md#Notes "title")': '[a](../team/lead/Ada%20King.md#Notes "title")',
        "[a](/people/Ada%20Lovelace.md)": "[a](/team/lead/Ada%20King.md)",
        "[a](people/Ada%20Lovelace.md)": "[a](team/lead/Ada%20King.md)",
        "[a](Ada%20Lovelace.md)": "[a](Ada%20King.md)",
        "[a](../people/Ada%20Lovelace)": "[a](../team/lead/Ada%20King)",
        "![a](../people/Ada%20Lovelace.md)": "![a](../team/lead/Ada%20King.md)",
        "[a](https://example.com/Ada%20Lovelace.md)": "[a](https://example.com/Ada%20Lovelace.md)",
    }
    for before, expected in cases.items():
        assert rewrite(before + "\n", src, r) == expected + "\n", before


def test_markdown_encoding_follows_the_original() -> None:
    r = move("people/Ada Lovelace.md", "people/해외 (팀).md")
    assert rewrite("[a](Ada%20Lovelace.md)\n", "people/x.md", r) == f"[a]({quote('해외 (팀).md')})\n"
    assert rewrite("[a](<Ada Lovelace.md>)\n", "people/x.md", r) == "[a](<해외 (팀).md>)\n"
    r2 = move("people/Ada Lovelace.md", "people/Ada.md")
    assert rewrite("[a](Ada%20Lovelace.md)\n", "people/x.md", r2) == "[a](Ada.md)\n"


def test_the_moved_note_fixes_its_own_relative_links() -> None:
    r = move("concepts/Link Syntax.md", "deep/er/Link Syntax.md")
    text = "[x](../people/Ada%20Lovelace.md) [[people/Ada Lovelace]] [[#Wiki]] [[Link Syntax#Wiki]] [y](#Wiki)\n"
    assert rewrite(text, "concepts/Link Syntax.md", r) == (
        "[x](../../people/Ada%20Lovelace.md) [[people/Ada Lovelace]] [[#Wiki]] [[Link Syntax#Wiki]] [y](#Wiki)\n"
    )


def test_a_duplicated_name_makes_links_gain_a_path() -> None:
    r = move("README.md", "archive/Alpha Plan.md")
    text = "[[README]] and [[Alpha Plan#Goals|g]] and [[Meeting Notes]]\n"
    assert rewrite(text, "people/Ada Lovelace.md", r) == (
        "[[archive/Alpha Plan]] and [[projects/alpha/Alpha Plan#Goals|g]] and [[Meeting Notes]]\n"
    )


def test_frontmatter_links_keep_every_other_byte() -> None:
    r = move("README.md", "Home.md")
    text = (
        "---\ntitle: X  # a comment\nup: \"[[README]]\"\nrelated:\n  - '[[README|home]]'\n"
        '  - "[[Ada Lovelace]]"\nnote: plain [[README#Top]] text\n---\nbody [[README]]\n'
    )
    out, found = rewrite_links(text, "people/Ada Lovelace.md", r)
    assert out == text.replace("[[README", "[[Home")
    assert [f.line for f in found] == [3, 5, 7, 9]
    assert frontmatter.parse(out).data == {
        "title": "X",
        "up": "[[Home]]",
        "related": ["[[Home|home]]", "[[Ada Lovelace]]"],
        "note": "plain [[Home#Top]] text",
    }


def test_frontmatter_quoting_that_cannot_carry_the_text_is_emitted() -> None:
    r = move("README.md", "It's.md")
    text = "---\nup: '[[README]]'\nkeep:   'as is'\n---\n"
    out = rewrite(text, "people/Ada Lovelace.md", r)
    assert frontmatter.parse(out).data == {"up": "[[It's]]", "keep": "as is"}
    assert "keep:   'as is'\n" in out


def test_merge_repoints_without_moving() -> None:
    paths = PATHS + ["inbox/Old Plan.md"]
    r = Relocation(LinkResolver(paths), {}, repoint={"inbox/Old Plan.md": "projects/alpha/Alpha Plan.md"})
    text = "[[Old Plan#Risks|r]] [o](../inbox/Old%20Plan.md) [[Alpha Plan]]\n"
    assert rewrite(text, "people/Ada Lovelace.md", r) == ("[[Alpha Plan#Risks|r]] [o](../projects/alpha/Alpha%20Plan.md) [[Alpha Plan]]\n")


def test_link_text_is_the_shortest_unambiguous_form() -> None:
    resolver = LinkResolver(PATHS)
    assert link_text_for(resolver, "people/Ada Lovelace.md") == "Ada Lovelace"
    assert link_text_for(resolver, "projects/beta/Meeting Notes.md") == "projects/beta/Meeting Notes"
    assert link_text_for(resolver, "attachments/diagram.png") == "diagram.png"


def test_delete_relocation_breaks_links() -> None:
    r = Relocation(LinkResolver(PATHS), {"people/Ada Lovelace.md": None})
    assert r.after("Ada Lovelace", "README.md").status == ResolutionStatus.MISSING
    assert rewrite("[[Ada Lovelace]]\n", "README.md", r) == "[[Ada Lovelace]]\n"


# -- the property ---------------------------------------------------------------------------------

_NAMES = st.sampled_from(["Alpha", "alpha two", "Ünïcode", "해외 킥오프", "Plan (v2)", "x", "Meeting Notes"])
_FOLDERS = st.sampled_from(["", "a", "a/b", "b", "deep/er/still", "Ünï"])


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}.md" if folder else f"{name}.md"


def _file_key(file: tuple[str, str]) -> str:
    return _join(*file).casefold()


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[str], str, str, str, list[str]]:
    files = draw(st.lists(st.tuples(_FOLDERS, _NAMES), min_size=2, max_size=8, unique_by=_file_key))
    paths = [_join(*f) for f in files]
    old = paths[0]
    source = draw(st.sampled_from(paths[1:] + [old]))
    new = _join(draw(_FOLDERS), draw(_NAMES))
    if new.casefold() in {p.casefold() for p in paths}:
        new = new[:-3] + " moved.md"
    resolver = LinkResolver(paths)
    stem_unique = resolver.resolve(old.rpartition("/")[2][:-3], source).path == old
    rel = posixpath.relpath(old, posixpath.dirname(source) or ".")
    forms = [
        f"[[{old[:-3]}]]",
        f"[[{old}|label]]",
        f"![[{old[:-3]}#Heading]]",
        f"[[{old[:-3]}#^blk|b]]",
        f"[t]({quote(rel)})",
        f"[t](<{rel}>)",
        f"[t](/{quote(old)}#Heading)",
        f"![i]({quote(old)})",
    ]
    if stem_unique:
        forms += [f"[[{old.rpartition('/')[2][:-3]}]]", f"[[{old.rpartition('/')[2]}#H|x]]"]
    forms = [f for f in forms if resolver.resolve(scan(f).links[0].target, source).path == old]
    links = draw(st.lists(st.sampled_from(forms), min_size=1, max_size=6))
    return paths, old, new, source, links


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_rewritten_links_resolve_to_the_new_path(case: tuple[list[str], str, str, str, list[str]]) -> None:
    paths, old, new, source, links = case
    text = "# Note\n\n" + "\n".join(f"- {link} and `{link}`" for link in links) + "\n"
    reloc = Relocation(LinkResolver(paths), {old: new})
    out, found = rewrite_links(text, source, reloc)
    new_source = new if source == old else source
    post = after_resolver(paths, old, new)
    before, after = scan(text).links, scan(out).links
    assert len(before) == len(after) == len(links)
    for b, a in zip(before, after, strict=True):
        res = post.resolve(a.target, new_source)
        assert res.status == ResolutionStatus.RESOLVED and res.path == new, (b, a, res)
        assert (a.kind, a.anchor, a.label) == (b.kind, b.anchor, b.label)
        if a.target != b.target:
            _assert_same_style(b.target, a.target, new, post)
    # everything outside the links (the code spans included) keeps its bytes
    assert [out[x.end : y.start] for x, y in pairwise(after)] == [text[x.end : y.start] for x, y in pairwise(before)]
    assert out[: after[0].start] == text[: before[0].start] and out[after[-1].end :] == text[before[-1].end :]
    assert len(found) == sum(1 for b, a in zip(before, after) if text[b.start : b.end] != out[a.start : a.end])


def _assert_same_style(was: str, now: str, new: str, post: LinkResolver) -> None:
    """A rewritten target keeps its style: rooted, relative, path-qualified or bare, and ``.md``."""
    assert was.lower().endswith(".md") == now.lower().endswith(".md"), (was, now)
    if was.startswith("/"):
        assert now.startswith("/"), (was, now)
    elif was.startswith(("./", "../")):
        assert now.startswith(("./", "../")), (was, now)
    elif "/" in was:
        assert "/" in now or "/" not in new, (was, now)  # a note moved to the root is named by its name
    else:
        name = new.rpartition("/")[2][:-3]
        bare_unique = post.resolve(name, "").path == new
        assert ("/" not in now) == bare_unique, (was, now)


@st.composite
def own_links(draw: st.DrawFn) -> tuple[list[str], str, str, str, list[str]]:
    """A note that moves, linking to another note in forms that depend on where it sits."""
    files = draw(st.lists(st.tuples(_FOLDERS, _NAMES), min_size=2, max_size=6, unique_by=_file_key))
    paths = [_join(*f) for f in files]
    old, other = paths[0], paths[1]
    new = _join(draw(_FOLDERS), draw(_NAMES))
    if new.casefold() in {p.casefold() for p in paths}:
        new = new[:-3] + " moved.md"
    rel = posixpath.relpath(other, posixpath.dirname(old) or ".")
    forms = [
        f"[t]({quote(rel)})",
        f"[t](<{rel}#Heading>)",
        f"[t](./{quote(rel)})" if not rel.startswith("..") else f"[t]({quote(rel)})",
        f"[[{other[:-3]}|x]]",
        f"[t](/{quote(other)})",
    ]
    resolver = LinkResolver(paths)
    forms = [f for f in forms if resolver.resolve(scan(f).links[0].target, old).path == other]
    links = draw(st.lists(st.sampled_from(forms), min_size=1, max_size=4)) if forms else []
    return paths, old, new, other, links


@settings(max_examples=200, deadline=None)
@given(own_links())
def test_a_moved_note_keeps_naming_what_it_named(case: tuple[list[str], str, str, str, list[str]]) -> None:
    paths, old, new, other, links = case
    text = "\n".join(links) + "\n"
    out, _ = rewrite_links(text, old, Relocation(LinkResolver(paths), {old: new}))
    post = after_resolver(paths, old, new)
    after = scan(out).links
    assert len(after) == len(links)
    for link in after:
        assert post.resolve(link.target, new).path == other, (link, out)
