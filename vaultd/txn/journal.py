"""The transaction journal: ``<vault>/.vaultd/journal/<op-id>/``.

A journal is built in ``<op-id>.<tag>.tmp/`` (originals, then the manifest and its seal, each
fsynced) and renamed into place, so it appears whole or not at all; only then is a target
touched. The ``committed`` marker is written after the last target. A kept committed journal is
what ``op.undo`` reverses.

Only sealed journals are used (:mod:`vaultd.txn.seal`): a vault may arrive with journals of its
own, and what a journal says is written into the vault. :func:`open_journal` checks the folder,
the seal, and that every path is a plain vault-relative path and every original a file of this
journal, before anything reads an entry. A journal leaves the live namespace before it is
deleted: it is renamed to ``<op-id>.<tag>.dead`` and the folder synced, so a crash mid-delete
never leaves a journal that lost its marker but kept its manifest.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from vaultd import faults
from vaultd.errors import Unavailable
from vaultd.fsio import ReadRefused, Refusal, fsync_dir, is_temp_name, read_regular, replace, write_durable
from vaultd.policy import RESERVED_NAMES, check_new_path
from vaultd.txn import opids, seal
from vaultd.txn.plan import MAX_OP_BYTES, MAX_OP_FILES, Plan, sha256
from vaultd.vault.layout import BOOKMARKS_FILE, JOURNAL_DIR, STATE_DIR

if TYPE_CHECKING:
    from pathlib import Path

MANIFEST = "manifest.json"
MAC = "manifest.mac"
COMMITTED = "committed"
TRASH_PREFIX = ".trash/"  #: deletes move notes into Obsidian's trash (see vaultd/ops/_validate.py)
MAX_MANIFEST_BYTES = 16 * 1024 * 1024  #: MAX_OP_FILES (10,000) entries of 1 KiB paths fit with room to spare
MAC_BYTES = 64

_ORIGINAL = re.compile(r"orig-[0-9]{1,4}")  #: orig-0 .. orig-9999: one per entry, MAX_OP_FILES at most
_SHA = re.compile(r"[0-9a-f]{64}")
_TRANSIENT = re.compile(r"(?P<op_id>[0-9]{8}T[0-9]{6}(?:\.[0-9]{6})?-[0-9a-f]{8})\.(?P<tag>[0-9a-f]{32})\.(?P<state>tmp|dead)")


class Entry(msgspec.Struct, kw_only=True):
    path: str
    before_sha: str | None
    after_sha: str | None
    original: str | None  #: the journal file holding the bytes before, when the file existed
    mode: int | None = None  #: its permission bits then, so a rollback restores them too


class JournalRef(msgspec.Struct, kw_only=True):
    """Another vault's journal of the same operation: the vault's root (absolute) and the op id."""

    vault: str
    op_id: str


class Manifest(msgspec.Struct, kw_only=True):
    op_id: str
    op: str
    created: float  #: Unix time
    channel: str
    summary: str
    entries: list[Entry]
    undoes: str | None = None  #: the op id this operation reversed
    session: str | None = None  #: the agent session that made it (an agent may undo its own)
    proposal: str | None = None  #: the proposal a person applied with it
    proposed_by: str | None = None  #: who proposed it (channel:client)
    #: One operation over several vaults: this journal commits exactly when that one (the first
    #: vault's, whose marker is the operation's one commit point) commits; recovery asks it.
    commit_with: JournalRef | None = None
    joined: list[JournalRef] = msgspec.field(default_factory=list)  #: the other vaults' journals of the operation


class UntrustedJournal(Exception):
    """A journal folder this daemon did not write, or one changed since: never used, never deleted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_decoder = msgspec.json.Decoder(Manifest)


def journal_root(vault: Path) -> Path:
    return vault / JOURNAL_DIR


# -- the folders themselves -------------------------------------------------------------------


