"""Records: what setup changed in a host file, kept so that undo can put it back exactly.

One JSON file per change to a host file, under ``<vaultd home>/setup/``, named for the host, the
kind of change (the MCP entry, the guard's hooks, or the host's sandbox settings) and a hash of the file's path. A record
holds the entry's prior text (which may carry the user's own tokens, so records are 0600 in a
0700 folder), what setup wrote (undo acts only while that is still what the file holds) and the
spacing undo needs to give back the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import msgspec

from vaultctl.setup import files
from vaultctl.setup.errors import DiskError, MalformedConfig
from vaultctl.setup.homes import vaultd_home
from vaultctl.setup.hooksfile import Created

if TYPE_CHECKING:
    from collections.abc import Mapping

RECORD_VERSION = 1


class EntryRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The record of one applied setup of the MCP entry, enough to reverse it."""

    KIND: ClassVar[str] = ""  #: names the record file (the MCP entry's keep the first naming)

    version: int = RECORD_VERSION
    host: str
    path: str  #: the host file, absolute
    file_existed: bool  #: False: setup created the file
    created_sha256: str | None = None  #: the file as setup created it; undo deletes only that
    prior_text: str | None = None  #: the entry's exact text before setup; None: there was none
    written: dict[str, Any]  #: the entry setup wrote
    container_existed: bool = True  #: ``mcpServers`` / ``mcp_servers`` was there before
    spacing: str | None = None  #: whitespace undo puts back (see ``edits.Put.spacing``)
    applied_at: str = ""  #: ISO 8601, UTC; for people reading the folder


class GuardStep(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One hook group setup added, in the order it added them (undo goes in reverse)."""

    event: str  #: the host's event name (``PreToolUse``, ``BeforeTool``, ``SessionStart``)
    created: Created  #: what setup had to create to hold the group
    spacing: str | None = None  #: whitespace of the empty object or array it filled, for undo


class HostFileRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What every record of edits setup made to one host file holds besides its steps."""

    version: int = RECORD_VERSION
    host: str
    path: str  #: the host file, absolute
    file_existed: bool  #: False: setup created the file
    created_sha256: str | None = None  #: the file as setup created it; undo deletes only that
    applied_at: str = ""


class GuardRecord(HostFileRecord, kw_only=True, forbid_unknown_fields=True):
    """The record of the guard's hook groups setup added to one host file."""

    KIND: ClassVar[str] = "guard"

    written: dict[str, dict[str, Any]]  #: event -> the group setup wrote
    steps: list[GuardStep]


class SandboxStep(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One edit setup made to a host's sandbox settings, in order (undo goes in reverse)."""

    kind: str  #: ``member`` (added, holding ``value``), ``element`` (appended), ``replace`` (a value changed)
    path: list[str]  #: the keys down to the member, or to the array an element went into
    value: Any  #: what setup wrote there
    prior_text: str | None = None  #: ``replace``: the exact text the value had before
    spacing: str | None = None  #: whitespace of the empty object or array it filled, for undo


class SandboxRecord(HostFileRecord, kw_only=True, forbid_unknown_fields=True):
    """The record of the sandbox settings setup wrote into one host file."""

    KIND: ClassVar[str] = "sandbox"

    steps: list[SandboxStep]


AnyRecord = EntryRecord | GuardRecord | SandboxRecord
_R = TypeVar("_R", EntryRecord, GuardRecord, SandboxRecord)


class RecordStore:
    """The ``setup/`` folder of records."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> RecordStore:
        return cls(vaultd_home(env) / "setup")

    def path_for(self, host: str, target: Path, kind: type[AnyRecord] = EntryRecord) -> Path:
        digest = hashlib.sha256(os.fsencode(str(target))).hexdigest()[:16]
        middle = f"{kind.KIND}-" if kind.KIND else ""
        return self.folder / f"{host}-{middle}{digest}.json"

    def load(self, host: str, target: Path) -> EntryRecord | None:
        """The MCP entry's record for ``target``, or None.

        Raises:
            MalformedConfig: VALIDATION, the record is unreadable (it names the file to delete).
        """
        return self._load(host, target, EntryRecord)

    def load_guard(self, host: str, target: Path) -> GuardRecord | None:
        """The guard's record for ``target``, or None (raises as :meth:`load`)."""
        return self._load(host, target, GuardRecord)

    def load_sandbox(self, host: str, target: Path) -> SandboxRecord | None:
        """The sandbox settings' record for ``target``, or None (raises as :meth:`load`)."""
        return self._load(host, target, SandboxRecord)

    def _load(self, host: str, target: Path, kind: type[_R]) -> _R | None:
        where = self.path_for(host, target, kind)
        snap = files.read(where)
        if snap is None:
            return None
        try:
            record = msgspec.json.decode(snap.data, type=kind)
        except msgspec.DecodeError as exc:
            raise MalformedConfig(
                f"The setup record {where} is unreadable; delete it (undo will then not be possible for that file) and run setup again.",
                path=where,
            ) from exc
        if record.path != str(target) or record.host != host:
            raise MalformedConfig(f"The setup record {where} is for another file; delete it.", path=where)
        return record

    def save(self, record: AnyRecord) -> Path:
        where = self.path_for(record.host, Path(record.path), type(record))
        files.make_folder(self.folder)
        stamped = msgspec.structs.replace(record, applied_at=datetime.now(UTC).isoformat(timespec="seconds"))
        files.write(where, msgspec.json.format(msgspec.json.encode(stamped)) + b"\n", before=files.read(where))
        return where

    def raw(self, where: Path) -> bytes | None:
        """A record file's bytes as they are (to put back if the change it precedes fails)."""
        snap = files.read(where)
        return None if snap is None else snap.data

    def restore(self, where: Path, data: bytes | None) -> None:
        """Put a record file back as :meth:`raw` read it (None: it was not there)."""
        if data is None:
            self.drop_path(where)
        else:
            files.write(where, data, before=files.read(where))

    def drop(self, host: str, target: Path) -> None:
        self.drop_path(self.path_for(host, target))

    def drop_path(self, where: Path) -> None:
        try:
            os.unlink(where)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise DiskError(f"could not remove the setup record {where}: {exc.strerror}", path=where) from exc
