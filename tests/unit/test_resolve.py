"""Link resolution, anchors and suggestions; and the sample vault against its hand-written
expectations (examples/sample-vault.expected.json)."""

from __future__ import annotations

import json
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from vaultd.vault.link_targets import (
    SUGGEST_MIN_SCORE,
    LinkResolver,
    Resolution,
    ResolutionStatus,
    Suggester,
    check_anchor,
    suggest,
)
from vaultd.vault.markdown import links_in_value, scan
from vaultd.vault.model import Block, Heading, MarkdownScan

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample-vault"
EXPECTED = REPO / "examples" / "sample-vault.expected.json"

RESOLVED, MISSING, AMBIGUOUS = ResolutionStatus.RESOLVED, ResolutionStatus.MISSING, ResolutionStatus.AMBIGUOUS


def resolver(*paths: str) -> LinkResolver:
    return LinkResolver(paths)


# -- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["Alpha Plan", "alpha plan", "ALPHA PLAN.md", "Alpha Plan.MD", " Alpha Plan "])
def test_bare_name_case_insensitive_and_md_optional(target: str) -> None:
    r = resolver("notes/Alpha Plan.md", "b.md")
    assert r.resolve(target, "b.md") == Resolution(RESOLVED, "notes/Alpha Plan.md", reason="matched by name")


def test_nfc_and_nfd_names_meet() -> None:
    nfd = unicodedata.normalize("NFD", "Café.md")
    r = resolver(nfd)
    res = r.resolve("café", "x.md")
    assert (res.status, res.path) == (RESOLVED, nfd)  # reported as spelled on disk


def test_attachment_needs_its_extension() -> None:
    r = resolver("img/diagram.png", "note.md")
    assert r.resolve("diagram.png", "note.md").path == "img/diagram.png"
    assert r.resolve("Diagram.PNG", "note.md").path == "img/diagram.png"
    missing = r.resolve("diagram", "note.md")
    assert missing.status is MISSING
    assert "extension" in missing.reason
    assert "extension" not in r.resolve("other", "note.md").reason
    r.remove("img/diagram.png")
    assert "extension" not in r.resolve("diagram", "note.md").reason


def test_note_with_a_dot_in_its_stem() -> None:
    r = resolver("v1.2 release.md")
    assert r.resolve("v1.2 release", "x.md").path == "v1.2 release.md"


def test_md_suffix_only_matches_notes() -> None:
    r = resolver("data/t", "t.md")  # an extensionless attachment shares the stem
    assert r.resolve("t.md", "x.md").path == "t.md"
    assert r.resolve("t", "x.md").status is AMBIGUOUS


def test_case_only_collision_is_ambiguous() -> None:
    r = resolver("notes/foo-bar.md", "notes/Foo-Bar.md")
    res = r.resolve("foo-bar", "x.md")
    assert res.status is AMBIGUOUS
    assert res.path is None
    assert res.candidates == ["notes/Foo-Bar.md", "notes/foo-bar.md"]
    assert "letter case" in res.reason


def test_nfd_collision_is_ambiguous() -> None:
    nfc, nfd = "Résumé.md", unicodedata.normalize("NFD", "Résumé.md")
    r = resolver(nfc, nfd)
    assert r.resolve("résumé", "x.md").candidates == sorted([nfc, nfd])


def test_same_name_in_two_folders_is_ambiguous_until_a_folder_is_given() -> None:
    r = resolver("a/Meeting.md", "b/Meeting.md")
    res = r.resolve("Meeting", "x.md")
    assert res.status is AMBIGUOUS
    assert res.candidates == ["a/Meeting.md", "b/Meeting.md"]
    assert "folder" in res.reason
    assert r.resolve("a/Meeting", "x.md").path == "a/Meeting.md"
    assert r.resolve("b/meeting.md", "x.md").path == "b/Meeting.md"


def test_missing_has_a_reason() -> None:
    res = resolver("a.md").resolve("Nowhere", "a.md")
    assert res == Resolution(MISSING, reason=res.reason)
    assert "Nowhere" in res.reason


def test_empty_target_is_the_source() -> None:
    assert resolver("a/b.md").resolve("", "a/b.md").path == "a/b.md"


# -- paths ----------------------------------------------------------------------------------------


def test_vault_relative_path() -> None:
    r = resolver("projects/alpha/Plan.md", "projects/beta/Plan.md")
    assert r.resolve("projects/alpha/Plan", "x.md").path == "projects/alpha/Plan.md"
    assert r.resolve("/projects/beta/Plan.md", "x.md").path == "projects/beta/Plan.md"


