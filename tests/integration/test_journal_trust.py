"""A vault that arrives with its own ``.vaultd/journal`` (an unzip, a sync tool, a copied disk):
recovery, undo and op.list act only on journals this daemon sealed, whose paths are plain
vault-relative paths and whose originals are files of the journal. Anything else is reported by
status and doctor and left exactly as found; nothing inside or outside the vault changes."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Empty
from protocol.methods.reads import SEARCH, SearchParams
from protocol.methods.receipts import Applied
from protocol.methods.service import DAEMON_STATUS, DOCTOR, DoctorParams, DoctorResult, Level
from protocol.methods.vaults import VAULT_ADD, VaultAddParams, VaultHealth, VaultState
from protocol.methods.writes import APPEND, OP_LIST, PATCH, UNDO, AppendParams, OpListParams, PatchParams, UndoParams
from tests.support.harness import Daemon, Home, copy_sample_vault, snapshot
from tests.support.typed import TypedClient, TypedClients, refused

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

OP = "20261203T120000.000000-0123abcd"
PLAN = "projects/alpha/Alpha Plan.md"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tree(folder: Path) -> dict[str, Any]:
    """Every entry below ``folder`` (symlinks as their target, files as bytes), without following symlinks."""
    out: dict[str, Any] = {}
    if not os.path.lexists(folder):
        return out
    if folder.is_symlink():
        return {".": ("link", os.readlink(folder))}
    if folder.is_file():
        return {".": folder.read_bytes()}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            out[rel] = ("link", os.readlink(p)) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return out


def _manifest(op_id: str, entries: list[dict[str, Any]]) -> bytes:
    return json.dumps({"op_id": op_id, "op": "note.patch", "created": 1.0, "channel": "cli", "summary": "x", "entries": entries}).encode()


def _plant(folder: Path, manifest: bytes, files: dict[str, bytes], mac: bytes | None) -> None:
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_bytes(manifest)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    if mac is not None:
        (folder / "manifest.mac").write_bytes(mac)


def _seal(home: Home, manifest: bytes) -> bytes:
    """The seal the daemon of ``home`` would give: its key is readable by the same user."""
    key = (home.home / "journal.key").read_bytes()
    return hmac.new(key, manifest, hashlib.sha256).hexdigest().encode()


class Scene:
    """A vault copy, a folder beside it standing for the rest of the disk, and what to compare."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.vault = copy_sample_vault(home.root / "vault")
        self.outside = home.root / "outside"
        self.outside.mkdir()
        (self.outside / "x.md").write_bytes(b"# a file outside the vault\n")
        (self.outside / "secret.txt").write_bytes(b"not for the vault\n")
        self.state_dir = self.vault / ".vaultd"
        self.planted: Path = self.state_dir / "journal"

    def freeze(self) -> None:
        self.notes, self.out_tree, self.planted_tree = snapshot(self.vault), _tree(self.outside), _tree(self.planted)

    def assert_untouched(self) -> None:
        assert _tree(self.outside) == self.out_tree, "something outside the vault changed"
        assert snapshot(self.vault) == self.notes, "a note in the vault changed"
        assert not (self.vault / "stolen.md").exists()
        assert _tree(self.planted) == self.planted_tree, "the foreign journal was changed or deleted"


def _forged_absolute(s: Scene) -> None:
    """Rolling back would overwrite a file outside the vault, named by an absolute path."""
    _plant(
        s.planted / OP,
        _manifest(
            OP,
            [
                {
                    "path": str(s.outside / "x.md"),
                    "before_sha": _sha(b"evil"),
                    "after_sha": _sha((s.outside / "x.md").read_bytes()),
                    "original": "orig-0",
                }
            ],
        ),
        {"orig-0": b"evil"},
        None,
    )


def _forged_new_file_outside(s: Scene) -> None:
    """... or create one (a '/tmp/x' the vault's owner never asked for)."""
    _plant(
        s.planted / OP,
        _manifest(OP, [{"path": str(s.outside / "new"), "before_sha": _sha(b"evil"), "after_sha": None, "original": "orig-0"}]),
        {"orig-0": b"evil"},
        None,
    )


def _forged_dotdot(s: Scene) -> None:
    _plant(
        s.planted / OP,
        _manifest(
            OP,
            [
                {
                    "path": "../outside/x.md",
                    "before_sha": _sha(b"evil"),
                    "after_sha": _sha((s.outside / "x.md").read_bytes()),
                    "original": "orig-0",
                }
            ],
        ),
        {"orig-0": b"evil"},
        None,
    )


