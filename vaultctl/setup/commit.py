"""Computed changes to host files, and committing them with their records.

Setup may change two things in one run (the MCP entry and the guard's hooks), and for some hosts
both live in one file. Each change is computed on the text the previous one left (a
:class:`FileState` carries the bytes on disk and the text so far), so that the dry run shows what
apply will write and the changes to one file are written at once, against the bytes that were
read. The order of writes is chosen for reversibility: records are saved before their file
changes (a crash between them leaves a record undo can judge, never a change without one) and
dropped only after it changed.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING

from vaultctl.setup import files
from vaultctl.setup.errors import MalformedConfig, SetupError
from vaultctl.setup.plan import Action, SetupPlan

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vaultctl.setup.records import AnyRecord, RecordStore


@dataclass(frozen=True, slots=True)
class FileState:
    """A host file as a chain of changes sees it: the bytes read from disk, and the text so far."""

    path: Path
    disk: files.Snapshot | None  #: what was read (None: no file); the write checks it is still so
    text: str | None  #: the text after the changes computed so far (None: no file)

    @classmethod
    def read(cls, path: Path) -> FileState:
        """Raises UnsafeFile, FileTooLarge or MalformedConfig (not UTF-8); see :mod:`files`."""
        snap = files.read(path)
        return cls(path, snap, None if snap is None else decode(snap.data, path))

    def sha(self) -> str | None:
        return None if self.text is None else sha(self.text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Change:
    """One computed change: the plan to show, the text it leaves, the records it saves or drops."""

    state: FileState  #: the file before this change
    plan: SetupPlan
    new_text: str | None  #: after this change (None: the file is deleted)
    saves: tuple[AnyRecord, ...] = ()
    drops: tuple[Path, ...] = ()  #: record files to drop once the file is written
    record: Path | None = None  #: the record written or consumed, to report

    @property
    def after(self) -> FileState:
        return FileState(self.state.path, self.state.disk, self.new_text)


def commit(changes: Sequence[Change], store: RecordStore) -> list[SetupPlan]:
    """Write every change, one write per file, and return the plans marked applied.

    Changes to one file must come one after the other, each computed on the previous one's text.
    A failed write leaves that file and its records as they were; files written before it stay
    written, each with its record.
    """
    plans: list[SetupPlan] = []
    for _, group in groupby(changes, key=lambda c: c.state.path):
        chain = list(group)
        first, last = chain[0], chain[-1]
        saves = [r for c in chain for r in c.saves]
        wheres = [store.path_for(r.host, Path(r.path), type(r)) for r in saves]
        previous = {where: store.raw(where) for where in wheres}
        for record in saves:
            store.save(record)
        if last.new_text != first.state.text:
            try:
                _write(first.state, last.new_text)
            except BaseException:
                # The file did not change: its records must not claim it did. The write's own
                # error is the one to report, so a failed rollback stays quiet.
                with contextlib.suppress(SetupError):
                    for where, data in previous.items():
                        store.restore(where, data)
                raise
        for where in (p for c in chain for p in c.drops):
            store.drop_path(where)
        plans += [c.plan if c.plan.action is Action.NONE else replace(c.plan, applied=True, record=c.record) for c in chain]
    return plans


def _write(state: FileState, new_text: str | None) -> None:
    path = state.path
    if new_text is None:
        assert state.disk is not None
        files.remove(path, before=state.disk)
        return
    if state.disk is None:
        files.make_folder(path.parent)
    files.write(path, new_text.encode("utf-8"), before=state.disk)


def decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedConfig(f"{path} is not UTF-8 text (byte {exc.start}); fix its encoding and run setup again.", path=path) from exc


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
