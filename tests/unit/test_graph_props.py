"""Properties of the graph functions on arbitrary link graphs: communities are a partition and do
not depend on the order links were found in; the canvas of any neighbourhood is valid JSON Canvas
1.0 with no two cards overlapping; the topic map's cycle finder agrees with a brute-force one; and
the daemon never imports igraph or leidenalg before a graph call needs them."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.methods.graph import Direction
from tests.support import jsoncanvas
from tests.support.harness import REPO
from vaultd.graph import communities, leiden_worker
from vaultd.graph.canvas import canvas_document
from vaultd.graph.snapshot import LinkSnapshot
from vaultd.graph.topics import cycles, reaches
from vaultd.graph.walks import Edges, neighbourhood
from vaultd.vault.model import NoteRecord

Pairs = list[tuple[int, int]]


def record(path: str) -> NoteRecord:
    return NoteRecord(
        path=path,
        size=0,
        mtime_ns=0,
        ino=0,
        sha256="",
        title=path.removesuffix(".md"),
        frontmatter=None,
        aliases=[],
        tags=[],
        headings=[],
        blocks=[],
        links=[],
        issues=[],
        words=0,
        body_offset=0,
    )


def graph(n: int, pairs: Pairs, order: list[int] | None = None) -> LinkSnapshot:
    """A snapshot of ``n`` notes linked by ``pairs``, its maps filled in ``order``."""
    paths = [f"n{i:03d}.md" for i in range(n)]
    snap = LinkSnapshot(notes={p: record(p) for p in paths}, answers={p: [] for p in paths})
    for k in order if order is not None else range(len(pairs)):
        a, b = pairs[k]
        if a != b:
            snap.out.setdefault(paths[a], {}).setdefault(paths[b], set()).add("link")
            snap.into.setdefault(paths[b], {}).setdefault(paths[a], set()).add("link")
    return snap


graphs = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=120))
)


@settings(max_examples=60, deadline=None)
@given(graphs, st.randoms(use_true_random=False))
def test_communities_are_a_partition_and_deterministic(g: tuple[int, Pairs], rnd: object) -> None:
    n, pairs = g
    order = list(range(len(pairs)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    first = communities.partition(graph(n, pairs))
    members = [p for c in first.communities for p in c]
    assert sorted(members) == sorted(graph(n, pairs).notes)
    assert len(members) == len(set(members))
    assert communities.partition(graph(n, pairs, order)) == first
    sizes = [len(c) for c in first.communities]
    assert sizes == sorted(sizes, reverse=True)
    linked = {p for a, b in pairs if a != b for p in (a, b)}
    assert sum(1 for c in first.communities if len(c) == 1) >= n - len(linked)


@settings(max_examples=60, deadline=None)
@given(graphs, st.integers(min_value=1, max_value=3), st.sampled_from(list(Direction)))
def test_every_canvas_is_valid_and_readable(g: tuple[int, Pairs], hops: int, direction: Direction) -> None:
    n, pairs = g
    snap = graph(n, pairs)
    edges = Edges(snap, None, lambda _p: None)
    center = "n000.md"
    reached = neighbourhood(edges, center, hops, direction)
    document = canvas_document(center, reached, edges)
    jsoncanvas.validate(document)
    assert jsoncanvas.overlapping(document) == []
    assert [node["file"] for node in document["nodes"]] == [center, *(r.path for r in reached)]
    assert canvas_document(center, reached, edges) == document


def test_the_schema_refuses_what_the_spec_does_not_allow() -> None:
    good = {"nodes": [{"id": "a", "type": "text", "text": "x", "x": 0, "y": 0, "width": 1, "height": 1}], "edges": []}
    jsoncanvas.validate(good)
    for bad in (
        {"nodes": [{"id": "a", "type": "text", "x": 0, "y": 0, "width": 1, "height": 1}]},  # text without text
        {"nodes": [{"id": "a", "type": "file", "file": "x.md", "x": 0.5, "y": 0, "width": 1, "height": 1}]},  # x not an integer
        {"nodes": [{**good["nodes"][0], "color": "7"}]},  # not a preset
        {"edges": [{"id": "e", "fromNode": "a", "toNode": "b", "toEnd": "circle"}]},
        {**good, "edges": [{"id": "e", "fromNode": "a", "toNode": "missing"}]},
    ):
        try:
            jsoncanvas.validate(bad)
        except Exception:  # noqa: BLE001 - jsonschema's error or the referential assert, either refuses it
            continue
        raise AssertionError(f"accepted {bad}")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 12), st.lists(st.integers(0, 12), max_size=3, unique=True), max_size=13))
def test_cycles_are_the_nodes_that_reach_themselves(raw: dict[int, list[int]]) -> None:
    parents = {f"t{k}": [f"t{v}" for v in vs] for k, vs in raw.items()}
    on_cycle = {p for comp in cycles(parents) for p in comp}

    def up(p: str) -> list[str]:
        return parents.get(p, [])

    brute = {p for p in parents if any(reaches(q, p, up) is not None for q in up(p))}
    assert on_cycle == brute
    for comp in cycles(parents):
        assert comp == sorted(comp)
        for a in comp:
            for b in comp:
                assert reaches(a, b, up) is not None


def test_the_daemon_starts_without_igraph_or_leidenalg() -> None:
    code = (
        "import sys, vaultd.daemon, vaultd.api\n"
        "vaultd.api.load_handlers()\n"
        "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in ('igraph', 'leidenalg')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert "HEAVY []" in out, out


def test_a_large_graph_is_partitioned_in_a_worker_exactly_as_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(7)
    n = leiden_worker.WORKER_MIN_NOTES + 200
    pairs = [(rnd.randrange(n), rnd.randrange(n)) for _ in range(3 * n)]
    snap = graph(n, pairs)
    started: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(args: list[str], **kw: Any) -> Any:
        started.append(args)
        return real_run(args, **kw)

    monkeypatch.setattr(subprocess, "run", counting_run)
    elsewhere = communities.partition(snap)
    assert [a[1:] for a in started] == [list(leiden_worker.WORKER_ARGS)], "a graph this large is solved in a worker"
    monkeypatch.setattr(communities, "WORKER_MIN_NOTES", n + 1)
    here = communities.partition(snap)
    assert len(started) == 1, "a graph under the bound is solved in this process"
    assert here == elsewhere
    assert sorted(p for c in here.communities for p in c) == sorted(snap.notes)


def test_a_worker_that_dies_is_a_clear_failure_not_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leiden_worker, "WORKER_ARGS", ("-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"))
    n = leiden_worker.WORKER_MIN_NOTES
    with pytest.raises(leiden_worker.WorkerFailed, match="status 3: boom"):
        communities.partition(graph(n, [(i, (i + 1) % n) for i in range(n)]))
    monkeypatch.setattr(leiden_worker, "WORKER_ARGS", ("-c", "import sys; sys.stdout.write('not msgpack')"))
    with pytest.raises(leiden_worker.WorkerFailed, match="unreadable"):
        communities.partition(graph(n, [(i, (i + 1) % n) for i in range(n)]))
