"""The options of a vault's settings, as ``vault add``, ``vault set`` and ``vault git`` share them.

A setting reads the same, with the same help from the protocol's description, wherever it is
given: registering a vault takes every setting a later ``vault set`` or ``vault git`` changes.
(``vault git --sync-interval`` differs from ``vault add``'s: there 0 turns an interval off.)
"""

from __future__ import annotations

import json
from typing import Annotated

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.methods.vaults import DeadLinks, PiiSetting, VaultAddParams
from protocol.schema import field_help as doc
from vaultctl.commands.common import fail

PiiOpt = Annotated[
    str | None,
    typer.Option(metavar="POLICY", help="allow, deny, default (the kind's), or a JSON policy object per category and surface."),
]
DenyPathOpt = Annotated[
    list[str] | None, typer.Option("--deny-path", metavar="GLOB", help=doc(VaultAddParams, "deny_paths") + " Repeatable: the whole list.")
]
PrivateOpt = Annotated[
    list[str] | None,
    typer.Option("--private", metavar="GLOB", help=doc(VaultAddParams, "private_paths") + " Repeatable: the whole list."),
]
StampKeyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--stamp-key",
        metavar="KEY",
        help=doc(VaultAddParams, "stamp_keys") + " Repeatable: an edit stamps the first one the note has; --stamp-key '' never stamps.",
    ),
]
ParentKeyOpt = Annotated[
    list[str] | None, typer.Option("--parent-key", metavar="KEY", help=doc(VaultAddParams, "parent_keys") + " Repeatable.")
]
DeadLinksOpt = Annotated[DeadLinks | None, typer.Option("--dead-links", help=doc(VaultAddParams, "dead_links"))]
QuietOpt = Annotated[int | None, typer.Option("--quiet-seconds", help=doc(VaultAddParams, "snapshot_quiet_s"))]


def pii_setting(value: str | None) -> tuple[PiiSetting | None, bool]:
    """``--pii`` read: (the setting, whether it asks for the kind's default). ``allow``, ``deny``,
    ``default`` or a JSON policy object; anything else is a usage error."""
    if value is None:
        return None, False
    if value == "default":
        return None, True
    text = json.dumps(value) if value in ("allow", "deny") else value
    try:
        setting: PiiSetting = msgspec.json.decode(text, type=PiiSetting)
        return setting, False
    except msgspec.DecodeError as exc:
        fail(f"--pii: allow, deny, default or a JSON policy object ({exc})", ExitStatus.USAGE)


def stamp_keys(given: list[str] | None) -> list[str] | None:
    """``--stamp-key`` read: None when not given (the default stamps), [] for ``--stamp-key ''``."""
    return None if given is None else [k for k in given if k]
