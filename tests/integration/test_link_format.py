"""Every link an operation writes anew follows the vault's Obsidian link format (``.obsidian/app.json``:
``useMarkdownLinks``, ``newLinkFormat``), read live: link, supersede, merge, through the real vaultctl
and vaultctl's socket client. A frontmatter link stays a wiki-link (Obsidian's properties know no
other) with its path in the vault's format."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from protocol.methods.receipts import Applied
from protocol.methods.writes import LINK, SUPERSEDE, LinkParams, SupersedeParams

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClient

NOTES = {
    "notes/Alpha.md": "# Alpha\n\nFirst.\n",
    "notes/deep/Beta Note.md": "# Beta Note\n\nSecond.\n",
    "other/Gamma.md": "# Gamma\n\nThird.\n",
}


def _vault(home: Home, cli: Any, app: dict[str, Any] | None) -> Path:
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if app is not None:
        (root / ".obsidian").mkdir()
        (root / ".obsidian/app.json").write_text(json.dumps(app))
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    return root


def test_link_writes_a_markdown_link_when_the_vault_uses_them(home: Home, daemon: Any, cli: Any) -> None:
    root = _vault(home, cli, {"useMarkdownLinks": True, "newLinkFormat": "shortest"})
    done = cli("link", "Alpha", "Beta Note", "--relation", "supports", "--json")
    assert done.code == 0, done.err
    alpha = (root / "notes/Alpha.md").read_text()
    beta = (root / "notes/deep/Beta Note.md").read_text()
    assert "- [Beta Note](Beta%20Note.md) — supports" in alpha
    assert "[[" not in alpha and "[[" not in beta
    assert "- [Alpha](Alpha.md)" in beta


def test_link_follows_relative_and_absolute_paths_and_a_changed_setting_without_restart(home: Home, daemon: Any, cli: Any) -> None:
    root = _vault(home, cli, {"useMarkdownLinks": True, "newLinkFormat": "relative"})
    assert cli("link", "Alpha", "Beta Note", "--one-way").code == 0
    assert "- [Beta Note](./deep/Beta%20Note.md)" in (root / "notes/Alpha.md").read_text()
    (root / ".obsidian/app.json").write_text(json.dumps({"useMarkdownLinks": False, "newLinkFormat": "absolute"}))
    assert cli("link", "Gamma", "Beta Note", "--one-way").code == 0
    assert "- [[notes/deep/Beta Note]]" in (root / "other/Gamma.md").read_text()


def test_supersede_follows_the_link_format_in_the_body_and_keeps_a_wiki_link_in_the_property(
    home: Home, daemon: Any, cli: Any, typed: TypedClient
) -> None:
    root = _vault(home, cli, {"useMarkdownLinks": True, "newLinkFormat": "absolute"})
    receipt = typed.call(SUPERSEDE, SupersedeParams(vault="v", old="Alpha", new="Gamma"))
    assert isinstance(receipt, Applied)
    gamma = (root / "other/Gamma.md").read_text()
    alpha = (root / "notes/Alpha.md").read_text()
    assert "- [Alpha](notes/Alpha.md) — supersedes" in gamma
    assert 'superseded_by: "[[other/Gamma]]"' in alpha


def test_without_settings_links_stay_shortest_wiki_links(home: Home, daemon: Any, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli, None)
    receipt = typed.call(LINK, LinkParams(vault="v", source="Alpha", target="Gamma", bidirectional=False))
    assert isinstance(receipt, Applied)
    assert "- [[Gamma]]" in (root / "notes/Alpha.md").read_text()
