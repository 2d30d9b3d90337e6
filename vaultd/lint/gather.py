"""What lint reads before its rules run: the snapshot the caller may see, the vault's settings,
and the ``.canvas`` and ``.base`` files (the index keeps their names, not their text).

``vault.lint`` gathers from a copy of the index (:class:`~vaultd.vault.index.IndexCopy`), taken
in one step on the event loop, so everything here runs in a worker thread with the index free:
writes and refreshes go on meanwhile, and the findings are of the vault as it was copied.
``lint.fix`` finds its fixes from such a copy too (:mod:`vaultd.lint.fixes`), before it takes
the vault's writer.

The canvases and bases are read and parsed by :func:`read_documents` within
:data:`~protocol.parse_limits.MAX_LINT_DOCUMENT_SECONDS` in all (and within what is left of the
lint's own bound): those left when it runs out are counted unread, as those past
:data:`~protocol.methods.lint.MAX_LINT_DOCUMENTS` are. The rules themselves read nothing; the one
other read is a note's text for a fix (:func:`text_reader`), made only for notes with a fixable
link and only when the file is still the bytes the index holds.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.limits import MAX_NOTE_BYTES
from protocol.methods.lint import MAX_LINT_DOCUMENTS
from protocol.methods.vaults import in_folder
from protocol.methods.views import VIEW_KEY, VIEW_PATHS
from protocol.parse_limits import MAX_LINT_DOCUMENT_SECONDS
from vaultd.fsio import ReadRefused, Refusal, read_regular
from vaultd.graph.snapshot import LinkSnapshot, snapshot
from vaultd.lint.files import is_document, parse_document
from vaultd.lint.model import Deadline, Document, LintInput
from vaultd.vault import oplog
from vaultd.vault.generated_mark import is_ours

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable

    from protocol.methods.vaults import VaultEntry
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import IndexCopy, VaultIndex


def _document(root: Path, rel: str) -> Document:
    try:
        raw, _ = read_regular(root / rel, MAX_NOTE_BYTES)
    except OSError as exc:
        return Document(problem=f"cannot be read: {exc.strerror or 'unreadable'}")
    except ReadRefused as exc:
        why = f"over {MAX_NOTE_BYTES} bytes" if exc.refusal is Refusal.TOO_BIG else exc.refusal.value
        return Document(problem=f"cannot be read: {why}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Document(problem="cannot be read: not valid UTF-8")
    return parse_document(rel, text)


def read_documents(root: Path, paths: list[str], seconds: float = MAX_LINT_DOCUMENT_SECONDS) -> dict[str, Document]:
    """Read and parse ``paths`` in order until ``seconds`` have passed; run it with the index not
    held. The files not reached are left out, and lint counts them unread."""
    deadline = time.monotonic() + seconds
    documents: dict[str, Document] = {}
    for rel in paths:
        if time.monotonic() >= deadline:
            break
        documents[rel] = _document(root, rel)
    return documents


#: Notes of the session folder lint reads for their mark (the session records kept are fewer).
MAX_SESSION_NOTES_READ = 500


def edited_generated(root: Path, entry: VaultEntry, visible: LinkSnapshot) -> tuple[str, ...]:
    """The notes vaultd generates in this vault (its views, its session notes) that the caller
    may see and that a person has edited since vaultd wrote them (their mark no longer holds).
    A note of the session folder counts only when it starts with the mark's key (a note a person
    put there is theirs); the reads are bounded in number and size."""
    views = [VIEW_PATHS[name] for name in entry.views]
    folder = entry.session_notes
    in_sessions = sorted(p for p in visible.notes if folder is not None and in_folder(p, folder))[:MAX_SESSION_NOTES_READ]
    out: list[str] = []
    for rel in [*views, *in_sessions]:
        if rel not in visible.notes:
            continue
        try:
            raw, _ = read_regular(root / rel, MAX_NOTE_BYTES)
        except (OSError, ReadRefused):
            continue
        if rel in in_sessions and not raw.startswith(f"---\n{VIEW_KEY}: ".encode()):
            continue
        if not is_ours(raw):
            out.append(rel)
    return tuple(dict.fromkeys(out))


def view_of(index: VaultIndex | IndexCopy, entry: VaultEntry, visibility: Visibility) -> LinkSnapshot:
    """The snapshot of the vault as this caller sees it (vaultd's own log left out)."""
    leave_out = frozenset({oplog.log_name(entry)})
    keys = tuple(entry.parent_keys)
    if not visibility.hides_anything:
        return snapshot(index, keys, leave_out)
    return snapshot(index, keys, leave_out, visibility.hidden, tuple(entry.private_paths))


def gather(
    index: VaultIndex | IndexCopy,
    entry: VaultEntry,
    visibility: Visibility,
    as_of: dt.date,
    read: dict[str, Document] | None = None,
    deadline: Deadline | None = None,
) -> LintInput:
    """The rules' input, which they walk within ``deadline``; ``read`` holds the documents
    :func:`read_documents` parsed (read here, within the same bounds, when not given).

    Raises:
        LimitExceeded: LIMIT, the deadline passed while the snapshot was built.
    """
    deadline = deadline if deadline is not None else Deadline.never()
    snap = view_of(index, entry, visibility)
    deadline.check()
    every_document = [a for a in snap.attachments if is_document(a)]
    if read is None:
        read = read_documents(Path(entry.path), every_document[:MAX_LINT_DOCUMENTS], min(MAX_LINT_DOCUMENT_SECONDS, deadline.left()))
    documents = {p: read[p] for p in every_document if p in read}
    folders: set[str] | None = None

    def exists(rel: str) -> bool:
        nonlocal folders
        if rel.endswith("/"):
            if folders is None:
                folders = {p.rpartition("/")[0] + "/" for p in (*index.notes, *index.attachments)}
                folders |= {f[: i + 1] for f in list(folders) for i, ch in enumerate(f) if ch == "/"}
            return rel in folders
        return rel in index.notes or rel in index.attachments or rel in index.skipped

    titles = {r.title for r in snap.notes.values()}

    def suggest(text: str) -> str | None:
        hint = index.suggester.suggest(text)
        return hint[0] if hint and hint[0] in titles else None

    def by_alias(text: str) -> list[str]:
        return [p for p in index.notes_by_alias(text) if p in snap.notes]

    return LintInput(
        snap=snap,
        as_of=as_of,
        schema=entry.schema,
        stamp_keys=tuple(entry.stamp_keys),
        domains=tuple(entry.domains),
        roles=entry.roles,
        resolve=index.resolver.resolve,
        exists=exists,
        suggest=suggest,
        by_alias=by_alias,
        documents=documents,
        unread_documents=len(every_document) - len(documents),
        edited_generated=edited_generated(Path(entry.path), entry, snap),
        deadline=deadline,
    )


def text_reader(root: Path, snap: LinkSnapshot) -> Callable[[str], str | None]:
    """A note's text, read once, when the file still holds the bytes the index parsed."""
    cache: dict[str, str | None] = {}

    def text_of(rel: str) -> str | None:
        if rel not in cache:
            record = snap.notes.get(rel)
            try:
                raw, _ = read_regular(root / rel, MAX_NOTE_BYTES)
            except (OSError, ReadRefused):
                raw = b""
            ok = record is not None and hashlib.sha256(raw).hexdigest() == record.sha256
            cache[rel] = raw.decode("utf-8", "replace") if ok else None
        return cache[rel]

    return text_of
