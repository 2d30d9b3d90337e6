"""The cache's SQLite file: its name, its schema, and what opening it trusts.

The file only saves work, so any file we cannot trust (another schema version, corruption, not a
database) is deleted and recreated on open, never fatal. It is opened without following symlinks
and must be a regular file of this user, mode 0600. The chunk index (:mod:`vaultd.retrieve.store`)
is trusted the same way: it prepares, connects and recreates its own file through this module.

Schema (``PRAGMA user_version`` = ``SCHEMA_VERSION * 1000 + RECORD_VERSION``)::

    note(id INTEGER PRIMARY KEY, path TEXT UNIQUE, size, mtime_ns, ino, type, domain, folder)
        one small row per note: the stat triple, and the filter fields search joins on
    record(id INTEGER PRIMARY KEY, data BLOB)
        the NoteRecord as msgpack, kept apart so the filter join never reads it
    tag(tag, id) PRIMARY KEY (tag, id) WITHOUT ROWID
        lowercased tags with every parent: ``a/b`` is stored as ``a`` and ``a/b``
    fts  fts5(title, meta, body; unicode61 remove_diacritics 2)   rowid = note.id
        the text (see fts_query.prepare); meta = aliases + description. Content is stored,
        since snippets need it.
    cjk  fts5(title, meta, body; ascii; contentless, contentless_delete)   rowid = note.id
        CJK bigrams of the same columns, only for notes that have CJK text.
"""

from __future__ import annotations

import enum
import hashlib
import os
import stat
from pathlib import Path

import apsw

from vaultd.errors import Unavailable
from vaultd.vault.model import RECORD_VERSION

SCHEMA_VERSION = 1
_USER_VERSION = SCHEMA_VERSION * 1000 + RECORD_VERSION
_SIDECARS = ("-wal", "-shm", "-journal")
#: How long a connection waits for a lock; only another process (or a checkpoint) holds one long.
_BUSY_TIMEOUT_MS = 5000
#: FTS5 buffers this many bytes of new postings before writing a segment (default 1 MiB). A
#: larger buffer makes a cold build about a third faster and leaves fewer segments to merge;
#: the memory is held only while a write transaction runs.
_FTS_HASH_BYTES = 32 << 20
#: After a checkpoint the log is truncated to this, so a cold build does not leave it huge.
_WAL_LIMIT_BYTES = 16 << 20
CACHE_KIB = 16384  #: each connection's page cache, allocated only as pages are used
_SCHEMA = f"""
CREATE TABLE note(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    type TEXT,
    domain TEXT,
    folder TEXT NOT NULL
);
CREATE TABLE record(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE tag(tag TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (tag, id)) WITHOUT ROWID;
CREATE INDEX tag_by_id ON tag(id);
CREATE VIRTUAL TABLE fts USING fts5(title, meta, body, tokenize='unicode61 remove_diacritics 2');
INSERT INTO fts(fts, rank) VALUES ('hashsize', {_FTS_HASH_BYTES});
CREATE VIRTUAL TABLE cjk USING fts5(title, meta, body, tokenize='ascii', content='', contentless_delete=1);
PRAGMA user_version = {_USER_VERSION};
"""
_TABLES = {"note", "record", "tag", "fts", "cjk"}
_WHAT = "index cache"  #: how messages name the file


class OpenOutcome(enum.StrEnum):
    """What ``IndexCache.open`` found."""

    CREATED = "created"  #: no usable file was there (absent or empty): a new, empty cache
    REUSED = "reused"  #: the file matched this schema and passed its check
    REBUILT_VERSION = "rebuilt-version"  #: another schema or record version: deleted, recreated
    REBUILT_CORRUPT = "rebuilt-corrupt"  #: unreadable or corrupt: deleted, recreated


def cache_file_name(vault_path: str) -> str:
    """The cache's file name for a vault: stable per path, new per schema version."""
    digest = hashlib.sha256(os.fsencode(vault_path)).hexdigest()[:16]
    return f"{digest}-v{SCHEMA_VERSION}.sqlite"


def _remove_sidecars(path: Path) -> None:
    for suffix in _SIDECARS:
        Path(str(path) + suffix).unlink(missing_ok=True)


