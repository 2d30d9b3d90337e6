"""Obsidian's Excluded files (``userIgnoreFilters``): indexed, so links to them resolve, but left out
of search, listing and passage results unless asked for, as Obsidian's search leaves them out; a change to
the setting counts at the next call. Through the real vaultctl and vaultctl's socket client."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from protocol.methods.reads import LIST, SEARCH, ListParams, SearchParams
from protocol.methods.retrieve import RETRIEVE, RetrieveParams

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient

NOTES = {
    "Apple.md": "# Apple\n\nOrchard notes about apples. See [[Old Apple]].\n",
    "Archive/Old Apple.md": "# Old Apple\n\nOrchard notes from last year.\n",
    "drafts/Apple idea.draft.md": "# Apple idea\n\nOrchard draft.\n",
}


def _vault(home: Home, cli: Any, filters: list[str]) -> Path:
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".obsidian").mkdir()
    (root / ".obsidian/app.json").write_text(json.dumps({"userIgnoreFilters": filters}))
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    return root


def test_search_and_list_leave_excluded_files_out_unless_asked(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli, ["Archive/", "/\\.draft\\.md$/"])
    hits = typed.call(SEARCH, SearchParams(vault="v", query="orchard", fresh=True))
    assert [h.path for h in hits.hits] == ["Apple.md"]
    every = typed.call(SEARCH, SearchParams(vault="v", query="orchard", include_excluded=True))
    assert {h.path for h in every.hits} == set(NOTES)
    listed = typed.call(LIST, ListParams(vault="v"))
    assert ([n.path for n in listed.notes], listed.total) == (["Apple.md"], 1)
    assert typed.call(LIST, ListParams(vault="v", include_excluded=True)).total == 3
    shown = cli("search", "orchard", "--json")
    assert [h["path"] for h in shown.json()["hits"]] == ["Apple.md"]
    assert cli("list", "--include-excluded", "--json").json()["total"] == 3
    links = cli("links", "Apple", "--json")
    assert links.code == 0 and "Archive/Old Apple.md" in links.out  # still indexed: the link resolves
    passages = typed.call(RETRIEVE, RetrieveParams(vault="v", query="orchard notes", rerank=False, fresh=True))
    assert {p.path for p in passages.passages} == {"Apple.md"}
    every_passage = typed.call(RETRIEVE, RetrieveParams(vault="v", query="orchard notes", rerank=False, include_excluded=True))
    assert {p.path for p in every_passage.passages} == set(NOTES)
    (root / ".obsidian/app.json").write_text(json.dumps({"userIgnoreFilters": []}))
    assert typed.call(LIST, ListParams(vault="v")).total == 3
