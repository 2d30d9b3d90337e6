"""The spec checks over a source read in memory: each finding by its code, and a write refused
only for an error it introduces."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultd.specs import checks
from vaultd.specs.documents import read_source

if TYPE_CHECKING:
    from pathlib import Path


def _source(folder: Path, files: dict[str, str]) -> list[tuple[str, str, str]]:
    for name, text in files.items():
        (folder / name).write_text(text)
    return [(f.code.value, f.id or "", f.target or f.field or "") for f in checks.findings(read_source("s", str(folder)))]


def test_every_check_finds_its_problem(tmp_path: Path) -> None:
    found = _source(
        tmp_path,
        {
            "a.md": "---\nid: a\ntype: goal\ntitle: A\nparent: d\n---\n",
            "b.md": "---\nid: b\ntype: goal\ntitle: B\nparent: a\ndepends-on: [zz]\n---\n",
            "c.md": "---\nid: a\ntype: module\ntitle: C\n---\n",
            "d.md": "---\nid: d\ntype: module\ntitle: D\nparent: a\nsuperseded-by: b\ntags: x\n---\n",
            "e.md": "---\nid: e\ntype: planet\n---\n",
            "SPEC.md": "no frontmatter\n",
            "README.md": "# Not a spec\n",
        },
    )
    assert sorted(found) == sorted(
        [
            ("missing-field", "", "id"),
            ("missing-field", "", "type"),
            ("missing-field", "", "title"),
            ("rank", "a", "d"),
            ("cycle", "a", "d"),
            ("rank", "b", "a"),
            ("dangling", "b", "zz"),
            ("duplicate-id", "a", "a.md"),
            ("bad-value", "d", "tags"),
            ("cycle", "d", "a"),
            ("replacement", "d", "b"),
            ("missing-field", "e", "title"),
            ("bad-value", "e", "type"),
        ]
    )


def test_only_introduced_errors_count(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\nid: a\ntype: goal\ntitle: A\ndepends-on: [gone]\n---\n")
    before = checks.findings(read_source("s", str(tmp_path)))
    (tmp_path / "a.md").write_text("---\nid: a\ntype: goal\ntitle: A renamed\ndepends-on: [gone]\n---\n")
    assert checks.introduced(before, checks.findings(read_source("s", str(tmp_path)))) == []
    (tmp_path / "a.md").write_text("---\nid: a\ntype: goal\ntitle: A\ndepends-on: [gone, also-gone]\n---\n")
    assert [f.target for f in checks.introduced(before, checks.findings(read_source("s", str(tmp_path))))] == ["also-gone"]
