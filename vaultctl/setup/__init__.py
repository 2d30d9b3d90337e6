"""Reversible registration of ``vaultctl mcp`` in agent hosts' MCP configuration, and of the
guard (``vaultctl guard``) in the hooks of the hosts whose hooks can refuse an edit.

``vaultctl setup HOST`` shows the change (a dry run), ``--apply`` makes it and keeps a record
per change, ``--undo`` reverses it byte for byte while what setup wrote is still there unchanged.
Only the ``vaultd`` entry and the guard's own hook groups are ever touched; a file setup cannot
edit faithfully is refused, not rewritten.

The CLI calls :func:`run` (or :func:`plan_setup`, :func:`apply_setup`, :func:`undo_setup`) and
:func:`setup_all`, and maps a :class:`SetupError`'s ``code`` to an exit status. This package
imports nothing from the daemon.
"""

from vaultctl.setup.errors import (
    CannotEditFaithfully,
    DiskError,
    EntryChanged,
    FileChanged,
    FileTooLarge,
    FolderNotFound,
    MalformedConfig,
    NoRecord,
    SetupError,
    UnsafeFile,
    UsageError,
)
from vaultctl.setup.files import MAX_FILE_BYTES
from vaultctl.setup.guard import guard_command
from vaultctl.setup.homes import vaultd_home
from vaultctl.setup.hosts import ENTRY_NAME, GUARD_NAME, HOSTS, FileFormat, GuardHooks, Host
from vaultctl.setup.plan import Action, HostOutcome, Mode, SetupPlan, Status
from vaultctl.setup.records import EntryRecord, GuardRecord, RecordStore
from vaultctl.setup.runner import apply_setup, plan_setup, run, setup_all, undo_setup

__all__ = [
    "ENTRY_NAME",
    "GUARD_NAME",
    "HOSTS",
    "MAX_FILE_BYTES",
    "Action",
    "CannotEditFaithfully",
    "DiskError",
    "EntryChanged",
    "FileChanged",
    "FileFormat",
    "FileTooLarge",
    "FolderNotFound",
    "GuardHooks",
    "GuardRecord",
    "Host",
    "HostOutcome",
    "MalformedConfig",
    "Mode",
    "NoRecord",
    "EntryRecord",
    "RecordStore",
    "SetupError",
    "SetupPlan",
    "Status",
    "UnsafeFile",
    "UsageError",
    "apply_setup",
    "guard_command",
    "plan_setup",
    "run",
    "setup_all",
    "undo_setup",
    "vaultd_home",
]
