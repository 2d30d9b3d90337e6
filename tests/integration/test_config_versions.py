"""config.json's format version: a newer file read tolerantly where it can be and refused loudly where
it cannot (status and doctor, with and without a daemon, name it and exit non-zero); an older one
migrated at start with the original kept beside it. Real daemon, real vaultctl."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.config_format import BACKUP_NAME, CONFIG_VERSION, MIGRATIONS
from tests.support.harness import Daemon, Home, vaultctl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

OFFLINE = {"VAULTD_NO_AUTOSTART": "1"}

#: Files this build cannot use, each for another reason: every one must stop status and doctor.
UNUSABLE = {
    "malformed": '{"vaults": [',
    "version-not-a-number": '{"version": "two", "vaults": []}',
    # A newer format's PII policy member this build does not know: enforcing less than the file
    # says would screen less than the user asked, so the whole file is refused.
    "newer-unenforceable": json.dumps(
        {"version": CONFIG_VERSION + 7, "vaults": [{"id": "v", "path": "/nowhere", "pii": {"email": "deny", "faces": "deny"}}]}
    ),
    "unknown-key-current": json.dumps({"version": CONFIG_VERSION, "vaults": [{"id": "v", "path": "/nowhere", "colour": "red"}]}),
}


@pytest.fixture
def vault_dir(home: Home) -> Path:
    home.vault.mkdir()
    (home.vault / "a.md").write_text("# A\n")
    return home.vault


@pytest.fixture
def started(home: Home) -> Iterator[Any]:
    """Start a daemon on whatever config.json the test wrote first."""
    daemons: list[Daemon] = []

    def start() -> Daemon:
        daemons.append(Daemon(home))
        return daemons[-1]

    yield start
    for d in daemons:
        d.stop()


def _write_config(home: Home, text: str) -> Path:
    home.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    cfg = home.home / "config.json"
    cfg.write_text(text)
    cfg.chmod(0o600)
    return cfg


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_status_names_an_unusable_config_and_exits_non_zero(home: Home, started: Any, case: str) -> None:
    cfg = _write_config(home, UNUSABLE[case])
    before = cfg.read_bytes()
    started()
    text = vaultctl(home, "status")
    assert text.code == 1, text.out
    assert str(cfg) in text.out
    assert "no vaults registered" not in text.out
    as_json = vaultctl(home, "status", "--json")
    assert as_json.code == 1
    assert str(cfg) in as_json.json()["config_problem"]
    doctor = vaultctl(home, "doctor", "--json")
    assert doctor.code == 1
    assert any(f["check"] == "config" and f["level"] == "fail" and str(cfg) in f["finding"] for f in doctor.json()["findings"])
    assert cfg.read_bytes() == before  # never overwritten: it may be the user's hand edit


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_doctor_without_a_daemon_names_an_unusable_config(home: Home, case: str) -> None:
    cfg = _write_config(home, UNUSABLE[case])
    doctor = vaultctl(home, "doctor", "--json", env=OFFLINE)
    assert doctor.code == 1
    config = [f for f in doctor.json()["findings"] if f["check"] == "config"]
    assert config and config[0]["level"] == "fail", config
    assert str(cfg) in config[0]["finding"]


def test_the_refusal_of_a_newer_file_names_the_setting_and_the_format(home: Home, started: Any) -> None:
    _write_config(home, UNUSABLE["newer-unenforceable"])
    started()
    problem = vaultctl(home, "status", "--json").json()["config_problem"]
    assert f"format {CONFIG_VERSION + 7}" in problem
    assert "$.vaults[0].pii" in problem and "faces" in problem


def test_a_newer_file_is_read_tolerantly_and_its_unknown_keys_written_back_unchanged(home: Home, vault_dir: Path, started: Any) -> None:
    newer = CONFIG_VERSION + 1
    doc = {
        "version": newer,
        "future_top": {"nested": [1, 2, {"x": "y"}]},
        "daemon": {"max_connections": 64, "future_limit": 5},
        "vaults": [{"id": "v", "path": str(vault_dir.resolve()), "future_vault_key": ["a", "b"]}],
    }
    cfg = _write_config(home, json.dumps(doc))
    started()
    status = vaultctl(home, "status", "--json")
    assert status.code == 0, status.out
    assert status.json()["config_problem"] is None
    assert [v["id"] for v in status.json()["vaults"]] == ["v"]
    doctor = vaultctl(home, "doctor", "--json").json()
    assert any(f["check"] == "config" and f["level"] == "warn" and f"format {newer}" in f["finding"] for f in doctor["findings"])
    # A registry change keeps every key this build does not know, and the newer version.
    preview = vaultctl(home, "vault", "set", "v", "--write", "cli", "--json").json()
    applied = vaultctl(home, "vault", "set", "v", "--write", "cli", "--confirm", "--fingerprint", preview["fingerprint"])
    assert applied.code == 0, applied.err
    after = json.loads(cfg.read_text())
    assert after["version"] == newer
    assert after["future_top"] == doc["future_top"]
    assert after["daemon"] == {"max_connections": 64, "future_limit": 5}
    assert after["vaults"][0]["future_vault_key"] == ["a", "b"]
    assert after["vaults"][0]["write"] == "cli"


def test_doctor_without_a_daemon_reads_a_newer_file_as_the_daemon_does(home: Home, vault_dir: Path) -> None:
    doc = {"version": CONFIG_VERSION + 1, "vaults": [{"id": "v", "path": str(vault_dir.resolve()), "future_vault_key": 1}]}
    _write_config(home, json.dumps(doc))
    doctor = vaultctl(home, "doctor", "--json", env=OFFLINE).json()
    config = [f for f in doctor["findings"] if f["check"] == "config"]
    assert config[0]["level"] == "warn" and "1 vault(s) registered" in config[0]["finding"]
    assert any(f["check"] == "vault:v" for f in doctor["findings"])


def _older(version: int, vault_dir: Path) -> str:
    """A registry as a build writing ``version`` wrote it (format 1 wrote no version key)."""
    entry = {"id": "v", "path": str(vault_dir.resolve()), "kind": "personal"}
    return json.dumps({"vaults": [entry]} if version == 1 else {"version": version, "vaults": [entry]})


#: Every older format with its version written, and format 1 also as it was written: without one.
OLDER = [(version, True) for version in sorted(MIGRATIONS)] + [(1, False)]


@pytest.mark.parametrize(("version", "explicit"), OLDER)
def test_an_older_file_is_migrated_at_start_with_its_backup_beside_it(
    home: Home, vault_dir: Path, started: Any, version: int, explicit: bool
) -> None:
    text = _older(version, vault_dir)
    if explicit:
        text = json.dumps({"version": version, **json.loads(text)})
    cfg = _write_config(home, text)
    original = cfg.read_bytes()
    doctor_before = vaultctl(home, "doctor", "--json", env=OFFLINE).json()
    assert any(f["check"] == "config" and f"format {version}, migrated" in f["finding"] for f in doctor_before["findings"])
    started()
    status = vaultctl(home, "status", "--json")
    assert status.code == 0 and [v["id"] for v in status.json()["vaults"]] == ["v"]
    backup = cfg.with_name(BACKUP_NAME.format(version=version))
    assert backup.read_bytes() == original
    assert backup.stat().st_mode & 0o777 == 0o600
    after = json.loads(cfg.read_text())
    assert after["version"] == CONFIG_VERSION
    assert {k: after["vaults"][0][k] for k in ("id", "path")} == {"id": "v", "path": str(vault_dir.resolve())}


def test_a_second_start_keeps_the_first_backup(home: Home, vault_dir: Path, started: Any) -> None:
    cfg = _write_config(home, _older(1, vault_dir))
    original = cfg.read_bytes()
    started().stop()
    migrated = cfg.read_bytes()
    started()
    assert cfg.read_bytes() == migrated  # nothing more to migrate: not rewritten
    assert cfg.with_name(BACKUP_NAME.format(version=1)).read_bytes() == original