def signed64(value: int) -> int:
    """Inode numbers are unsigned 64-bit; SQLite integers are signed."""
    return value - (1 << 64) if value >= 1 << 63 else value


def connect(path: Path) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
    con = apsw.Connection(str(path), flags=flags)
    con.set_busy_timeout(_BUSY_TIMEOUT_MS)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT_BYTES}")
    con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    return con


def _create(con: apsw.Connection) -> None:
    with con:
        con.execute(_SCHEMA)


def recreate(path: Path, schema: str = _SCHEMA, what: str = _WHAT) -> apsw.Connection:
    """Delete whatever is at ``path`` and start an empty database of ``schema`` there: the cache's
    way, and the chunk index's, of dropping a file they cannot trust (``what`` names it in errors)."""
    path.unlink(missing_ok=True)
    _remove_sidecars(path)
    prepare_file(path, what)
    con = connect(path)
    with con:
        con.execute(schema)
    return con


def open_versioned(path: Path, schema: str, version: int, what: str) -> apsw.Connection:
    """Open a derived SQLite file whose ``schema`` sets ``PRAGMA user_version`` to ``version``: an
    empty file gets the schema; a file of another version, or one SQLite cannot read, is started
    again, since everything in it is derived and rebuilt from the notes (``what`` names it)."""
    prepare_file(path, what)
    try:
        con = connect(path)
        found = con.execute("PRAGMA user_version").get
        if found == 0 and con.execute("SELECT count(*) FROM sqlite_schema").get == 0:
            with con:
                con.execute(schema)
            return con
        if found == version:
            return con
        con.close()
    except apsw.Error:
        pass
    return recreate(path, schema, what)


def prepare_file(path: Path, what: str = _WHAT) -> bool:
    """Create ``path`` 0600 if absent, without following symlinks; return whether it has content.

    Another user's file, or a symlink planted beside it, would let someone else feed or read the
    index, so each is refused rather than opened (``what`` names the file in the message).

    Raises:
        Unavailable: the path or a sidecar is a symlink, or not a regular file we own.
    """
    for suffix in _SIDECARS:
        if Path(str(path) + suffix).is_symlink():
            raise Unavailable(f"{what} {path}{suffix} is a symlink; remove it and retry")
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise Unavailable(f"cannot open {what} {path}: {exc.strerror}; remove it and retry") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise Unavailable(f"{what} {path} is not a regular file of this user; remove it")
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        return st.st_size > 0
    finally:
        os.close(fd)


def open_checked(path: Path, *, verify: bool) -> tuple[apsw.Connection, OpenOutcome, str | None]:
    """Open or create the cache at ``path``: the connection, what was found, and why it was rebuilt.

    Raises:
        Unavailable: (UNAVAILABLE) the path or a sidecar is a symlink, or is not a regular
            file of this user, or another process holds the database locked.
    """
    path = Path(path)
    had_content = prepare_file(path)
    if not had_content:
        _remove_sidecars(path)  # a log left beside an empty file must not be replayed into it
    outcome = OpenOutcome.REUSED if had_content else OpenOutcome.CREATED
    detail: str | None = None
    con: apsw.Connection | None = None
    try:
        con = connect(path)
        version = con.execute("PRAGMA user_version").get
        names = {row[0] for row in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        if version == 0 and not names:
            _create(con)
        elif version != _USER_VERSION:
            outcome, detail = OpenOutcome.REBUILT_VERSION, f"user_version {version}"
        elif not _TABLES <= names:
            outcome, detail = OpenOutcome.REBUILT_CORRUPT, "tables missing"
        elif verify and (check := con.execute("PRAGMA quick_check").get) != "ok":
            outcome, detail = OpenOutcome.REBUILT_CORRUPT, str(check)
    except (apsw.BusyError, apsw.LockedError) as exc:
        if con is not None:
            con.close()
        raise Unavailable(f"index cache {path} is in use by another process; is a second vaultd running?") from exc
    except apsw.Error as exc:
        outcome, detail = OpenOutcome.REBUILT_CORRUPT, f"{type(exc).__name__}: {exc}"
    if con is None or outcome in (OpenOutcome.REBUILT_VERSION, OpenOutcome.REBUILT_CORRUPT):
        if con is not None:
            con.close()
        con = recreate(path)
    return con, outcome, detail
