"""Which registered vault holds a path: the one rule the commands, completion and canvases share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.vaults import VaultEntry, VaultHealth, VaultInfo, VaultState
from vaultctl.vault_choice import chosen, holding

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

SEGMENT = st.text(alphabet="abcxyz-. é", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))


def _info(vault_id: str, path: str) -> VaultInfo:
    return VaultInfo(entry=VaultEntry(id=vault_id, path=path), health=VaultHealth(id=vault_id, path=path, state=VaultState.READY))


def test_a_folder_holds_itself_and_what_is_below_it_only() -> None:
    listed = [_info("work", "/home/u/work"), _info("notes", "/home/u/notes")]
    assert holding(listed, "/home/u/work") == ("work", "")
    assert holding(listed, "/home/u/work/a/b.canvas") == ("work", "a/b.canvas")
    assert holding(listed, "/home/u/notes/x") == ("notes", "x")
    assert holding(listed, "/home/u/workshop/x") is None  # a longer name is another folder
    assert holding(listed, "/home/u") is None
    assert holding([_info("all", "/")], "/etc/x") == ("all", "etc/x")


@given(st.lists(SEGMENT, min_size=1, max_size=3), st.lists(SEGMENT, max_size=3), st.lists(SEGMENT, min_size=1, max_size=3))
def test_holding_is_the_folder_prefix_at_a_name_boundary(root: list[str], below: list[str], other: list[str]) -> None:
    base = "/" + "/".join(root)
    assert holding([_info("v", base)], "/".join([base, *below])) == ("v", "/".join(below))
    elsewhere = "/" + "/".join(other)
    expected = elsewhere == base or elsewhere.startswith(base + "/")
    assert (holding([_info("v", base)], elsewhere) is not None) == expected


def test_explicit_then_environment_then_the_working_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def never() -> list[VaultInfo]:
        raise AssertionError("the daemon was asked")

    monkeypatch.setenv("VAULTD_VAULT", "from-env")
    assert chosen("given", never) == "given"
    assert chosen(None, never) == "from-env"
    monkeypatch.delenv("VAULTD_VAULT")
    root = tmp_path.resolve() / "v"
    (root / "deep").mkdir(parents=True)
    monkeypatch.chdir(root / "deep")
    assert chosen(None, lambda: [_info("other", "/nowhere"), _info("here", str(root))]) == "here"
    monkeypatch.chdir(tmp_path)
    assert chosen(None, lambda: [_info("here", str(root))]) is None
