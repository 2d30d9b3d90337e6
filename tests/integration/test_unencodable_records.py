"""A note whose record msgpack cannot hold (an integer past 64 bits in its frontmatter) is
indexed and searchable like any other, whether it is there when the vault is added or written
while the daemon watches, and it never stops the notes around it from being indexed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.support.wait import wait_until

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home

BIG = "---\nn: 123456789012345678901234567890\n---\n# {title}\n\n{word} body\n"


def _found(cli: Any, word: str) -> list[str]:
    done = cli("search", word, "--json")
    return sorted(h["path"] for h in done.json()["hits"]) if done.code == 0 else []


def test_a_note_with_an_integer_past_64_bits_is_indexed_at_build_and_on_change(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "vault"
    root.mkdir(parents=True, exist_ok=True)
    (root / "Big.md").write_text(BIG.format(title="Big", word="walrus"))
    for i in range(3):
        (root / f"Plain{i}.md").write_text(f"# Plain {i}\n\nplainword{i} links [[Big]]\n")
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    assert _found(cli, "walrus") == ["Big.md"]
    assert _found(cli, "plainword1") == ["Plain1.md"]
    read = cli("show", "Big", "--json")
    assert read.code == 0, read.err
    # Written while the daemon watches: the refresh's cache write stores the others too.
    (root / "Bigger.md").write_text(BIG.format(title="Bigger", word="narwhal").replace("n: 1", "n: -1"))
    (root / "After.md").write_text("# After\n\nbelugaword here\n")
    wait_until(lambda: _found(cli, "narwhal") == ["Bigger.md"], 60, "the second big note searchable")
    wait_until(lambda: _found(cli, "belugaword") == ["After.md"], 60, "the note written beside it searchable")
