"""Write paths through a real daemon and the real CLI: deny globs in any case or Unicode form,
paths spelled as the disk spells them, and secrets in a path refused before anything is written."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

import pytest

from protocol.methods.reads import LIST, ListParams
from protocol.methods.vaults import VAULT_ADD, Kind, VaultAddParams
from protocol.methods.writes import CREATE, CreateParams
from tests.support.harness import Daemon, Home, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient

GITHUB = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
AWS = "AKIA" + "Z7Q3EXAMPLEKEY2X"


@pytest.fixture
def vault(daemon: Daemon, typed: TypedClient, home: Home) -> Path:
    root = home.root / "vault"
    for rel, text in {
        "private/diary.md": "# Diary\n",
        "inbox/first.md": "# First\n",
        "Café/menu.md": "# Menu\n",
        "note.md": "# Note\n",
        "résumé.md": "# Résumé\n",
        "keep.md": "# Keep\n\nKept text.\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), deny_paths=["private/**"]))
    return root


def _listed(cli: Any) -> list[str]:
    result = cli("list", "--limit", "500", "--json")
    assert result.code == 0, result.err
    return [n["path"] for n in result.json()["notes"]]


def _tree(root: Path) -> set[str]:
    """Every name on disk below the vault, folders included, as the disk spells it."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if ".vaultd" not in p.parts}


# -- deny globs match every spelling ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["PRIVATE/leak", "Private/Leak.md", "pRiVaTe/deep/leak", unicodedata.normalize("NFD", "Private/lé.md")])
def test_a_denied_folder_is_denied_in_any_case_or_form(vault: Path, cli: Any, path: str) -> None:
    before = snapshot(vault)
    result = cli("new", path, "--json")
    assert result.code == 1, result.out
    assert "P02" in result.err
    assert snapshot(vault) == before
    assert not {p for p in _tree(vault) if p.lower().startswith("private/") and p != "private/diary.md"}


# -- written paths take the disk's spelling --------------------------------------------------------


def test_a_create_goes_into_the_folder_already_on_disk(vault: Path, cli: Any) -> None:
    made = cli("new", "Inbox/new", "--json")
    assert made.code == 0, made.err
    assert [c["path"] for c in made.json()["changes"]] == ["inbox/new.md"]
    assert (vault / "inbox" / "new.md").is_file()
    assert "Inbox" not in {p.split("/")[0] for p in _tree(vault)}
    listed = _listed(cli)
    assert "inbox/new.md" in listed and "Inbox/new.md" not in listed
    assert set(listed) - {"log.md"} <= _tree(vault), "the index lists only names the disk has"


def test_an_nfd_folder_name_resolves_to_the_nfc_folder_on_disk(vault: Path, typed: TypedClient, cli: Any) -> None:
    nfd = unicodedata.normalize("NFD", "Café/dessert")
    made = typed.call(CREATE, CreateParams(path=nfd))
    assert [c.path for c in made.changes] == ["Café/dessert.md"]
    assert {p for p in _tree(vault) if p.startswith(("Caf", "caf"))} == {"Café", "Café/menu.md", "Café/dessert.md"}
    assert "Café/dessert.md" in _listed(cli)


def test_a_move_into_a_folder_spelled_otherwise_goes_into_the_one_on_disk(vault: Path, cli: Any) -> None:
    preview = cli("move", "keep", "INBOX/kept", "--json")
    assert preview.code == 0, preview.err
    fp = preview.json()["fingerprint"]
    done = cli("move", "keep", "INBOX/kept", "--confirm", "--fingerprint", fp, "--json")
    assert done.code == 0, done.err
    assert (vault / "inbox" / "kept.md").is_file() and not (vault / "INBOX").exists()
    assert "inbox/kept.md" in _listed(cli)


@pytest.mark.parametrize(
    ("path", "existing"),
    [
        ("Note", "note.md"),
        ("NOTE.md", "note.md"),
        (unicodedata.normalize("NFD", "résumé"), "résumé.md"),
        (unicodedata.normalize("NFD", "RÉSUMÉ"), "résumé.md"),
    ],
)
def test_a_name_differing_only_by_case_or_form_already_exists(vault: Path, cli: Any, path: str, existing: str) -> None:
    """One rule on every filesystem: the same name is the same note, so a create is refused (V08)
    rather than becoming the same file (case-insensitive disks) or a twin (case-sensitive ones)."""
    before = snapshot(vault)
    result = cli("new", path, "--json")
    assert result.code == 1 and "V08" in result.err and existing in result.err, result.err
    assert snapshot(vault) == before
    listed = _listed(cli)
    assert existing in listed and not [p for p in listed if p != existing and p.casefold() == existing.casefold()]


