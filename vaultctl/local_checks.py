"""What ``vaultctl doctor`` can still check when no daemon answers: the home, the socket's folder,
config.json, each registered vault's folder and who holds its lock, the daemon's last
logged error, and which optional extras are installed. Nothing here writes, and no vault lock is taken, not even to test it.

The findings read like the daemon's (LEVEL/CHECK/FINDING); the first one says the daemon is not
running and why, so the rest reads as "what stands in its way".
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import msgspec

from protocol import config_format, extras, lock_holder
from protocol.location import resolve_home, resolve_socket
from protocol.methods.service import Finding, Level
from protocol.methods.specs import source_gone
from protocol.methods.vaults import VaultEntry, WritePolicy
from vaultctl import peer

MAX_CONFIG_BYTES = 64 * 1024  #: the daemon refuses a larger config.json; so does this reader
LOG_TAIL_BYTES = 64 * 1024  #: how much of the daemon's log is searched for its last error
LOCK = Path(".vaultd") / "lock"


class _Registry(msgspec.Struct, kw_only=True):
    """The part of config.json these checks read; the daemon checks the rest strictly."""

    vaults: list[VaultEntry] = []


def findings(why_down: str) -> list[Finding]:
    """Every local check, the daemon's absence (``why_down``) first."""
    home = resolve_home()
    socket_path = resolve_socket(home)
    found = [Finding(level=Level.FAIL, check="daemon", finding=why_down)]
    found += _last_error(home)
    found.append(_home(home))
    problem = peer.check_folder(socket_path)
    found.append(
        Finding(level=Level.FAIL, check="socket-folder", finding=problem)
        if problem
        else Finding(level=Level.OK, check="socket-folder", finding=f"{socket_path.parent} is a safe place for the socket")
    )
    entries, config = _config(home)
    found.append(config)
    found += [_vault(entry) for entry in entries]
    found += [
        Finding(level=Level.WARN, check=f"spec:{entry.id}:{s.id}", finding=source_gone(entry.id, s.id, s.path))
        for entry in entries
        for s in entry.specs
        if not os.path.exists(s.path)
    ]
    found += [_tidy_unplanned(entry) for entry in entries if entry.write is not WritePolicy.NONE]
    found += extras.findings()  # as the Python that would start the daemon has them
    return found


def _tidy_unplanned(entry: VaultEntry) -> Finding:
    """The tidy row the daemon would give: its planner is the daemon's, so without one it is said
    to be unchecked rather than left out (a missing row would read as nothing to tidy)."""
    return Finding(
        level=Level.WARN,
        check=f"tidy:{entry.id}",
        finding="not planned: the tidy planner runs in the daemon; start it and run doctor again for pending tidy counts",
    )


def _home(home: Path) -> Finding:
    try:
        st = home.lstat()
    except FileNotFoundError:
        return Finding(level=Level.OK, check="home", finding=f"{home} does not exist yet; the daemon creates it (mode 700)")
    except OSError as exc:
        return Finding(level=Level.FAIL, check="home", finding=f"{home}: {exc.strerror}")
    if not stat.S_ISDIR(st.st_mode):
        return Finding(level=Level.FAIL, check="home", finding=f"{home} is not a folder")
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != os.getuid():
        return Finding(level=Level.FAIL, check="home", finding=f"{home} belongs to uid {st.st_uid}, not to you")
    if mode & 0o077:
        return Finding(level=Level.WARN, check="home", finding=f"{home} has mode {mode:o}, expected 700")
    return Finding(level=Level.OK, check="home", finding=f"{home} ({mode:o})")


def _config(home: Path) -> tuple[list[VaultEntry], Finding]:
    path = home / "config.json"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return [], Finding(level=Level.OK, check="config", finding=f"no {path} yet: no vault registered")
    except OSError as exc:
        return [], Finding(level=Level.FAIL, check="config", finding=f"cannot open {path}: {exc.strerror}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return [], Finding(level=Level.FAIL, check="config", finding=f"{path} is not a regular file")
        raw = os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_CONFIG_BYTES:
        return [], Finding(level=Level.FAIL, check="config", finding=f"{path} is over {MAX_CONFIG_BYTES} bytes; the daemon refuses it")
    try:
        doc = msgspec.json.decode(raw)
        version = config_format.version_of(doc)
    except (msgspec.DecodeError, config_format.FormatProblem) as exc:
        return [], Finding(level=Level.FAIL, check="config", finding=f"{path} is invalid: {exc}; the daemon refuses it: fix or move it")
    if version > config_format.CONFIG_VERSION:  # the daemon's rules: unknown keys set aside, known ones strict
        doc, _ = config_format.set_aside(doc, ("version", "vaults"), ())
    try:
        registry = msgspec.convert(config_format.migrated(doc) if version < config_format.CONFIG_VERSION else doc, _Registry, strict=True)
    except msgspec.ValidationError as exc:
        if version > config_format.CONFIG_VERSION:
            return [], Finding(level=Level.FAIL, check="config", finding=config_format.newer_problem(str(path), version, str(exc)))
        return [], Finding(level=Level.FAIL, check="config", finding=f"{path} is invalid: {exc}; the daemon refuses it: fix or move it")
    count = f"{len(registry.vaults)} vault(s) registered"
    if version < config_format.CONFIG_VERSION:
        backup = config_format.BACKUP_NAME.format(version=version)
        note = f"{count}; format {version}, migrated to {config_format.CONFIG_VERSION} when the daemon starts ({backup} kept beside it)"
        return registry.vaults, Finding(level=Level.OK, check="config", finding=note)
    if version > config_format.CONFIG_VERSION:
        note = f"{count}; format {version} is newer than this vaultd's {config_format.CONFIG_VERSION}: keys it does not know are kept"
        return registry.vaults, Finding(level=Level.WARN, check="config", finding=note)
    return registry.vaults, Finding(level=Level.OK, check="config", finding=count)


def _vault(entry: VaultEntry) -> Finding:
    check = f"vault:{entry.id}"
    root = Path(entry.path)
    if not root.is_dir():
        return Finding(level=Level.FAIL, check=check, finding=f"{root} is not a folder (moved or removed?)")
    held = lock_holder.holder(root / LOCK)
    if held is not None:
        return Finding(
            level=Level.FAIL,
            check=check,
            finding=f"{root}: locked by {lock_holder.describe(held)}; no daemon can serve it while that process holds it",
        )
    return Finding(level=Level.OK, check=check, finding=f"{root}: a folder, not locked")


def _last_error(home: Path) -> list[Finding]:
    """The daemon's last logged error (JSON lines in logs/vaultd.log), if its log has one."""
    log = home / "logs" / "vaultd.log"
    try:
        with open(log, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - LOG_TAIL_BYTES))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("level") in ("error", "critical"):
            when = str(record.get("timestamp", ""))[:19].replace("T", " ")
            event = " ".join(str(record.get("event", "")).split())[:200]
            return [
                Finding(level=Level.WARN, check="daemon-log", finding=f"last error logged at {when}: {event} (see 'vaultctl daemon logs')")
            ]
    return []
