"""Where a vault keeps attachments, as Obsidian decides it: ``.obsidian/app.json``'s
``attachmentFolderPath``.

``/`` or unset: the vault root. ``./``: the folder of the note the attachment belongs to;
``./sub``: a folder below it. Anything else: that vault-relative folder. A value that is not a
safe vault folder (``..``, a reserved folder, a control character) is not followed: the note's
own folder is used and the capture says so.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from vaultd.fsio import ReadRefused, read_regular
from vaultd.policy import check_new_path
from vaultd.vault import json_text
from vaultd.vault.layout import SKIPPED_DIRS

if TYPE_CHECKING:
    from pathlib import Path

APP_JSON = ".obsidian/app.json"
MAX_APP_JSON_BYTES = 1024 * 1024


def configured(root: Path) -> str | None:
    """The raw ``attachmentFolderPath`` setting, or None when absent or unreadable."""
    try:
        data, _ = read_regular(root / APP_JSON, MAX_APP_JSON_BYTES)
        settings = json_text.load(data)  # bounded: a deeply nested app.json is unusable, not a crash
    except (OSError, ReadRefused, ValueError):
        return None
    value = settings.get("attachmentFolderPath") if isinstance(settings, dict) else None
    return value if isinstance(value, str) else None


def attachment_folder(setting: str | None, note_folder: str) -> tuple[str, str | None]:
    """(the folder, a warning or None) for an attachment of a note in ``note_folder``."""
    value = (setting or "").strip()
    if value in ("", "/"):
        return "", None
    if value in (".", "./"):
        return note_folder, None
    if value.startswith("./"):
        folder = posixpath.join(note_folder, value[2:]) if note_folder else value[2:]
    else:
        folder = value
    folder = folder.strip("/")
    parts = folder.split("/")
    if not folder or any(p in SKIPPED_DIRS for p in parts) or check_new_path(f"{folder}/x", note=False):
        return note_folder, "the attachment folder in .obsidian/app.json is not a safe vault folder; the source's own folder is used"
    return folder, None
