"""The retrieval-by-meaning benchmark's data: the AsciiDoc-to-Markdown converter and the question file."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from benchmarks.meaning_corpus import _ar_member, build, convert, convert_man
from benchmarks.meaning_models import GROUPS, QUESTIONS, Question, group, hit_rank, load_questions, note_ranking, rrf, scores

if TYPE_CHECKING:
    from pathlib import Path

PAGE = """git-demo(1)
===========

NAME
----
git-demo - Show a demo

SYNOPSIS
--------
[verse]
'git demo' [--loud]

DESCRIPTION
-----------
:git-demo: 1
Runs the demo; see linkgit:git-other[1] and linkgit:git-absent[1].

--loud::
	Speak up.
+
More about speaking.

include::shared-options.txt[]
include::missing.txt[]

Examples
~~~~~~~~
------------
$ git demo --loud
```not a fence```
------------

== A titled section
Text.
"""


def test_convert_maps_headings_blocks_terms_and_links() -> None:
    note = convert("git-demo", PAGE, {"git-demo", "git-other", "shared-options"})
    lines = note.text.splitlines()
    assert lines[0] == "# git-demo"
    assert "## NAME" in lines and "## DESCRIPTION" in lines and "### Examples" in lines and "## A titled section" in lines
    assert "**--loud**" in lines
    assert "See [[shared-options]]." in lines
    assert "missing" not in note.text
    assert "[[git-other]]" in note.text and "`git-absent(1)`" in note.text
    assert ":git-demo:" not in note.text and "[verse]" not in note.text
    fences = [i for i, line in enumerate(lines) if line == "```"]
    assert len(fences) == 2
    inside = lines[fences[0] + 1 : fences[1]]
    assert inside == ["$ git demo --loud", "'''not a fence'''"]
    assert not re.search(r"\n\n\n", note.text) and note.text.endswith("\n") and not note.text.endswith("\n\n")


def test_convert_without_a_title_names_the_note() -> None:
    assert convert("plain", "just text\n", set()).text == "# plain\n\njust text\n"


def test_an_unclosed_listing_is_closed() -> None:
    text = convert("x", "Title\n=====\n\n----\ncode\n", set()).text
    assert text.count("```") == 2


def test_build_is_deterministic_and_keeps_subfolders(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "howto").mkdir(parents=True)
    (docs / "git-demo.txt").write_text(PAGE, encoding="utf-8")
    (docs / "shared-options.txt").write_text("--x::\n\tAn option.\n", encoding="utf-8")
    (docs / "howto" / "recover.txt").write_text("Recover\n=======\nSee linkgit:git-demo[1].\n", encoding="utf-8")
    first = build(docs, tmp_path / "a")
    second = build(docs, tmp_path / "b")
    assert [n.name for n in first] == ["git-demo", "howto/recover", "shared-options"]
    for note in first:
        assert (tmp_path / "a" / f"{note.name}.md").read_bytes() == (tmp_path / "b" / f"{note.name}.md").read_bytes()
    assert [n.text for n in first] == [n.text for n in second]
    assert "[[git-demo]]" in (tmp_path / "a" / "howto" / "recover.md").read_text(encoding="utf-8")


def test_ar_member_reads_a_deb_shaped_archive() -> None:
    def member(name: str, body: bytes) -> bytes:
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(body):<10}`\n".encode()
        return header + body + (b"\n" if len(body) % 2 else b"")

    blob = b"!<arch>\n" + member("debian-binary", b"2.0\n") + member("control.tar.xz", b"abc") + member("data.tar.xz", b"payload")
    assert _ar_member(blob, "data.tar") == b"payload"


def test_the_question_file_loads_and_keeps_its_promises() -> None:
    header, questions = load_questions()
    assert "heldout" in header["split"]
    by_lang = {lang: [q for q in questions if q.lang == lang] for lang in ("en", "ja")}
    assert len(by_lang["en"]) >= 150 and len(by_lang["ja"]) >= 60
    assert len(questions) == len(by_lang["en"]) + len(by_lang["ja"])
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        assert q.id.startswith(q.lang + "-") and q.text.strip() and q.targets
        assert q.need in ("any", "all") and q.split in ("tune", "heldout")
        assert all(t and not t.endswith(".md") and not t.startswith("/") for t in q.targets)
        assert q.split == ("heldout" if int(q.id.split("-")[1]) % 4 == 0 else "tune")
    assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", q.text) for q in by_lang["ja"])
    assert QUESTIONS.read_text(encoding="utf-8").splitlines()[0].startswith('{"header"')


def test_scoring_collapses_passages_to_notes() -> None:
    one = Question("en-001", "en", "q", ("b",), "any", "tune")
    both = Question("en-002", "en", "q", ("b", "c"), "all", "tune")
    ranking = note_ranking(["a", "a", "b", "a", "c"])
    assert ranking == ["a", "b", "c"]
    assert hit_rank(ranking, one) == 2
    assert hit_rank(ranking, both) == 3
    assert hit_rank(["a", "b"], both) is None
    assert scores([1, 2, None, 11]) == {"r@1": 0.25, "r@5": 0.5, "r@10": 0.5, "mrr": 0.375}


def test_rrf_rewards_agreement() -> None:
    assert rrf([1, 2, 3], [3, 2, 1]) == [1, 3, 2]  # 1 and 3 tie above 2; ties by index
    assert rrf([1, 2], [2, 9]) == [2, 1, 9]


RENDERED = """LS(1)                    ユーザーコマンド                    LS(1)



名前
       ls - ディレクトリの内容をリスト表示する

書式
   基本
       ls [オプション]... [ファイル]...

       -a, --all
              . で始まる要素を無視しない

GNU coreutils 8.32                2020年3月                         LS(1)
"""


def test_convert_man_keeps_sections_and_drops_the_running_header_and_footer() -> None:
    note = convert_man("ls", RENDERED)
    assert note.name == "ja/ls"
    assert note.text.splitlines()[:5] == ["# ls", "", "## 名前", "", "ls - ディレクトリの内容をリスト表示する"]
    assert "## 書式" in note.text and "### 基本" in note.text and "-a, --all" in note.text
    assert "LS(1)" not in note.text and "coreutils" not in note.text


def test_japanese_questions_count_apart_by_the_language_of_their_notes() -> None:
    _, questions = load_questions()
    groups = {g: [q for q in questions if group(q) == g] for g in GROUPS}
    assert len(groups["en"]) >= 150 and len(groups["ja>en"]) >= 60 and len(groups["ja"]) >= 60
    assert all(all(t.startswith("ja/") for t in q.targets) for q in groups["ja"])
    assert all(q.lang == "en" and not any(t.startswith("ja/") for t in q.targets) for q in groups["en"])


def test_weighted_rrf_leans_toward_the_heavier_ranking() -> None:
    assert rrf([1, 2], [2, 1], weights=(1.0, 1.0)) == [1, 2]  # a tie, broken by index
    assert rrf([1, 2], [2, 1], weights=(1.0, 2.0)) == [2, 1]
    assert rrf([1, 2], [2, 1], weights=(2.0, 1.0)) == [1, 2]