def _forged_absolute_original(s: Scene) -> None:
    """Rolling back would copy any readable file into the vault."""
    secret = (s.outside / "secret.txt").read_bytes()
    _plant(
        s.planted / OP,
        _manifest(OP, [{"path": "stolen.md", "before_sha": _sha(secret), "after_sha": None, "original": str(s.outside / "secret.txt")}]),
        {},
        None,
    )


def _valid_looking(mac: bytes | None) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        current = (s.vault / PLAN).read_bytes()
        _plant(
            s.planted / OP,
            _manifest(OP, [{"path": PLAN, "before_sha": _sha(b"planted\n"), "after_sha": _sha(current), "original": "orig-0"}]),
            {"orig-0": b"planted\n"},
            mac,
        )

    return plant


def _foreign_tmp(s: Scene) -> None:
    """A half-built journal of some other daemon: not ours to delete."""
    (s.planted / f"{OP}.tmp").mkdir(parents=True)
    (s.planted / f"{OP}.tmp" / "orig-0").write_bytes(b"someone's bytes")


def _foreign_dead(s: Scene) -> None:
    """Named like a journal being pruned, but not tagged with this daemon's key."""
    (s.planted / f"{OP}.{'0' * 32}.dead").mkdir(parents=True)
    (s.planted / f"{OP}.{'0' * 32}.dead" / "orig-0").write_bytes(b"someone's bytes")


def _symlinked_journal_folder(s: Scene) -> None:
    target = s.outside / "j"
    _forged_dotdot_into(target)
    s.planted.mkdir(parents=True)
    (s.planted / OP).symlink_to(target / OP)


def _forged_dotdot_into(root: Path) -> None:
    _plant(
        root / OP,
        _manifest(OP, [{"path": "../outside/x.md", "before_sha": _sha(b"evil"), "after_sha": None, "original": "orig-0"}]),
        {"orig-0": b"evil"},
        None,
    )


def _symlinked_journal_root(s: Scene) -> None:
    _forged_dotdot_into(s.outside / "j")
    s.state_dir.mkdir()
    s.planted.symlink_to(s.outside / "j")


FOREIGN_JOURNALS = {
    "absolute-path": _forged_absolute,
    "absolute-path-new-file": _forged_new_file_outside,
    "dotdot-path": _forged_dotdot,
    "absolute-original": _forged_absolute_original,
    "no-mac": _valid_looking(None),
    "wrong-mac": _valid_looking(b"0" * 64),
    "foreign-tmp": _foreign_tmp,
    "foreign-dead": _foreign_dead,
    "symlinked-journal-folder": _symlinked_journal_folder,
    "symlinked-journal-root": _symlinked_journal_root,
}


def _status_and_doctor(c: TypedClient) -> tuple[VaultHealth, DoctorResult]:
    """What ``vaultctl status --json`` and ``doctor --json`` print, asked on the open session."""
    return c.call(DAEMON_STATUS, Empty()).vaults[0], c.call(DOCTOR, DoctorParams())


def _add(c: TypedClient, vault: Path) -> None:
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))


@contextlib.contextmanager
def _started(home: Home, clients: TypedClients, s: Scene, start: str) -> Iterator[TypedClient]:
    """A daemon and a session on it; the vault registered first when ``start`` is 'vault add'."""
    d = Daemon(home)
    try:
        c = clients.open(home)
        if start == "vault add":
            _add(c, s.vault)
        yield c
    finally:
        d.stop()


@pytest.mark.parametrize("case", sorted(FOREIGN_JOURNALS))
def test_a_foreign_journal_is_reported_and_never_used(home: Home, typed_clients: TypedClients, case: str) -> None:
    s = Scene(home)
    FOREIGN_JOURNALS[case](s)
    s.freeze()
    for start in ("vault add", "restart"):
        with _started(home, typed_clients, s, start) as c:
            assert c.call(SEARCH, SearchParams(query="alpha", fresh=True)).hits, "the vault is still served"
            s.assert_untouched()
            assert c.call(OP_LIST, OpListParams()).ops == []
            vault, doctor = _status_and_doctor(c)
            assert vault.state is VaultState.READY
            assert "journal" in vault.message
            assert "doctor" in vault.message
            found = [f for f in doctor.findings if f.check == "journal:v"]
            assert found, doctor
            assert all(f.level is Level.WARN for f in found), doctor
            assert str(s.planted) in found[0].finding, found
            s.assert_untouched()
        s.assert_untouched()


def _symlinked_state_folder(s: Scene) -> None:
    _forged_dotdot_into(s.outside / "rt" / "journal")
    s.state_dir.symlink_to(s.outside / "rt")
    s.planted = s.state_dir


def _state_folder_file(s: Scene) -> None:
    s.state_dir.write_bytes(b"not a folder\n")
    s.planted = s.state_dir


