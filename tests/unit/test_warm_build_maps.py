"""A warm build fills its name maps after the note table is whole, from each cached record's
sketch: the maps it ends with are the ones a build that parses every note makes, whatever
changed while the daemon was down (a note edited, added, deleted, turned into a skipped file),
and the table is whole, and left alone, when the build says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.vault.cache import IndexCache
from vaultd.vault.index import BuildTally, VaultIndex
from vaultd.vault.path_bags import members

if TYPE_CHECKING:
    from pathlib import Path

NAMES = ["Alpha", "beta", "Gamma", "Ünïcode", "dup", "a/dup", "b/dup", "deep/x/Alpha"]


def _maps(index: VaultIndex) -> dict[str, Any]:
    """The name maps as sets (a group's order is the order notes were added in)."""
    resolver = index.resolver
    return {
        "by_name": {k: set(members(v)) for k, v in resolver._by_name.items()},
        "by_path": {k: set(members(v)) for k, v in resolver._by_path.items()},
        "path_key": dict(resolver._path_key),
        "stems": dict(resolver._attachment_stems),
        "aliases": {k: set(members(v)) for k, v in index._aliases.items()},
        "linkers": {k: set(members(v)) for k, v in index._linkers.items()},
        "titles": dict(index._titles),
        "suggester": dict(index.suggester._processed),
        "folders": dict(index._folders),
        "notes": sorted(index.notes),
        "attachments": sorted(index.attachments),
        "skipped": sorted(index.skipped),
    }


def _note(i: int, title: str, alias: str, links: list[str]) -> str:
    body = " ".join(f"[[{t}]]" for t in links)
    return f"---\naliases: [{alias}]\n---\n# {title}\n\nnote {i} {body}\n"


def _write(root: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


note_specs = st.lists(
    st.tuples(
        st.sampled_from(NAMES),
        st.sampled_from(["T1", "T2", "Shared"]),
        st.sampled_from(["al", "Al", "other"]),
        st.lists(st.sampled_from([*NAMES, "Missing", "a/dup.md"]), max_size=4),
    ),
    min_size=1,
    max_size=12,
    unique_by=lambda spec: spec[0],
)


@settings(max_examples=25, deadline=None)
@given(before=note_specs, edits=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(["edit", "delete", "skip"])), max_size=4))
def test_warm_maps_equal_a_full_parse(
    tmp_path_factory: Any, before: list[tuple[str, str, str, list[str]]], edits: list[tuple[int, str]]
) -> None:
    folder = tmp_path_factory.mktemp("warm")
    root = folder / "vault"
    root.mkdir()
    notes = {f"{name}.md": _note(i, title, alias, links) for i, (name, title, alias, links) in enumerate(before)}
    _write(root, notes)
    (root / "pic.png").write_bytes(b"\x89PNG")
    cache = IndexCache.open(folder / "index.sqlite")
    try:
        VaultIndex(root, cache).build()
        paths = sorted(notes)
        for k, what in edits:
            path = paths[k % len(paths)]
            if not (root / path).exists():
                continue
            if what == "edit":
                (root / path).write_text(_note(99, "Edited", "new alias", ["Gamma", "beta"]) + "more\n")
            elif what == "delete":
                (root / path).unlink()
            else:
                (root / path).write_bytes(b"\xff\xfe not utf-8 \x00")
        (root / "Added.md").write_text(_note(100, "Added", "al", ["Alpha"]))
        seen: dict[str, Any] = {}
        warm = VaultIndex(root, cache)

        def table_whole() -> None:
            seen["table"] = sorted(warm.notes)
            seen["resolved"] = len(warm.resolver)

        tally = BuildTally()
        warm.build(tally, table_whole)
        full = VaultIndex(root, None)
        full.build()
        assert seen["table"] == sorted(full.notes), "the table was whole when the build said so"
        # only the notes parsed again (and the attachment) were in the maps then
        assert seen["resolved"] == len(full.notes) - tally.reused + len(full.attachments)
        assert tally.reused + (tally.total or 0) >= len(full.notes)
        assert _maps(warm) == _maps(full)
        assert {p: warm.notes[p] for p in warm.notes} == {p: full.notes[p] for p in full.notes}
    finally:
        cache.close()