def folder_issue(path: Path) -> str | None:
    """Why ``path`` is not a real folder owned by this user, or None; raises FileNotFoundError."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by this daemon's user"
    return None


def own_folder(vault: Path, folder: Path, *, create: bool, shown: str, keeps: str) -> bool:
    """Whether a folder of vaultd's state in ``vault`` exists (made when ``create``), refusing one
    that is not vaultd's own; ``shown`` names it and ``keeps`` what it holds, in the refusal.

    Raises:
        Unavailable: UNAVAILABLE, the folder (or ``.vaultd/`` above it) is a symlink, not a
            folder, or another user's.
    """
    problem = runtime_issue(vault)
    if problem is None:
        try:
            problem = folder_issue(folder)
        except FileNotFoundError:
            if not create:
                return False
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fsync_dir(folder.parent)
            return True
    if problem is not None:
        raise Unavailable(f"{shown} {problem}; vaultd keeps {keeps} only in a folder of its own")
    return True


def runtime_issue(vault: Path) -> str | None:
    """Why the vault's ``.vaultd/`` or ``.vaultd/journal/`` must not be used, or None (either may
    be missing: the writer creates them)."""
    for rel in (STATE_DIR, JOURNAL_DIR):
        try:
            problem = folder_issue(vault / rel)
        except FileNotFoundError:
            return None
        if problem is not None:
            return f"{rel} {problem}"
    return None


def _tagged(key: bytes, op_id: str, state: str) -> str:
    return f"{op_id}.{seal.folder_tag(key, op_id, state)}.{state}"


def own_transient(key: bytes, name: str) -> str | None:
    """The op id of a journal folder this daemon was building or deleting, from its tagged name."""
    m = _TRANSIENT.fullmatch(name)
    if m is None or not opids.is_op_id(m["op_id"]):
        return None
    return m["op_id"] if seal.folder_tag(key, m["op_id"], m["state"]) == m["tag"] else None


# -- writing ----------------------------------------------------------------------------------


def write_journal(
    vault: Path,
    op_id: str,
    plan: Plan,
    channel: str,
    undoes: str | None = None,
    *,
    commit_with: JournalRef | None = None,
    joined: list[JournalRef] | None = None,
) -> Path:
    """Make the journal durable before any target is touched; returns its folder.

    Raises:
        Unavailable: UNAVAILABLE, the vault's .vaultd folder is not vaultd's own; nothing is
            changed.
    """
    key = seal.installed_key()
    problem = runtime_issue(vault)
    if problem is not None:
        raise Unavailable(f"{problem}; vaultd keeps its journal only in a folder of its own; nothing was changed")
    root = journal_root(vault)
    if not root.is_dir():
        # A journal folder that a power loss can take away protects nothing: make its name
        # durable in .vaultd/, and .vaultd/ in the vault, before the first journal is written.
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fsync_dir(root.parent)
        fsync_dir(vault)
    building = root / _tagged(key, op_id, "tmp")
    building.mkdir(mode=0o700)
    try:
        links = Links(commit_with, list(joined or []))
        return _fill(key, root, building, op_id, plan, channel, undoes, links)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        if (root / op_id).is_dir():  # renamed, but its folder fsync failed
            try:
                retire(key, root / op_id)
            except OSError:
                shutil.rmtree(root / op_id, ignore_errors=True)
        raise


@dataclass(frozen=True, slots=True)
class Links:
    """How a journal is tied to the other vaults' journals of one operation (none for most)."""

    commit_with: JournalRef | None = None
    joined: list[JournalRef] = field(default_factory=list)


def _fill(key: bytes, root: Path, building: Path, op_id: str, plan: Plan, channel: str, undoes: str | None, links: Links) -> Path:
    entries = []
    for i, change in enumerate(plan.effective()):
        original = None
        if change.before is not None:
            original = f"orig-{i}"
            write_durable(building / original, change.before)
        entries.append(
            Entry(path=change.path, before_sha=change.before_sha, after_sha=change.after_sha, original=original, mode=change.before_mode)
        )
    manifest = Manifest(
        op_id=op_id,
        op=plan.op,
        created=time.time(),
        channel=channel,
        summary=plan.summary,
        entries=entries,
        undoes=undoes,
        session=plan.session,
        proposal=plan.proposal,
        proposed_by=plan.proposed_by,
        commit_with=links.commit_with,
        joined=links.joined,
    )
    data = msgspec.json.encode(manifest)
    write_durable(building / MANIFEST, data)
    write_durable(building / MAC, seal.seal(key, data))
    fsync_dir(building)
    final = root / op_id
    replace(building, final)
    fsync_dir(root)
    return final


