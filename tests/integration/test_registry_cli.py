"""vault add/list/remove through the real vaultctl, and every refusal leaving config and vault as they were."""

from __future__ import annotations

import fcntl
import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Empty
from protocol.methods.reads import LIST, ListParams
from protocol.methods.service import DAEMON_STATUS, DOCTOR, DoctorParams, Level
from protocol.methods.vaults import VAULT_ADD, VaultAddParams, VaultState
from tests.support.harness import Daemon, snapshot
from tests.support.typed import TypedClient, TypedClients, refused
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path


def _config(daemon: Daemon) -> Path:
    return daemon.home.home / "config.json"


def test_add_list_remove_text_and_json(daemon: Daemon, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    before = snapshot(vault)
    added = cli("vault", "add", "work", str(vault), "--kind", "org", "--write", "cli", "--json")
    assert added.code == 0, added.err
    info = added.json()
    assert info["entry"] == {
        "id": "work",
        "path": str(vault.resolve()),
        "kind": "org",
        "write": "cli",
        "schema": "open",
        "pii": None,
        "deny_paths": [],
        "private_paths": [],
        "log_path": None,
        "stamp_keys": ["updated"],
        "agents": None,
        "dead_links": None,  # the profile decides: the open one warns of a link to no note yet
        "sources": None,
        "parent_keys": ["up", "parent"],
        "git": "off",
        "remote": None,
        "snapshot_quiet_s": 300,
        "sync_interval_s": None,
        "specs": [],
        "views": [],  # no generated views unless the person opts in
        "volumes": None,  # no journal volumes until a person sets them (edition configure)
        "session_notes": None,  # agent sessions' records stay out of the vault unless a person opts in
        "domains": [],
        "roles": None,
        "git_raw": False,
        "projects": [],  # no project registry: a log event may name any project
        "canon_tables": [],  # no canonical tables: promotions are matched against none
    }
    assert info["health"]["state"] == "ready"
    text = cli("vault", "list")
    assert text.out.splitlines()[0].split() == ["ID", "KIND", "WRITE", "SCHEMA", "STATE", "NOTES", "PATH"]
    assert "work" in text.out and str(vault.resolve()) in text.out
    assert (vault / ".vaultd" / ".gitignore").read_text() == "*\n"
    assert snapshot(vault) == before, "adding a vault must not change a byte of it"

    preview = cli("vault", "remove", "work")
    assert preview.code == 0
    confirm_line = [ln.strip() for ln in preview.out.splitlines() if "--confirm" in ln][0]
    assert confirm_line.startswith("vaultctl vault remove work --confirm --fingerprint ")
    assert json.loads(_config(daemon).read_text())["vaults"][0]["id"] == "work"  # a preview changes nothing
    fp = confirm_line.rsplit(" ", 1)[1]
    bad = cli("vault", "remove", "work", "--confirm", "--fingerprint", "0" * 64)
    assert bad.code == 75 and "preview again" in bad.err
    done = cli("vault", "remove", "work", "--confirm", "--fingerprint", fp, "--json")
    assert done.code == 0 and done.json()["outcome"] == "applied"
    assert cli("vault", "list", "--json").json() == {"vaults": []}
    assert snapshot(vault) == before and vault.is_dir()


def test_relative_path_is_made_absolute_by_the_cli_but_refused_on_the_wire(
    daemon: Daemon, typed: TypedClient, cli: Any, tmp_path: Path
) -> None:
    (tmp_path / "rel").mkdir()
    with refused(ErrorCode.INVALID_PARAMS) as refusal:
        typed.call(VAULT_ADD, VaultAddParams(id="rel", path="rel"))
    assert "absolute" in refusal.data.message
    ok = cli("vault", "add", "rel", "rel", cwd=tmp_path)
    assert ok.code == 0, ok.err


@pytest.mark.parametrize("case", ["missing", "file", "loop", "nested", "outer", "dup-id", "dup-path", "bad-id"])
def test_bad_vault_paths_are_refused_and_config_unchanged(daemon: Daemon, typed: TypedClient, tmp_path: Path, case: str) -> None:
    base = tmp_path / "base"
    (base / "inner").mkdir(parents=True)
    typed.call(VAULT_ADD, VaultAddParams(id="base", path=str(base)))
    before = _config(daemon).read_bytes()
    (tmp_path / "afile").write_text("x")
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    (tmp_path / "other").mkdir()
    params = {
        "missing": VaultAddParams(id="x", path=str(tmp_path / "nope")),
        "file": VaultAddParams(id="x", path=str(tmp_path / "afile")),
        "loop": VaultAddParams(id="x", path=str(tmp_path / "loop")),
        "nested": VaultAddParams(id="x", path=str(base / "inner")),
        "outer": VaultAddParams(id="x", path=str(tmp_path)),
        "dup-id": VaultAddParams(id="base", path=str(tmp_path / "other")),
        "dup-path": VaultAddParams(id="x", path=str(base)),
        "bad-id": VaultAddParams(id="Bad_Id", path=str(tmp_path / "other")),
    }[case]
    # Only a malformed id is the command line's fault (exit 2); the rest are refusals (exit 1).
    expected = {"missing": ErrorCode.NOT_FOUND, "bad-id": ErrorCode.INVALID_PARAMS}.get(case, ErrorCode.VALIDATION)
    with refused(expected) as refusal:
        typed.call(VAULT_ADD, params)
    assert refusal.data.message
    assert _config(daemon).read_bytes() == before


@pytest.mark.parametrize("case", ["malformed", "oversized", "symlink", "unknown-key", "version", "fifo"])
def test_bad_config_fails_closed_and_is_never_overwritten(daemon: Daemon, typed: TypedClient, tmp_path: Path, case: str) -> None:
    cfg = _config(daemon)
    target = tmp_path / "real.json"
    if case == "malformed":
        cfg.write_text('{"vaults": [')
    elif case == "oversized":
        cfg.write_text(json.dumps({"vaults": [], "pad": "x" * 70000}))
    elif case == "symlink":
        target.write_text('{"vaults": []}')
        cfg.symlink_to(target)
    elif case == "unknown-key":
        cfg.write_text('{"vaults": [{"id": "a", "path": "/tmp", "colour": "red"}]}')
    elif case == "version":
        # A newer format is read tolerantly, except a setting it holds that this build cannot enforce.
        cfg.write_text('{"version": 9, "vaults": [{"id": "a", "path": "/tmp", "agents": {"teleport": "apply"}}]}')
    else:
        os.mkfifo(cfg)
    before = cfg.lstat()
    content = None if case == "fifo" else cfg.read_bytes()
    (tmp_path / "v").mkdir()
    with refused(ErrorCode.VALIDATION) as refusal:  # config.json is at fault, not the request
        typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(tmp_path / "v")))
    assert str(cfg) in refusal.data.message
    if case == "unknown-key":
        assert "colour" in refusal.data.message
        assert "$.vaults[0]" in refusal.data.message
    after = cfg.lstat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    if content is not None:
        assert cfg.read_bytes() == content
    assert typed.call(DOCTOR, DoctorParams()).verdict is Level.FAIL