def test_path_relative_to_the_source() -> None:
    r = resolver("a/b/Target.md", "a/c/Source.md", "Target.md")
    assert r.resolve("../b/Target.md", "a/c/Source.md").path == "a/b/Target.md"
    assert r.resolve("./Source.md", "a/c/Source.md").path == "a/c/Source.md"
    assert r.resolve("../../Target.md", "a/c/Source.md").path == "Target.md"
    assert r.resolve("../../../Target.md", "a/c/Source.md").status is MISSING  # outside the vault
    assert r.resolve("./Target.md", "a/c/Source.md").status is MISSING  # explicit: no suffix search


def test_relative_path_without_dots_prefers_the_vault_root() -> None:
    r = resolver("sub/t.md", "a/sub/t.md", "a/s.md")
    assert r.resolve("sub/t", "a/s.md").path == "sub/t.md"
    assert r.resolve("./sub/t", "a/s.md").path == "a/sub/t.md"


def test_path_suffix_when_unique() -> None:
    r = resolver("notes/projects/2024/Plan.md", "notes/other/Plan.md", "img/x/pic.png")
    assert r.resolve("2024/Plan", "z.md").path == "notes/projects/2024/Plan.md"
    assert r.resolve("projects/2024/plan.md", "z.md").path == "notes/projects/2024/Plan.md"
    assert r.resolve("x/pic.png", "z.md").path == "img/x/pic.png"
    assert r.resolve("jects/2024/Plan", "z.md").status is MISSING  # whole folder names only
    assert r.resolve("/2024/Plan", "z.md").status is MISSING  # rooted: no suffix search


def test_path_suffix_ambiguous() -> None:
    r = resolver("a/sub/t.md", "b/sub/t.md")
    res = r.resolve("sub/t", "x.md")
    assert res.status is AMBIGUOUS
    assert res.candidates == ["a/sub/t.md", "b/sub/t.md"]


def test_add_and_remove() -> None:
    r = resolver("a/t.md")
    r.add("b/T.md")
    r.add("b/T.md")  # twice is once
    assert len(r) == 2
    assert r.resolve("t", "x.md").status is AMBIGUOUS
    r.remove("a/t.md")
    r.remove("a/t.md")  # unknown: ignored
    assert "a/t.md" not in r
    assert r.resolve("t", "x.md").path == "b/T.md"
    r.remove("b/T.md")
    assert r.resolve("t", "x.md").status is MISSING
    assert r.resolve("b/T", "x.md").status is MISSING


# -- anchors --------------------------------------------------------------------------------------

HEADINGS = [
    Heading(1, "Plan", 1),
    Heading(2, "Goals", 3),
    Heading(3, "Milestones", 5),
    Heading(2, "Risks: open", 8),
    Heading(3, "Later", 9),
    Heading(2, "Notes", 10),
    Heading(3, "Milestones", 11),
]
BLOCKS = [Block("goal-1", 4)]


@pytest.mark.parametrize(
    "anchor",
    [
        "Goals",
        " goals ",
        "GOALS",
        "Goals#Milestones",
        "Plan#Goals#Milestones",
        "Plan#Milestones",
        "Notes#Milestones",
        "Risks open",
        "Risks: open",
        "^goal-1",
        "^GOAL-1",
    ],
)
def test_anchor_found(anchor: str) -> None:
    assert check_anchor(anchor, HEADINGS, BLOCKS) is None


@pytest.mark.parametrize(
    ("anchor", "reason"),
    [
        ("Nope", "no heading"),
        ("Milestones#Goals", "no heading path"),
        ("Risks open#Milestones", "no heading path"),  # Milestones is not under Risks
        ("Goals#Later", "no heading path"),
        ("^nope", "no block ^nope"),
    ],
)
def test_anchor_missing(anchor: str, reason: str) -> None:
    found = check_anchor(anchor, HEADINGS, BLOCKS)
    assert found is not None and reason in found


# -- suggestions ----------------------------------------------------------------------------------

TITLES = ["Project Alpha", "Beta Overview", "Grace Hopper", "Ada Lovelace", "해외사업단 킥오프"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("project-alpha", "Project Alpha"),
        ("Project Alpah", "Project Alpha"),
        ("grace hoper", "Grace Hopper"),
        ("해외사업단 킥오프", "해외사업단 킥오프"),
    ],
)
def test_suggest_finds_near_titles(text: str, expected: str) -> None:
    found = suggest(text, TITLES)
    assert found is not None and found[0] == expected
    assert SUGGEST_MIN_SCORE <= found[1] <= 100


