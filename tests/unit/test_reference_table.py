"""The identifier table catches up with the index by the paths each change touched, and always
equals the table built from every note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.sources import references
from vaultd.vault.index import VaultIndex
from vaultd.vault.reading import Updates, compute_updates
from vaultd.vault.walk import FileStat

if TYPE_CHECKING:
    import pytest

_PATHS = st.sampled_from(["a.md", "b.md", "refs/c.md", "refs/d.md"])
_KEYS = st.sampled_from([None, "smith2020", "Smith2020", "jones1999"])
_DOIS = st.sampled_from([None, "10.1000/xyz123", "https://doi.org/10.1000/XYZ123", "10.5555/abc"])
_STEPS = st.lists(st.tuples(_PATHS, st.booleans(), _KEYS, _DOIS), min_size=1, max_size=12)


def _scratch(index: VaultIndex) -> references.ReferenceTable:
    built = references.ReferenceTable(generation=index.generation)
    for path, record in index.notes.items():
        references._add_if_listed(built, path, record)
    return built


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(_STEPS, min_size=1, max_size=5), asked_between=st.lists(st.booleans(), min_size=5, max_size=5))
def test_a_table_caught_up_by_changes_equals_one_built_from_every_note(
    tmp_path_factory: pytest.TempPathFactory, batches: list[list[tuple[str, bool, str | None, str | None]]], asked_between: list[bool]
) -> None:
    root = tmp_path_factory.mktemp("vault")
    (root / "refs").mkdir()
    index = VaultIndex(root, None)
    references.table(index)  # the first table, built from (no) notes
    for batch, ask in zip(batches, asked_between, strict=False):
        found, gone = [], []
        for path, present, citekey, doi in batch:
            if present:
                fields = "".join(f"{k}: {v}\n" for k, v in (("citekey", citekey), ("doi", doi)) if v is not None)
                (root / path).write_text(f"---\n{fields}---\n# {path}\n" if fields else f"# {path}\n")
                found.append(FileStat(path, 1, 0, 0, is_note=True))
            elif (root / path).exists():
                (root / path).unlink()
                gone.append(path)
        latest = {f.path: f for f in found}  # one batch names a path once, as a refresh does
        index.apply(compute_updates(root, list(latest.values()), {}, [g for g in gone if g not in latest]) or Updates())
        if ask:
            caught_up = references.table(index)
            scratch = _scratch(index)
            assert (caught_up.citekeys, caught_up.dois, caught_up.arxiv, caught_up.keys) == (
                scratch.citekeys,
                scratch.dois,
                scratch.arxiv,
                scratch.keys,
            )
            assert caught_up.generation == index.generation
    final = references.table(index)
    assert final.citekeys == _scratch(index).citekeys and final.dois == _scratch(index).dois


def test_a_reader_holding_the_old_table_never_sees_it_change(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("vault")
    index = VaultIndex(root, None)
    (root / "a.md").write_text("---\ncitekey: smith2020\n---\n# A\n")
    index.apply(compute_updates(root, [FileStat("a.md", 1, 0, 0, is_note=True)], {}, []))
    old = references.table(index)
    (root / "a.md").unlink()
    index.apply(Updates(gone=["a.md"]))
    new = references.table(index)
    assert new is not old and new.find("smith2020") == []
    assert old.find("smith2020") == ["a.md"], "the table a search took before the change is left as it was"


def test_the_index_says_when_it_no_longer_knows_what_changed(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("vault")
    index = VaultIndex(root, None)
    start = index.generation
    index.apply(Updates(gone=["x.md"]))
    assert index.changed_since(start) == {"x.md"}
    assert index.changed_since(index.generation) == set()
    for i in range(300):  # more changes than it remembers
        index.apply(Updates(gone=[f"n{i}.md"]))
    assert index.changed_since(start) is None
    index.apply(Updates(gone=[f"big{i}.md" for i in range(6000)]))  # one change too big to list
    assert index.changed_since(index.generation - 1) is None