def test_a_move_onto_a_case_twin_of_another_note_already_exists(vault: Path, cli: Any) -> None:
    before = snapshot(vault)
    result = cli("move", "keep", "NOTE", "--json")
    assert result.code == 1 and "V08" in result.err, result.err
    assert snapshot(vault) == before


# -- secrets in paths ------------------------------------------------------------------------------


def _assert_nowhere(secret: str, home: Home, vault: Path, *texts: str) -> None:
    for text in texts:
        assert secret not in text
    assert not [p for p in vault.rglob("*") if secret in p.as_posix()], "no file name holds it"
    for folder in (vault / ".vaultd", home.home):
        for p in folder.rglob("*"):
            if p.is_file() and not p.name.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm", ".db")):
                assert secret.encode() not in p.read_bytes(), f"{p} holds the secret"
    assert secret not in (home.root / "daemon.out").read_text(errors="replace")


@pytest.mark.parametrize("secret", [GITHUB, AWS])
@pytest.mark.parametrize("shape", ["{s}", "keys/{s}/note", "notes/token {s} copy"])
def test_create_with_a_secret_in_the_path_is_refused(vault: Path, home: Home, cli: Any, secret: str, shape: str) -> None:
    before = snapshot(vault)
    result = cli("new", shape.format(s=secret), "--json")
    assert result.code == 1, result.out
    assert "V06" in result.err
    assert snapshot(vault) == before
    _assert_nowhere(secret, home, vault, result.out, result.err)


#: A caller's own log event: the path then never reaches the log line, whose screening is no guard.
OWN_LOG = '{"type": "ROUTE", "source": "test", "note": "filed"}'


@pytest.mark.parametrize("secret", [GITHUB, AWS])
@pytest.mark.parametrize("shape", ["{s}", "keys/{s}/note"])
def test_create_with_its_own_log_event_is_screened_too(vault: Path, home: Home, cli: Any, secret: str, shape: str) -> None:
    before = snapshot(vault)
    result = cli("new", shape.format(s=secret), "--log", OWN_LOG, "--json")
    assert result.code == 1 and "V06" in result.err, (result.out, result.err)
    assert snapshot(vault) == before
    _assert_nowhere(secret, home, vault, result.out, result.err)


@pytest.mark.parametrize("secret", [GITHUB, AWS])
@pytest.mark.parametrize("log", [None, OWN_LOG])
def test_move_to_a_path_with_a_secret_is_refused_at_the_preview(vault: Path, home: Home, cli: Any, secret: str, log: str | None) -> None:
    before = snapshot(vault)
    result = cli("move", "keep", f"archive/{secret}", *(["--log", log] if log else []), "--json")
    assert result.code == 1 and "V06" in result.err, (result.out, result.err)
    assert snapshot(vault) == before
    _assert_nowhere(secret, home, vault, result.out, result.err)


def test_the_raw_error_names_the_rule_and_not_the_secret(vault: Path, raw: RawClient) -> None:
    """The error frame as sent, every byte of it: the raw client on purpose."""
    reply = raw.request("note.create", {"path": f"x/{GITHUB}", "body": "# x\n"})
    data = reply["error"]["data"]
    assert data["code"] == "VALIDATION" and [i["code"] for i in data["issues"]] == ["V06"]
    assert "github-token" in data["message"] and GITHUB not in str(reply)
    assert "path" not in data["issues"][0]


@pytest.mark.parametrize("secret", [GITHUB, AWS])
def test_merge_of_a_note_whose_name_holds_a_secret_is_refused(vault: Path, home: Home, typed: TypedClient, cli: Any, secret: str) -> None:
    """A note someone saved on disk under a token's name cannot be folded into another note: its
    name would be copied into keep's text ('Merged from [[...]]')."""
    (vault / f"{secret}.md").write_text("# Leaked\n\nSome text.\n")
    typed.call(LIST, ListParams(fresh=True))
    before = snapshot(vault)
    result = cli("merge", "keep", f"{secret}.md", "--json")
    assert result.code == 1 and "V06" in result.err, (result.out, result.err)
    assert snapshot(vault) == before
    assert secret not in result.err.replace(f"{secret}.md", "")  # only the name the caller typed
    assert not (vault / ".vaultd" / "journal").exists() or not any(
        secret.encode() in p.read_bytes() for p in (vault / ".vaultd" / "journal").rglob("*") if p.is_file()
    )


def test_org_vaults_screen_paths_for_pii(daemon: Daemon, typed: TypedClient, home: Home, cli: Any) -> None:
    root = home.root / "org"
    root.mkdir()
    typed.call(VAULT_ADD, VaultAddParams(id="org", path=str(root), kind=Kind.ORG))
    result = cli("new", "people/ada.lovelace@example.org", "--vault", "org", "--json")
    assert result.code == 1 and "V07" in result.err, result.err
    assert "ada.lovelace@" not in result.err
    assert not any(root.rglob("*.md"))
