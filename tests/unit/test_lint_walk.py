"""A lint walks a copy of the index, and within its time.

The copy (``VaultIndex.copy``) is what lets ``vault.lint`` run with the index free: whatever the
index applies after it, a lint of the copy finds what a lint of the vault as copied finds. The
resolver's copy shares its lists with the original, which is safe only while the original never
changes a list in place: a property test draws adds and removes around a copy. The walk's time
bound (``Deadline``) stops it at its bound, at any point of the walk, with LIMIT.
"""

from __future__ import annotations

import datetime as dt
import shutil
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import ErrorCode
from protocol.methods.common import Channel
from protocol.methods.lint import LintCode
from protocol.methods.vaults import VaultEntry
from vaultd.errors import LimitExceeded
from vaultd.lint.engine import run
from vaultd.lint.gather import gather
from vaultd.lint.model import Deadline, Finding
from vaultd.policy.visibility import Visibility
from vaultd.vault.index import VaultIndex
from vaultd.vault.link_targets import LinkResolver, Suggester
from vaultd.vault.reading import compute_updates

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.vault.index import IndexCopy

AS_OF = dt.date(2026, 1, 1)
VAULT = {
    "Home MOC.md": "---\ntype: moc\n---\n# Home\n\n- [[Topic]]\n- [[Alpha]]\n",
    "Topic.md": "---\ntags: [Project]\n---\n# Topic\n\nAbout [[Nowhere Note]] and [[Alpha#No Such Heading]].\n",
    "Alpha.md": "---\nup: '[[Topic]]'\naliases: [Al, First]\ntags: [project]\n---\n# Alpha\n\nSee [[Al]] and ![[missing.png]].\n",
    "Beta.md": "---\naliases: [First]\n---\n# Beta\n\nText about beta and [[Alpha]] and [[Twin]].\n",
    "a/Twin.md": "# Twin\n\nIn a, see [[Twin]] and [[Topic]].\n",
    "Orphan.md": "# Orphan\n\nNobody links here.\n",
    "Map.canvas": '{"nodes": [{"id": "a", "type": "file", "file": "Beta.md"}], "edges": []}',
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _index(root: Path) -> VaultIndex:
    index = VaultIndex(root, None)
    index.build()
    return index


def _refresh(index: VaultIndex, rels: set[str]) -> None:
    """What the watcher does for changed paths: stat, parse, apply."""
    found, gone = index.stat_paths(rels)
    index.apply(compute_updates(index.root, found, index.notes, gone), write_cache=False)


def _lint(index: VaultIndex | IndexCopy, root: Path, deadline: Deadline | None = None) -> list[Finding]:
    entry = VaultEntry(id="v", path=str(root))
    return run(gather(index, entry, Visibility.of(entry, Channel.CLI), AS_OF, deadline=deadline))


def _rows(found: list[Finding]) -> list[tuple[str, str, int | None, str]]:
    return [(str(f.code), f.note, f.line, f.message) for f in found]


# -- the copy ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("linted_first", [True, False], ids=["snapshot-kept", "built-from-the-copy"])
def test_a_lint_of_a_copy_is_a_lint_of_the_vault_as_copied(tmp_path: Path, linted_first: bool) -> None:
    root, twin = tmp_path / "v", tmp_path / "twin"
    _write(root, VAULT)
    shutil.copytree(root, twin)
    index = _index(root)
    if linted_first:
        _lint(index, root)  # the snapshot of this generation is kept: the copy's lint reuses it
    copy = index.copy()
    aliases = {text: index.notes_by_alias(text) for text in ("Al", "first", "nobody")}

    # Every kind of change the rules read: a linked note gone, a name clash, an alias, a tag.
    (root / "Topic.md").unlink()
    _write(root, {"b/Twin.md": "# Twin\n\n#Project\n", "Gamma.md": "---\naliases: [Al]\n---\n# Gamma\n\n[[Beta]]\n"})
    _write(root, {"Beta.md": "# Beta\n\nNow about [[Gamma]] only.\n"})
    _refresh(index, {"Topic.md", "b/Twin.md", "Gamma.md", "Beta.md"})
    assert index.generation > copy.generation

    as_copied = _rows(_lint(_index(twin), twin))
    assert _rows(_lint(copy, root)) == as_copied
    assert _rows(_lint(index, root)) != as_copied  # the index itself moved on
    assert {text: copy.notes_by_alias(text) for text in aliases} == aliases
    assert sorted(copy.notes) == sorted(p for p in VAULT if p.endswith(".md"))
    assert copy.resolver.resolve("Twin", "").path == "a/Twin.md"
    assert index.resolver.resolve("Twin", "").status == "ambiguous"


PATHS = ["a.md", "A.md", "x/a.md", "y/a.md", "b.png", "x/b.png", "b.md", "x/c.md", "c.pdf", "Ä.md", "x/ä.md"]
TARGETS = ["a", "A.md", "x/a", "y/a.md", "b.png", "x/b.png", "b", "c", "x/c", "c.pdf", "ä", "x/Ä", "/a", "./a", "b.PNG"]


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(st.tuples(st.booleans(), st.sampled_from(PATHS)), max_size=20),
    after=st.lists(st.tuples(st.booleans(), st.sampled_from(PATHS)), max_size=20),
)
def test_a_resolver_copy_is_left_alone_by_later_adds_and_removes(before: list[tuple[bool, str]], after: list[tuple[bool, str]]) -> None:
    """The copy shares the original's lists; it still answers as a resolver of the paths it was
    copied with, whatever the original adds and removes after."""
    resolver, titles = LinkResolver(), Suggester()
    present: list[str] = []
    for adding, path in before:
        (resolver.add if adding else resolver.remove)(path)
        (titles.add if adding else titles.remove)(path)
        if adding and path not in present:
            present.append(path)
        elif not adding and path in present:
            present.remove(path)
    copy, titles_copy = resolver.copy(), titles.copy()
    expected = LinkResolver(present)
    answers = {(t, s): expected.resolve(t, s) for t in TARGETS for s in ("", "x/n.md")}
    for adding, path in after:
        (resolver.add if adding else resolver.remove)(path)
        (titles.add if adding else titles.remove)(path)
    assert {(t, s): copy.resolve(t, s) for t in TARGETS for s in ("", "x/n.md")} == answers
    assert len(copy) == len(present)
    assert sorted(titles_copy._processed) == sorted(present)


