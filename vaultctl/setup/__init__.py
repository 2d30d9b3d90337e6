"""Reversible registration of ``vaultctl mcp`` in agent hosts' MCP configuration.

``vaultctl setup HOST`` shows the change (a dry run), ``--apply`` makes it and keeps a receipt,
``--undo`` reverses it byte for byte while the entry is still the one setup wrote. Only the
``vaultd`` entry is ever touched; a file setup cannot edit faithfully is refused, not rewritten.

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
    NoReceipt,
    SetupError,
    UnsafeFile,
    UsageError,
)
from vaultctl.setup.files import MAX_FILE_BYTES
from vaultctl.setup.homes import vaultd_home
from vaultctl.setup.hosts import ENTRY_NAME, HOSTS, FileFormat, Host
from vaultctl.setup.plan import Action, HostOutcome, Mode, SetupPlan, Status
from vaultctl.setup.receipts import Receipt, ReceiptStore
from vaultctl.setup.runner import apply_setup, plan_setup, run, setup_all, undo_setup

__all__ = [
    "ENTRY_NAME",
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
    "Host",
    "HostOutcome",
    "MalformedConfig",
    "Mode",
    "NoReceipt",
    "Receipt",
    "ReceiptStore",
    "SetupError",
    "SetupPlan",
    "Status",
    "UnsafeFile",
    "UsageError",
    "apply_setup",
    "plan_setup",
    "run",
    "setup_all",
    "undo_setup",
    "vaultd_home",
]
