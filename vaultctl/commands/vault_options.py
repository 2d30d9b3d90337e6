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
from protocol.methods.vaults import CanonTable, DeadLinks, FolderRoles, PiiSetting, VaultAddParams
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
DomainOpt = Annotated[
    list[str] | None, typer.Option("--domain", metavar="ID", help=doc(VaultAddParams, "domains") + " Repeatable: the whole list.")
]
RoleOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--role",
        metavar="ROLE=FOLDER",
        help="A folder's role: intake, raw, wiki, meta (one folder each), journal, user_only (repeatable). Repeatable: the whole set.",
    ),
]
ProjectOpt = Annotated[
    list[str] | None,
    typer.Option("--project", metavar="ID", help=doc(VaultAddParams, "projects") + " Repeatable: the whole registry."),
]
CanonTableOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--canon-table",
        metavar="NOTE[#COLUMN]",
        help=doc(VaultAddParams, "canon_tables") + " Repeatable: a note with a Markdown table, and the header of its column of names.",
    ),
]
GitRawOpt = Annotated[bool | None, typer.Option("--git-raw/--no-git-raw", help=doc(VaultAddParams, "git_raw"))]
_SINGLE_ROLES = ("intake", "raw", "wiki", "meta")
_LIST_ROLES = ("journal", "user_only")


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


def folder_roles(given: list[str] | None) -> FolderRoles | None:
    """``--role ROLE=FOLDER``s read: None when not given; the folders are checked by the daemon."""
    if given is None:
        return None
    single: dict[str, str] = {}
    lists: dict[str, list[str]] = {name: [] for name in _LIST_ROLES}
    for text in given:
        name, sep, folder = text.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not folder or name not in (*_SINGLE_ROLES, *_LIST_ROLES):
            fail(f"--role {text!r}: write ROLE=FOLDER, ROLE one of {', '.join((*_SINGLE_ROLES, *_LIST_ROLES))}", ExitStatus.USAGE)
        if name in lists:
            lists[name].append(folder)
        elif name in single:
            fail(f"--role {name} is given twice; it names one folder", ExitStatus.USAGE)
        else:
            single[name] = folder
    return FolderRoles(**single, **lists)  # type: ignore[arg-type]


def canon_tables(given: list[str] | None) -> list[CanonTable] | None:
    """``NOTE.md`` or ``NOTE.md#COLUMN``, each as a canonical table; None when none is given."""
    if not given:
        return None
    out = []
    for text in given:
        note, sep, column = text.partition(".md#")
        out.append(CanonTable(note=note + ".md", column=column) if sep else CanonTable(note=text))
    return out