@pytest.mark.parametrize("text", ["Gamma Launch", "Alpha", "", "---"])
def test_suggest_stays_silent_when_unsure(text: str) -> None:
    assert suggest(text, TITLES) is None


def test_suggester_agrees_with_suggest_and_follows_changes() -> None:
    suggester = Suggester(TITLES)
    assert len(suggester) == len(TITLES)
    for text in ("project-alpha", "grace hoper", "Gamma Launch", ""):
        assert suggester.suggest(text) == suggest(text, TITLES), text
    suggester.remove("Grace Hopper")
    suggester.remove("Grace Hopper")  # unknown: ignored
    assert suggester.suggest("grace hoper") is None
    suggester.add("Grace Hopper")
    back = suggester.suggest("grace hoper")
    assert back is not None and back[0] == "Grace Hopper"


def test_suggest_is_fast_over_100k_titles() -> None:
    titles = [f"Note {i} about topic {i % 977}" for i in range(100_000)]
    titles[71_234] = "Quarterly Planning Review"
    start = time.perf_counter()
    found = suggest("quarterly planing review", titles)
    once = time.perf_counter() - start
    suggester = Suggester(titles)
    start = time.perf_counter()
    again = suggester.suggest("quarterly planing review")
    kept = time.perf_counter() - start
    assert found is not None and found[0] == "Quarterly Planning Review"
    assert again == found
    # Generous bounds for a loaded machine; typically about 110 ms and 15 ms.
    assert once < 1.5, f"suggest took {once:.3f}s over 100k titles"
    assert kept < 0.5, f"Suggester.suggest took {kept:.3f}s over 100k titles"


# -- the sample vault -----------------------------------------------------------------------------


def split_frontmatter(text: str) -> tuple[int, int]:
    """(body offset, body line) for a note that may open with a ``---`` block."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end >= 0:
            offset = end + 5
            return offset, text.count("\n", 0, offset) + 1
    return 0, 1


def sample_vault() -> tuple[dict[str, str], list[str]]:
    # Skip .vaultd/ (a daemon under test may own the vault), .obsidian/, .git/, .trash/.
    files = sorted(
        rel for p in SAMPLE.rglob("*") if p.is_file() and not (rel := p.relative_to(SAMPLE).as_posix()).startswith(".") and "/." not in rel
    )
    notes = {p: (SAMPLE / p).read_text(encoding="utf-8") for p in files if p.endswith(".md")}
    return notes, files


def link_view(text: str, link: Any) -> dict[str, Any]:
    return {
        "raw": text[link.start : link.end] if link.start >= 0 else None,
        "kind": link.kind.value,
        "target": link.target,
        "anchor": link.anchor,
        "label": link.label,
    }


def test_sample_vault_files() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    _, files = sample_vault()
    assert files == expected["files"]
    png = (SAMPLE / "attachments" / "diagram.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) <= 1024


def test_sample_vault_matches_expectations() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))["notes"]
    notes, files = sample_vault()
    assert sorted(notes) == sorted(expected)
    r = LinkResolver(files)
    scans: dict[str, MarkdownScan] = {}
    for path, text in notes.items():
        scans[path] = scan(text, *split_frontmatter(text))
    for path, text in notes.items():
        want, got = expected[path], scans[path]
        assert [[h.level, h.text] for h in got.headings] == want["headings"], path
        assert [b.id for b in got.blocks] == want["blocks"], path
        assert [t.name for t in got.tags] == want["tags"], path
        fm_end, _ = split_frontmatter(text)
        fm_links = [link for number, line in enumerate(text[:fm_end].split("\n"), start=1) for link in links_in_value(line, number)]
        for kind, found, wanted in (
            ("body", got.links, want["links"]),
            ("frontmatter", fm_links, want["frontmatter_links"]),
        ):
            assert len(found) == len(wanted), (path, kind, [link_view(text, k) for k in found])
            for link, w in zip(found, wanted):
                view = link_view(text, link)
                if kind == "frontmatter":
                    view["raw"] = w["raw"]
                assert view == {k: w[k] for k in view}, path
                res = r.resolve(link.target, path)
                assert (res.status.value, res.path) == (w["status"], w["path"]), (path, w["raw"], res)
                assert res.candidates == w.get("candidates", []), (path, w["raw"])
                if link.anchor is not None and res.path is not None:
                    target_scan = scans[res.path]
                    ok = check_anchor(link.anchor, target_scan.headings, target_scan.blocks) is None
                    assert ok == w["anchor_ok"], (path, w["raw"])