# -- the time bound -------------------------------------------------------------------------------


class Clock:
    """A clock that stands still until told, counting how often it is read."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0
        self.jump_at: int | None = None  #: the reading from which the clock reads 1,000 s later

    def __call__(self) -> float:
        self.readings += 1
        if self.jump_at is not None and self.readings >= self.jump_at:
            return self.now + 1000.0
        return self.now


def test_the_bound_holds_at_its_edge() -> None:
    clock = Clock()
    deadline = Deadline(10.0, clock)
    clock.now = 9.999
    deadline.check()  # just inside
    assert deadline.left() == pytest.approx(0.001)
    clock.now = 10.0
    with pytest.raises(LimitExceeded) as refused:
        deadline.check()
    assert refused.value.code is ErrorCode.LIMIT and "10 s" in str(refused.value)
    assert deadline.left() == 0.0


def _many(root: Path, notes: int) -> None:
    _write(root, VAULT)
    for i in range(notes):
        _write(root, {f"many/n{i:04d}.md": f"# N {i}\n\nSee [[n{(i + 1) % notes:04d}]] and [[Nowhere {i % 7}]] #tag{i % 5}\n"})


def test_the_walk_stops_wherever_the_bound_passes(tmp_path: Path) -> None:
    """Run once with the clock standing still, counting its readings; then once per reading with
    the clock jumping past the bound there: each run stops with LIMIT at that very reading, so
    the walk reads the clock throughout, in every rule, and stops at the first reading past it."""
    root = tmp_path / "v"
    _many(root, 1500)
    index = _index(root)
    clock = Clock()
    whole = _lint(index, root, Deadline(45.0, clock))
    readings = clock.readings
    # Between the rules it is read once a rule; inside them, once every CHECK_EVERY notes of at
    # least five rules that go through every note.
    assert readings > len(LintCode) + 5 * 1500 // Deadline.CHECK_EVERY, readings
    for jump in range(2, readings + 1):
        clock = Clock()
        deadline = Deadline(45.0, clock)
        clock.jump_at = jump
        with pytest.raises(LimitExceeded):
            _lint(index, root, deadline)
        # Stopped at that reading, or at the next when that one was the documents' share of the
        # time (``Deadline.left``, which only shortens their reading).
        assert jump <= clock.readings <= jump + 1, f"the walk went on past the bound (reading {jump}: {clock.readings})"
    clock = Clock()
    assert _rows(_lint(index, root, Deadline(45.0, clock))) == _rows(whole)  # a run inside the bound finds everything
