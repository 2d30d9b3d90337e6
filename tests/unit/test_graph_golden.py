"""The graph and lint agree with the generator's ground truth on a generated vault.

``gen_vault.py`` records, for every link of every note, what it resolves to under Obsidian's rules
(a note, nothing, or several candidates). That is the true link graph: the snapshot's edges must be
it exactly, lint's dead (L01) and ambiguous (L02) findings must be its dead and ambiguous links,
each neighbourhood must be its neighbours, and the communities must partition its notes.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from protocol.methods.common import Channel
from protocol.methods.graph import Direction
from protocol.methods.vaults import VaultEntry
from tests.support.corpus import generator
from vaultd.graph import communities
from vaultd.graph.snapshot import LinkSnapshot, snapshot
from vaultd.graph.walks import Edges, neighbourhood
from vaultd.lint.engine import run
from vaultd.lint.gather import gather
from vaultd.policy.visibility import Visibility
from vaultd.vault.index import VaultIndex

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    subprocess.run(
        [sys.executable, str(generator()), str(out), "--notes", "1500", "--seed", "7"], check=True, capture_output=True, timeout=90
    )
    return out


@pytest.fixture(scope="module")
def manifest(corpus: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def index(corpus: Path) -> VaultIndex:
    idx = VaultIndex(corpus, None)
    idx.build()
    return idx


@pytest.fixture(scope="module")
def snap(index: VaultIndex) -> LinkSnapshot:
    return snapshot(index, ("up", "parent"), frozenset({"queries.txt", "manifest.jsonl"}))


def true_edges(manifest: list[dict[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for note in manifest:
        for link in note["links"]:
            if link["resolved"] is not None and link["resolved"] != note["path"]:
                out.setdefault(note["path"], set()).add(link["resolved"])
    return out


def test_the_snapshot_is_the_true_graph(manifest: list[dict[str, Any]], snap: LinkSnapshot) -> None:
    assert sorted(snap.notes) == sorted(n["path"] for n in manifest)
    got = {s: set(targets) for s, targets in snap.out.items()}
    assert got == true_edges(manifest)
    into: dict[str, set[str]] = {}
    for source, targets in got.items():
        for target in targets:
            into.setdefault(target, set()).add(source)
    assert {t: set(s) for t, s in snap.into.items()} == into


def test_dead_and_ambiguous_findings_are_the_true_ones(manifest: list[dict[str, Any]], index: VaultIndex, corpus: Path) -> None:
    entry = VaultEntry(id="gen", path=str(corpus))
    inp = gather(index, entry, Visibility.of(entry, Channel.CLI), dt.date(2026, 1, 1))
    found = run(inp)
    dead: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    for note in manifest:
        for link in note["links"]:
            if link.get("candidates"):
                ambiguous[note["path"]] += 1
            elif link["resolved"] is None:
                dead[note["path"]] += 1
    assert Counter(f.note for f in found if f.code == "L01") == dead
    assert Counter(f.note for f in found if f.code == "L02") == ambiguous
    aliases = sum(1 for n in manifest for lk in n["links"] if lk["by"] == "alias-unresolved")
    assert aliases > 0 and sum(1 for f in found if f.code == "L01" and "alias" in f.message) <= aliases
    assert all(f.fix is None for f in found)  # no text at hand: findings describe, lint.fix fixes


def test_neighbourhoods_are_the_true_neighbours(manifest: list[dict[str, Any]], snap: LinkSnapshot) -> None:
    out = true_edges(manifest)
    into: dict[str, set[str]] = {}
    for source, targets in out.items():
        for target in targets:
            into.setdefault(target, set()).add(source)
    edges = Edges(snap, None, lambda _p: None)
    for note in manifest[::25]:
        path = note["path"]
        near = {r.path for r in neighbourhood(edges, path, 1, Direction.BOTH)}
        assert near == out.get(path, set()) | into.get(path, set())
        two = {r.path for r in neighbourhood(edges, path, 2, Direction.OUT)}
        assert two == (out.get(path, set()) | {t for n in out.get(path, set()) for t in out.get(n, set())}) - {path}


def test_communities_partition_the_notes_and_repeat(snap: LinkSnapshot) -> None:
    first = communities.partition(snap)
    members = [p for c in first.communities for p in c]
    assert sorted(members) == sorted(snap.notes)
    assert communities.partition(snap) == first
    assert first.modularity > 0.2 and len(first.communities) > 1
    sizes = [len(c) for c in first.communities]
    assert sizes == sorted(sizes, reverse=True)
