"""The index's name maps hold each key's paths as a group: whatever the order of adds and
removes, a group holds exactly the paths a set would, an ordered one in the order they came,
and a group left empty is gone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultd.vault.path_bags import LARGE, SMALL, PathBag, added, members, removed

_paths = st.sampled_from([f"p{i}.md" for i in range(SMALL + 8)] + [f"q{i}.md" for i in range(LARGE)])
_steps = st.lists(st.tuples(st.booleans(), _paths), max_size=600)


@given(_steps, st.booleans())
def test_a_group_holds_what_a_set_would(steps: list[tuple[bool, str]], ordered: bool) -> None:
    bag: PathBag | None = None
    model: list[str] = []
    for add, path in steps:
        if add:
            bag = added(bag, path, ordered=ordered)
            if path not in model:
                model.append(path)
        else:
            bag = removed(bag, path)
            if path in model:
                model.remove(path)
        assert (bag is None) == (not model)
        got = members(bag)
        assert sorted(got) == sorted(model)
        assert len(got) == len(model)  # each path once
        if ordered:
            assert list(got) == model
            assert isinstance(bag, (str, tuple, type(None)))


def test_one_path_is_held_alone_more_in_a_list_and_many_in_a_set() -> None:
    bag = added(None, "a.md", ordered=False)
    assert bag == "a.md" and added(bag, "a.md", ordered=False) == "a.md"
    for i in range(SMALL):
        bag = added(bag, f"n{i}.md", ordered=False)
    assert isinstance(bag, list) and len(bag) == SMALL + 1
    assert added(bag, "n3.md", ordered=False) is bag and len(bag) == SMALL + 1
    for i in range(SMALL, LARGE - 1):
        bag = added(bag, f"n{i}.md", ordered=False)
    assert isinstance(bag, list) and len(bag) == LARGE
    bag = added(bag, "last.md", ordered=False)
    assert isinstance(bag, set) and len(bag) == LARGE + 1
    ordered: PathBag = "a.md"
    for i in range(SMALL):
        ordered = added(ordered, f"n{i}.md", ordered=True)
    assert isinstance(ordered, tuple) and len(ordered) == SMALL + 1
    assert removed(removed(("a.md", "b.md"), "a.md"), "b.md") is None
    assert removed(("a.md", "b.md"), "a.md") == "b.md"
