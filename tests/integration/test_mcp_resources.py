"""Notes as MCP resources through the official SDK client, in both session models: listed in
pages across vaults, read as Markdown, one template; private notes neither listed nor read."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.agent import agent
from tests.support.harness import register
from vaultctl.mcp.resources import PAGE, TEMPLATE, parse_uri, uri_of

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

NOTES = PAGE + 30  #: more than one page in the first vault


@pytest.fixture
def vaults(daemon: Daemon, home: Home) -> tuple[Path, Path]:
    first, second = home.root / "one", home.root / "two"
    (first / "diary").mkdir(parents=True)
    for i in range(NOTES):
        (first / f"note {i:03d}.md").write_text(f"---\ntype: t\n---\n# Note {i}\n\nbody {i}\n")
    (first / "diary" / "Secret.md").write_text("# Secret\n")
    (first / "Big.md").write_text("# Big\n\n" + "x" * 50_000 + "\n")
    second.mkdir()
    (second / "Spaced name #1.md").write_text("# Spaced\n")
    register(home, first, "one", private_paths=["diary/**"])
    register(home, second, "two")
    return first, second


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_visible_note_is_listed_once_in_pages_and_reads_back(vaults: tuple[Path, Path], home: Home, mode: str) -> None:
    async with agent(home, mode=mode) as client:
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe is (mode == "legacy")  # 2026-07-28 has no resources/subscribe
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [TEMPLATE]
        uris: list[str] = []
        cursor = None
        pages = 0
        while True:
            page = await client.list_resources(cursor=cursor)
            pages += 1
            assert len(page.resources) <= PAGE
            uris += [str(r.uri) for r in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages >= 2 and len(uris) == len(set(uris)) == NOTES + 2
        assert uri_of("two", "Spaced name #1.md") in uris and not any("Secret" in u for u in uris)
        read = await client.read_resource(uri_of("one", "note 007.md"))
        [content] = read.contents
        assert content.text == "# Note 7\n\nbody 7\n" and content.mime_type == "text/markdown"  # type: ignore[union-attr]
        assert content.meta is not None and content.meta["frontmatter"] == {"type": "t"}
        spaced = (await client.read_resource(uri_of("two", "Spaced name #1.md"))).contents[0]
        assert spaced.text == "# Spaced\n"  # type: ignore[union-attr]


async def test_a_read_is_bounded_and_says_where_it_goes_on(vaults: tuple[Path, Path], home: Home) -> None:
    async with agent(home, env={"VAULTD_MCP_MAX_RESULT_BYTES": "8192"}) as client:
        [content] = (await client.read_resource(uri_of("one", "Big.md"))).contents
        assert len(content.text.encode()) <= 8192  # type: ignore[union-attr]
        assert content.meta is not None and content.meta["next_offset"] > 0 and content.meta["size"] > 50_000


@pytest.mark.parametrize("uri", [uri_of("one", "diary/Secret.md"), uri_of("one", "nothing here.md"), uri_of("nope", "x.md")])
async def test_a_private_or_missing_note_is_not_found(vaults: tuple[Path, Path], home: Home, uri: str) -> None:
    async with agent(home) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        assert caught.value.error.code == -32002, caught.value.error
        assert "Secret" not in caught.value.error.message


@pytest.mark.parametrize("uri", ["file:///etc/passwd", "vault://one", "vault:///x.md", "vault://one/x.md?q=1", "vault://one/x.md#h"])
def test_a_uri_that_is_not_a_note_is_refused(uri: str) -> None:
    with pytest.raises(Exception, match="not a vaultd resource"):
        parse_uri(uri)


def test_uris_round_trip_hostile_names() -> None:
    for path in ["a b/c#d?.md", "ümlaut/ñ.md", "%41.md", "x/../y.md"]:
        assert parse_uri(uri_of("v", path)) == ("v", path)