def test_a_vault_locked_by_another_process_is_reported_not_taken(daemon: Daemon, typed: TypedClient, tmp_path: Path) -> None:
    vault = tmp_path / "busy"
    (vault / ".vaultd").mkdir(parents=True)
    fd = os.open(vault / ".vaultd" / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        info = typed.call(VAULT_ADD, VaultAddParams(id="busy", path=str(vault)))
        assert info.health.state is VaultState.LOCKED
        findings = typed.call(DOCTOR, DoctorParams()).findings
        assert any(f.check == "vault:busy" and f.level is Level.FAIL for f in findings)
    finally:
        os.close(fd)


def test_registry_survives_a_restart(home, typed_clients: TypedClients, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "v").mkdir()
    d = Daemon(home)
    typed_clients.open(home)  # a session that says hello and stays idle
    c = typed_clients.open(home)
    c.call(VAULT_ADD, VaultAddParams(id="keep", path=str(tmp_path / "v")))
    d.stop()
    d2 = Daemon(home)
    try:
        c2 = typed_clients.open(home)
        # A listing answers once the note table is whole, before the name maps: it may come
        # while the vault still says indexing. The vault is back, then ready.
        c2.call(LIST, ListParams(vault="keep"))
        status = c2.call(DAEMON_STATUS, Empty())
        assert [v.id for v in status.vaults] == ["keep"]
        wait_until(lambda: c2.call(DAEMON_STATUS, Empty()).vaults[0].state is VaultState.READY, 60, "the vault ready after the restart")
    finally:
        d2.stop()


def test_schema_prints_every_method(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("schema")
    assert out.code == 0
    names = [m["method"] for m in json.loads(out.out)]
    assert {"hello", "vault.add", "vault.remove", "doctor"} <= set(names)


def test_doctor_text_has_rows_and_verdict(daemon: Daemon, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("doctor")
    lines = out.out.splitlines()
    assert lines[0].split() == ["LEVEL", "CHECK", "FINDING"]
    assert lines[-1].startswith("verdict: ")
