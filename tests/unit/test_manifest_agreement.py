"""The scanner and the resolver agree with the benchmark generator's ground truth.

``gen_vault.py`` writes 2,000 notes with every link form, case-only and NFC/NFD name collisions,
folder paths, dead links and bare ``[[alias]]`` links, and records in ``manifest.jsonl`` what each
link resolves to under Obsidian's rules. Every note is scanned and every link resolved here; the
expected agreement is total.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import generator
from vaultd.vault.link_targets import LinkResolver, Resolution, ResolutionStatus
from vaultd.vault.markdown import scan
from vaultd.vault.model import LinkKind


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    subprocess.run(
        [sys.executable, str(generator()), str(out), "--notes", "2000", "--seed", "1"],
        check=True,
        capture_output=True,
        timeout=90,
    )
    return out


def body_start(text: str) -> tuple[int, int]:
    end = text.find("\n---\n", 3) if text.startswith("---\n") else -1
    if end < 0:
        return 0, 1
    return end + 5, text.count("\n", 0, end + 5) + 1


def agrees(res: Resolution, want: dict[str, Any]) -> bool:
    if want.get("candidates"):
        return res.status is ResolutionStatus.AMBIGUOUS and res.candidates == want["candidates"]
    if want["resolved"] is None:
        return res.status is ResolutionStatus.MISSING
    return res.status is ResolutionStatus.RESOLVED and res.path == want["resolved"]


def test_scan_and_resolve_agree_with_the_manifest(corpus: Path) -> None:
    manifest = [json.loads(line) for line in (corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    files = [Path(root, name).relative_to(corpus).as_posix() for root, _, names in os.walk(corpus / "notes") for name in names]
    resolver = LinkResolver(files)
    assert len(resolver) == len(manifest) == 2000

    failures: Counter[str] = Counter()
    examples: list[str] = []
    by_kind: Counter[str] = Counter()

    def fail(kind: str, detail: str) -> None:
        failures[kind] += 1
        if len(examples) < 10:
            examples.append(f"{kind}: {detail}")

    for note in manifest:
        path = note["path"]
        text = (corpus / path).read_text(encoding="utf-8")
        result = scan(text, *body_start(text))

        h1 = [h.text for h in result.headings if h.level == 1]
        h2 = [h.text for h in result.headings if h.level == 2]
        extra = [name for name in ("Related", "Index") if f"\n## {name}\n" in text]
        if h1 != [note["title"]] or h2 != note["headings"] + extra:
            fail("headings", f"{path}: {h1} {h2}")
        if sorted(b.id for b in result.blocks) != sorted(note["block_ids"]):
            fail("blocks", f"{path}: {result.blocks}")
        if [t.name for t in result.tags] != note["inline_tags"]:
            fail("tags", f"{path}: {result.tags}")

        # The manifest lists links in the order they were generated, not their order in the text.
        got = sorted(result.links, key=lambda k: (text[k.start : k.end], k.start))
        want = sorted(note["links"], key=lambda w: w["raw"])
        seen = [(text[k.start : k.end], k.target, k.kind is LinkKind.EMBED, f"#{k.anchor}" if k.anchor else None) for k in got]
        if seen != [(w["raw"], w["target"], w["embed"], w["sub"]) for w in want]:
            fail("links", f"{path}: {seen} != {[w['raw'] for w in want]}")
            continue
        for link, w in zip(got, want):
            by_kind[w["by"]] += 1
            res = resolver.resolve(link.target, path)
            if not agrees(res, w):
                fail("resolution", f"{path}: {w['raw']} -> {res} (manifest: {w})")

    assert not failures, f"{dict(failures)}\n" + "\n".join(examples)
    # The corpus exercises every way a link is written.
    assert {"stem", "path", "case", "dead", "ambiguous", "alias-unresolved"} <= set(by_kind), by_kind