def mark_committed(folder: Path) -> None:
    """An empty marker: its existence is the commit, so only its folder entry needs syncing."""
    os.close(os.open(folder / COMMITTED, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    fsync_dir(folder)


def is_committed(folder: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(folder / COMMITTED).st_mode)
    except OSError:
        return False


# -- reading, only what the seal and the path rules allow ------------------------------------


def _read_file(folder: Path, name: str, limit: int) -> bytes:
    """A regular file of the journal, never through a symlink, at most ``limit`` bytes."""
    try:
        data, _ = read_regular(folder / name, limit)
    except FileNotFoundError:
        raise UntrustedJournal(f"it has no {name}") from None
    except ReadRefused as exc:
        why = {Refusal.LINK: "is a symbolic link", Refusal.NOT_REGULAR: "is not a regular file", Refusal.TOO_BIG: f"is over {limit} bytes"}[
            exc.refusal
        ]
        raise UntrustedJournal(f"its {name} {why}") from exc
    except OSError as exc:
        raise UntrustedJournal(f"its {name} cannot be read ({exc.strerror})") from exc
    return data


def path_issue(rel: str, created: bool) -> str | None:
    """Why a journal entry's path is not one a write could have had, or None.

    Every path must be plain and vault-relative (no absolute path, no ``.``, ``..`` or empty
    component, no NUL, no reserved folder other than the trash a delete moves into and
    Obsidian's bookmarks file a move rewrites, no temp name); a created file's path must pass
    the write rules of :func:`check_new_path` too.
    """
    if rel == "" or rel.startswith("/") or "\x00" in rel:
        return "a path is empty, absolute or holds a NUL byte"
    if rel == BOOKMARKS_FILE and not created:
        return None  # the one file of .obsidian/ an operation changes (never creates)
    inner = rel.removeprefix(TRASH_PREFIX)
    for comp in inner.split("/"):
        if comp in ("", ".", "..") or comp.casefold() in RESERVED_NAMES or is_temp_name(comp):
            return "a path is not a plain vault-relative path"
    if created:
        issues = check_new_path(inner, note=inner[-3:].lower() == ".md")
        if issues:
            return f"a created path breaks the path rules ({issues[0].message})"
    return None


def _entry_issue(entry: Entry) -> str | None:
    for sha in (entry.before_sha, entry.after_sha):
        if sha is not None and not _SHA.fullmatch(sha):
            return "an entry's hash is not a sha256"
    if entry.before_sha is None and entry.after_sha is None:
        return "an entry neither had nor leaves a file"
    if (entry.original is None) != (entry.before_sha is None):
        return "an entry's original does not match its hash before"
    if entry.original is not None and not _ORIGINAL.fullmatch(entry.original):
        return "an entry's original is not a plain name inside the journal folder"
    return path_issue(entry.path, created=entry.before_sha is None)


def open_journal(folder: Path, key: bytes | None = None) -> Manifest:
    """The manifest of a journal this daemon wrote, after every check.

    Raises:
        UntrustedJournal: the folder is not a private folder of this user, the manifest's seal
            does not match (another daemon's journal, or a forged or changed one), or an entry's
            path or original is not one this daemon could have written.
    """
    key = seal.installed_key() if key is None else key
    try:
        problem = folder_issue(folder)
    except OSError as exc:
        raise UntrustedJournal(f"the folder cannot be read ({exc.strerror})") from exc
    if problem is not None:
        raise UntrustedJournal(f"the folder {problem}")
    data = _read_file(folder, MANIFEST, MAX_MANIFEST_BYTES)
    if not seal.verify(key, data, _read_file(folder, MAC, MAC_BYTES)):
        raise UntrustedJournal("its seal does not match: written by another daemon, or changed since")
    try:
        manifest = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise UntrustedJournal("its manifest is sealed but unreadable by this version") from exc
    if manifest.op_id != folder.name or not opids.is_op_id(manifest.op_id):
        raise UntrustedJournal("its manifest names another operation")
    if len(manifest.entries) > MAX_OP_FILES:
        raise UntrustedJournal(f"it has over {MAX_OP_FILES} entries")
    if len({e.path for e in manifest.entries}) != len(manifest.entries):
        raise UntrustedJournal("it names a path twice")
    for entry in manifest.entries:
        problem = _entry_issue(entry)
        if problem is not None:
            raise UntrustedJournal(problem)
    for ref in [*([manifest.commit_with] if manifest.commit_with is not None else []), *manifest.joined]:
        if not os.path.isabs(ref.vault) or "\x00" in ref.vault or not opids.is_op_id(ref.op_id):
            raise UntrustedJournal("it names another vault's journal by an unusable path or op id")
    return manifest


def original_bytes(folder: Path, entry: Entry) -> bytes | None:
    """The bytes a file had before; they must hash to the entry's ``before_sha``."""
    if entry.original is None:
        return None
    data = _read_file(folder, entry.original, MAX_OP_BYTES)
    if sha256(data) != entry.before_sha:
        raise UntrustedJournal(f"its {entry.original} does not hold the bytes its manifest names")
    return data


def check_originals(folder: Path, manifest: Manifest) -> None:
    """Every original is whole, before a rollback starts writing any of them."""
    for entry in manifest.entries:
        original_bytes(folder, entry)


# -- listing and removing ---------------------------------------------------------------------


@dataclass
class Listing:
    live: list[Path] = field(default_factory=list)  #: named by op id, oldest first; not yet checked
    leftovers: list[Path] = field(default_factory=list)  #: this daemon's folders being built or deleted
    foreign: list[tuple[Path, str]] = field(default_factory=list)  #: anything else, and why


def scan(vault: Path, key: bytes) -> Listing:
    """Sort the journal folder's entries by what they are; reads names only."""
    out = Listing()
    root = journal_root(vault)
    if runtime_issue(vault) is not None:
        return out
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return out
    for name in names:
        if opids.is_op_id(name):
            out.live.append(root / name)
        elif own_transient(key, name) is not None:
            out.leftovers.append(root / name)
        else:
            out.foreign.append((root / name, "its name is not one this daemon gives a journal"))
    out.live.sort(key=lambda p: opids.sort_key(p.name))
    return out


def journal_names(vault: Path) -> list[str]:
    """The op ids that name a journal folder, oldest first: the listing alone, with no path
    object per journal (pruning lists the folder after every write)."""
    root = journal_root(vault)
    if runtime_issue(vault) is not None:
        return []
    try:
        names = os.listdir(root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted((n for n in names if opids.is_op_id(n)), key=opids.sort_key)


def journals(vault: Path) -> list[Path]:
    """Every journal folder named by an op id, oldest first; each still needs :func:`open_journal`."""
    root = journal_root(vault)
    return [root / name for name in journal_names(vault)]


def newest_op_id(vault: Path) -> str | None:
    """The newest sealed journal's op id: what keeps op ids increasing across restarts."""
    for folder in reversed(journals(vault)):
        try:
            return open_journal(folder).op_id
        except UntrustedJournal:
            continue
    return None


def retire(key: bytes, folder: Path, point: str | None = None) -> None:
    """Rename the journal out of the live namespace, sync, then delete it."""
    dead = folder.with_name(_tagged(key, folder.name, "dead"))
    replace(folder, dead)
    fsync_dir(folder.parent)
    if point is not None:
        faults.point(point)
    delete_leftover(dead)


def delete_leftover(folder: Path) -> None:
    """Delete a folder of this daemon's that is no journal any more (being built or retired)."""
    shutil.rmtree(folder, ignore_errors=True)
    fsync_dir(folder.parent)


def remove_journal(folder: Path) -> None:
    retire(seal.installed_key(), folder)
