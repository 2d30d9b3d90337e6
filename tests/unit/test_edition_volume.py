"""A journal volume's pure rules: its name, its entries, and a hash that only the entries' paths and
bodies move."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.editions import VolumesSettings
from vaultd.editions.volume import body_of, clean_folder, in_volumes, latest_edition, volume_hash, volume_name, volumes

SETTINGS = VolumesSettings(folder="Journals", editions="Editions")


def test_names_and_entries() -> None:
    assert volume_name("cs566-notes") == "CS566 Notes"
    assert volume_name("my_garden log") == "My Garden Log"
    found = volumes(
        SETTINGS, ["Journals/a/2.md", "Journals/a/1.md", "Journals/a/.x.md", "Journals/top.md", "Journals/b/.d/x.md", "Other/c.md"]
    )
    assert found == {"a": ["Journals/a/1.md", "Journals/a/2.md"]}
    assert in_volumes(SETTINGS, "Journals/a/1.md") and in_volumes(SETTINGS, "Editions/A.md")
    assert not in_volumes(SETTINGS, "JournalsX/a.md") and not in_volumes(None, "Journals/a/1.md")
    assert [clean_folder(f) for f in ("/Journals/", "a/../b", ".hidden", "", "a//b")] == ["Journals", None, None, None, None]


def test_the_latest_edition_is_the_last_published() -> None:
    notes = {
        "Editions/A 2024-01-01 (2).md": {"volume": "a", "edition": "2024-01-01", "published": "2024-01-01T10:00:00", "volume_hash": "h2"},
        "Editions/A 2024-01-01.md": {"volume": "a", "edition": "2024-01-01", "published": "2024-01-01T09:00:00", "volume_hash": "h1"},
        "Elsewhere/A.md": {"volume": "a", "edition": "2025-01-01", "volume_hash": "h3"},
    }
    assert latest_edition(SETTINGS, "a", notes) == ("Editions/A 2024-01-01 (2).md", "h2")
    assert latest_edition(SETTINGS, "b", notes) is None


def test_editions_published_within_one_second_are_ordered_by_their_number() -> None:
    same = {"volume": "a", "edition": "2024-01-01", "published": "2024-01-01T09:00:00"}
    notes = {
        "Editions/A 2024-01-01.md": {**same, "volume_hash": "h1"},
        "Editions/A 2024-01-01 (10).md": {**same, "volume_hash": "h10"},
        "Editions/A 2024-01-01 (2).md": {**same, "volume_hash": "h2"},
    }
    assert latest_edition(SETTINGS, "a", notes) == ("Editions/A 2024-01-01 (10).md", "h10")


@given(st.text(max_size=40), st.dictionaries(st.sampled_from(["mood", "tags"]), st.sampled_from(["x", "y"]), max_size=2))
def test_frontmatter_and_surrounding_space_never_move_the_hash(body: str, props: dict[str, str]) -> None:
    header = "".join(f"{k}: {v}\n" for k, v in props.items())
    with_props = f"---\n{header}---\n\n{body}\n\n" if props else f"{body}"
    assert volume_hash([("e.md", body_of(with_props))]) == volume_hash([("e.md", body.strip())]) or body.startswith("---")
    assert volume_hash([("e.md", "x")]) != volume_hash([("f.md", "x")])
