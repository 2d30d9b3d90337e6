"""Receipts: what setup changed in a host file, kept so that undo can put it back exactly.

One JSON file per host file, under ``<vaultd home>/setup/``, named for the host and a hash of the
file's path. A receipt holds the entry's prior text (which may carry the user's own tokens, so
receipts are 0600 in a 0700 folder), the entry setup wrote (undo acts only while that is still
what the file holds) and the spacing undo needs to give back the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from vaultctl.setup import files
from vaultctl.setup.errors import DiskError, MalformedConfig
from vaultctl.setup.homes import vaultd_home

RECEIPT_VERSION = 1


class Receipt(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The record of one applied setup, enough to reverse it."""

    version: int = RECEIPT_VERSION
    host: str
    path: str  #: the host file, absolute
    file_existed: bool  #: False: setup created the file
    created_sha256: str | None = None  #: the file as setup created it; undo deletes only that
    prior_text: str | None = None  #: the entry's exact text before setup; None: there was none
    written: dict[str, Any]  #: the entry setup wrote
    container_existed: bool = True  #: ``mcpServers`` / ``mcp_servers`` was there before
    spacing: str | None = None  #: whitespace undo puts back (see ``edits.Put.spacing``)
    applied_at: str = ""  #: ISO 8601, UTC; for people reading the folder


class ReceiptStore:
    """The ``setup/`` folder of receipts."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> ReceiptStore:
        return cls(vaultd_home(env) / "setup")

    def path_for(self, host: str, target: Path) -> Path:
        digest = hashlib.sha256(os.fsencode(str(target))).hexdigest()[:16]
        return self.folder / f"{host}-{digest}.json"

    def load(self, host: str, target: Path) -> Receipt | None:
        """The receipt for ``target``, or None.

        Raises:
            MalformedConfig: VALIDATION, the receipt is unreadable (it names the file to delete).
        """
        where = self.path_for(host, target)
        snap = files.read(where)
        if snap is None:
            return None
        try:
            receipt = msgspec.json.decode(snap.data, type=Receipt)
        except msgspec.DecodeError as exc:
            raise MalformedConfig(
                f"The setup receipt {where} is unreadable; delete it (undo will then not be possible for that file) and run setup again.",
                path=where,
            ) from exc
        if receipt.path != str(target) or receipt.host != host:
            raise MalformedConfig(f"The setup receipt {where} is for another file; delete it.", path=where)
        return receipt

    def save(self, receipt: Receipt) -> Path:
        where = self.path_for(receipt.host, Path(receipt.path))
        files.make_folder(self.folder)
        stamped = msgspec.structs.replace(receipt, applied_at=datetime.now(UTC).isoformat(timespec="seconds"))
        files.write(where, msgspec.json.format(msgspec.json.encode(stamped)) + b"\n", before=files.read(where))
        return where

    def drop(self, host: str, target: Path) -> None:
        where = self.path_for(host, target)
        try:
            os.unlink(where)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise DiskError(f"could not remove the setup receipt {where}: {exc.strerror}", path=where) from exc