@pytest.mark.parametrize("case", ["symlinked-.vaultd", ".vaultd-is-a-file"])
def test_a_state_folder_that_is_not_a_folder_of_ours_refuses_the_vault(home: Home, typed_clients: TypedClients, case: str) -> None:
    s = Scene(home)
    {"symlinked-.vaultd": _symlinked_state_folder, ".vaultd-is-a-file": _state_folder_file}[case](s)
    s.freeze()
    for start in ("vault add", "restart"):
        with _started(home, typed_clients, s, start) as c:
            s.assert_untouched()
            vault, doctor = _status_and_doctor(c)
            assert vault.state is VaultState.ERROR, vault
            assert ".vaultd" in vault.message, vault
            assert doctor.verdict is Level.FAIL
            assert any(f.check == "vault:v" and ".vaultd" in f.finding for f in doctor.findings)
            with refused(ErrorCode.UNAVAILABLE):
                c.call(APPEND, AppendParams(target="Ada Lovelace", section="S", markdown="- x"))
            s.assert_untouched()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
@pytest.mark.parametrize("owned_by_other", [".vaultd", ".vaultd/journal", "journal folder"])
def test_a_state_or_journal_folder_of_another_user_is_not_used(home: Home, typed_clients: TypedClients, owned_by_other: str) -> None:
    s = Scene(home)
    _valid_looking(None)(s)
    path = {".vaultd": s.state_dir, ".vaultd/journal": s.planted, "journal folder": s.planted / OP}[owned_by_other]
    os.chown(path, 65534, 65534)
    s.freeze()
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        _add(c, s.vault)
        vault, doctor = _status_and_doctor(c)
        assert "uid 65534" in msgspec.json.encode([vault, doctor]).decode(), (vault, doctor)
        s.assert_untouched()
    finally:
        d.stop()


# -- journals sealed with the daemon's own key still obey the path rules ---------------------


def _sealed_cases(s: Scene) -> dict[str, tuple[bytes, dict[str, bytes]]]:
    outside = (s.outside / "x.md").read_bytes()
    secret = (s.outside / "secret.txt").read_bytes()
    plan = (s.vault / PLAN).read_bytes()
    return {
        "absolute-path": (
            _manifest(
                OP, [{"path": str(s.outside / "x.md"), "before_sha": _sha(b"evil"), "after_sha": _sha(outside), "original": "orig-0"}]
            ),
            {"orig-0": b"evil"},
        ),
        "dotdot-path": (
            _manifest(
                OP, [{"path": "notes/../../outside/x.md", "before_sha": _sha(b"evil"), "after_sha": _sha(outside), "original": "orig-0"}]
            ),
            {"orig-0": b"evil"},
        ),
        "state-folder-path": (
            _manifest(OP, [{"path": ".vaultd/lock", "before_sha": _sha(b"evil"), "after_sha": None, "original": "orig-0"}]),
            {"orig-0": b"evil"},
        ),
        "absolute-original": (
            _manifest(
                OP, [{"path": "stolen.md", "before_sha": _sha(secret), "after_sha": None, "original": str(s.outside / "secret.txt")}]
            ),
            {},
        ),
        "dotdot-original": (
            _manifest(
                OP, [{"path": "stolen.md", "before_sha": _sha(secret), "after_sha": None, "original": "../../../outside/secret.txt"}]
            ),
            {},
        ),
        "original-not-matching-its-hash": (
            _manifest(OP, [{"path": PLAN, "before_sha": _sha(b"planted\n"), "after_sha": _sha(plan), "original": "orig-0"}]),
            {"orig-0": b"other bytes\n"},
        ),
        "manifest-of-another-op": (
            _manifest(
                "20261203T120000.000000-99999999",
                [{"path": PLAN, "before_sha": _sha(b"planted\n"), "after_sha": _sha(plan), "original": "orig-0"}],
            ),
            {"orig-0": b"planted\n"},
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "absolute-path",
        "dotdot-path",
        "state-folder-path",
        "absolute-original",
        "dotdot-original",
        "original-not-matching-its-hash",
        "manifest-of-another-op",
    ],
)
def test_a_sealed_journal_with_an_unsafe_entry_is_refused(home: Home, typed_clients: TypedClients, case: str) -> None:
    s = Scene(home)
    d = Daemon(home)
    try:
        _add(typed_clients.open(home), s.vault)
    finally:
        d.stop()
    manifest, files = _sealed_cases(s)[case]
    _plant(s.planted / OP, manifest, files, _seal(home, manifest))
    s.freeze()
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        assert c.call(SEARCH, SearchParams(query="alpha", fresh=True)).hits
        s.assert_untouched()
        vault, doctor = _status_and_doctor(c)
        assert "journal" in vault.message
        assert any(f.check == "journal:v" and OP in f.finding for f in doctor.findings), doctor
        s.assert_untouched()
    finally:
        d.stop()


# -- undo and op.list ------------------------------------------------------------------------


@pytest.mark.parametrize("mac", [None, b"0" * 64], ids=["no-mac", "wrong-mac"])
def test_a_committed_foreign_journal_is_neither_listed_nor_undone(home: Home, typed_clients: TypedClients, mac: bytes | None) -> None:
    s = Scene(home)
    _valid_looking(mac)(s)
    (s.planted / OP / "committed").write_bytes(b"")
    s.freeze()
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        _add(c, s.vault)
        assert c.call(OP_LIST, OpListParams()).ops == []
        with refused(ErrorCode.POLICY) as refusal:
            c.call(UNDO, UndoParams(op_id=OP))
        assert "not written by this daemon" in refusal.data.message
        s.assert_untouched()
    finally:
        d.stop()


@pytest.mark.parametrize("tamper", ["mac", "manifest", "original", "copied-from-another-home"])
def test_undo_refuses_a_journal_changed_since_this_daemon_wrote_it(home: Home, typed_clients: TypedClients, tamper: str) -> None:
    s = Scene(home)
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        _add(c, s.vault)
        receipt = c.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find"))
        assert isinstance(receipt, Applied)
        op_id = receipt.op_id
        folder = s.planted / op_id
        assert [o.op_id for o in c.call(OP_LIST, OpListParams()).ops] == [op_id]
    finally:
        d.stop()
    if tamper == "mac":
        (folder / "manifest.mac").write_bytes(b"f" * 64)
    elif tamper == "manifest":
        data = (folder / "manifest.json").read_bytes()
        (folder / "manifest.json").write_bytes(data.replace(b'"channel":"cli"', b'"channel":"mcp"'))
    elif tamper == "original":
        (folder / "orig-0").write_bytes(b"---\ntitle: replaced\n---\nbytes an attacker chose\n")
    else:
        (home.home / "journal.key").unlink()  # the vault now meets a daemon with another key
    s.freeze()
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        listed = [o.op_id for o in c.call(OP_LIST, OpListParams()).ops]
        with refused(ErrorCode.POLICY):
            c.call(UNDO, UndoParams(op_id=op_id))
        if tamper != "original":
            assert listed == []
        s.assert_untouched()
    finally:
        d.stop()


# -- the key ---------------------------------------------------------------------------------


def test_the_journal_key_is_private_created_once_and_never_logged(home: Home, typed_clients: TypedClients, sample_vault: Path) -> None:
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        _add(c, sample_vault)
        c.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find"))
    finally:
        d.stop()
    key_file = home.home / "journal.key"
    st = key_file.lstat()
    assert oct(st.st_mode & 0o777) == "0o600"
    assert st.st_size == 32
    key = key_file.read_bytes()
    d = Daemon(home)
    try:
        typed_clients.open(home).call(SEARCH, SearchParams(query="find", fresh=True))
    finally:
        d.stop()
    assert key_file.read_bytes() == key, "created once"
    assert key_file.lstat().st_ino == st.st_ino, "created once"
    logs = d.output().encode() + b"".join(p.read_bytes() for p in (home.home / "logs").rglob("*") if p.is_file())
    assert key not in logs
    assert key.hex().encode() not in logs


@pytest.mark.parametrize("bad", ["symlink", "readable-by-others", "short"])
def test_an_unusable_key_file_makes_the_vault_unavailable_and_is_never_followed(
    home: Home, typed_clients: TypedClients, sample_vault: Path, bad: str
) -> None:
    home.home.mkdir(parents=True)
    key_file = home.home / "journal.key"
    decoy = home.root / "decoy"
    if bad == "symlink":
        key_file.symlink_to(decoy)  # dangling: creating through it would write outside the home
    elif bad == "readable-by-others":
        key_file.write_bytes(b"k" * 32)
        key_file.chmod(0o644)
    else:
        key_file.write_bytes(b"k" * 5)
        key_file.chmod(0o600)
    before = snapshot(sample_vault)
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        with refused(ErrorCode.UNAVAILABLE) as adding:
            _add(c, sample_vault)
        assert "journal.key" in adding.data.message
        with refused(ErrorCode.UNAVAILABLE) as appending:
            c.call(APPEND, AppendParams(target="Ada Lovelace", section="S", markdown="- x"))
        assert "journal.key" in appending.data.message
        vault, _ = _status_and_doctor(c)
        assert vault.state is VaultState.ERROR
        assert "journal.key" in vault.message
    finally:
        d.stop()
    assert not decoy.exists()
    assert snapshot(sample_vault) == before
