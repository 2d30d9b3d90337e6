"""One vault's git keeper: its checkpoints, its quiet snapshots, and what they wait for.

The vault's runtime holds one keeper. It commits only under the vault's writer (checkpoints are
called by the operation runner, which holds it; snapshots take it), always in a worker thread, so
git never blocks the event loop and never races a write. Reads of history need neither.

The watcher reaches the keeper through one call, :meth:`GitKeeper.saw`, made for each batch of
changed paths: it only notes the time, and the snapshot task does the rest once the vault has been
quiet for the vault's ``snapshot_quiet_s``.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import TYPE_CHECKING

import anyio
import structlog

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.git_settings import GitMode
from vaultd.errors import Conflict, Unavailable, VaultError
from vaultd.git import exclude, raw_copies
from vaultd.git.record import GIT_STATE_DIR, INTEGRATION_RECORD, Recorder
from vaultd.git.repo import Repo, find, resolve
from vaultd.git.staging import StagedContent, StagingArea, catch_up, describe
from vaultd.vault import oplog
from vaultd.waits import first_of

# The commits themselves (checkpoints, snapshots, a sync's integration) bring the write path with
# them (the transaction engine, the policy, the gate's diffs): they are imported where a commit is
# made, so a vault outside git, or one only indexed and read, never loads them.
if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.vaults import VaultEntry
    from vaultd.git.checkpoint import OpRecord
    from vaultd.git.snapshot import Snapshot
    from vaultd.txn.plan import Plan

log = structlog.get_logger("vaultd.git")

MAX_PENDING = 100  #: operations kept in memory whose commit waits (staged content, a busy repository)


def op_id_prefix_now(now: dt.datetime | None = None) -> str:
    """An op-id prefix for now: every operation id made later sorts after it."""
    when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return f"{when:%Y%m%dT%H%M%S}.{when.microsecond:06d}"


class GitKeeper:
    def __init__(self, root: Path, entry: VaultEntry, writer: anyio.Lock) -> None:
        self.root = root
        self.entry = entry
        self.writer = writer
        self.pending: list[OpRecord] = []
        self.problem: str | None = None  #: why the last commit could not be made, for doctor
        self.last_snapshot: Snapshot | None = None
        self._repo: Repo | None = None
        self._recorder: Recorder | None = None
        self._staging: StagingArea | None = None
        self._last_change = 0.0
        self._wake = anyio.Event()
        self._stop = anyio.Event()
        self._running = False

    @property
    def mode(self) -> GitMode:
        return self.entry.git

    # -- the repository ----------------------------------------------------------------------

    def repo(self) -> Repo:
        """The repository holding the vault (worker thread).

        Raises:
            Unavailable: UNAVAILABLE, the vault is in no git repository, or git is missing.
        """
        if self._repo is None or not (self._repo.git_dir / "HEAD").exists():
            found = find(self.root)
            if found is None:
                self._repo = self._recorder = self._staging = None
                raise Unavailable(f"vault {self.entry.id!r} is not in a git repository (run 'git init' in {self.root})")
            self._repo, self._recorder, self._staging = found, Recorder(self.root, found, self.entry.id), StagingArea(found)
        return self._repo

    def tools(self) -> tuple[Recorder, StagingArea]:
        self.repo()
        assert self._recorder is not None and self._staging is not None
        return self._recorder, self._staging

    def prepare(self) -> None:
        """At start-up, after journal recovery (worker thread): keep machine files out of git and
        commit what a crash left uncommitted. A sync's integration a stop interrupted is finished
        first, whatever the mode: until it is, the branch, the files and the person's index may
        disagree, and the operations it wrote must not be committed as checkpoints of their own."""
        try:
            self.finish_integration()
        except (VaultError, OSError) as exc:
            reason = getattr(exc, "message", None) or str(exc)
            self.problem = f"a sync a stop interrupted could not be finished yet ({reason}); the next sync finishes it"
            log.warning("an interrupted sync could not be finished; the next sync tries again", vault=self.entry.id, error=reason)
        if self.mode is GitMode.OFF:
            return
        try:
            recorder, _ = self.tools()
            from vaultd.git import checkpoint  # the write path, loaded for a vault in git

            exclude.ensure(recorder.repo)
            since = checkpoint.checkpoints_since(self.root / GIT_STATE_DIR, op_id_prefix_now())
            log_rel = oplog.log_name(self.entry)
            self.pending = checkpoint.uncommitted(self.root, recorder, since, log_rel)[-MAX_PENDING:]
        except (VaultError, OSError) as exc:
            self.problem = getattr(exc, "message", None) or str(exc)
            log.warning("git checkpoints cannot start", vault=self.entry.id, error=self.problem)
            return
        if self.pending:
            log.info("committing operations a stop left uncommitted", vault=self.entry.id, ops=[r.op_id for r in self.pending])
            self._flush(None)
        try:
            recorder, staging = self.tools()
            head = resolve(recorder.repo, "HEAD")
            fixed = catch_up(staging, head) if head is not None else []
        except (VaultError, OSError) as exc:
            log.warning("the staging area could not be checked", vault=self.entry.id, error=getattr(exc, "message", None) or str(exc))
            return
        if fixed:
            log.info("refreshed staging entries a stop left behind vaultd's last commit", vault=self.entry.id, paths=len(fixed))

    def finish_integration(self) -> list[str]:
        """Finish a sync's integration a stop interrupted, if one is recorded (worker thread; at the
        vault's take, or under the writer before a sync); the paths it wrote."""
        if not os.path.lexists(self.root / INTEGRATION_RECORD):
            return []
        from vaultd.git import integration  # the write path, loaded when a sync was interrupted

        recorder, staging = self.tools()
        return integration.resume(self.root, recorder, staging, self.entry.id) or []

    def configure(self, entry: VaultEntry) -> None:
        """New settings from the registry (worker thread)."""
        from vaultd.git import checkpoint  # the write path

        before, self.entry = self.entry.git, entry
        folder = self.root / GIT_STATE_DIR
        if entry.git is GitMode.OFF:
            checkpoint.clear_since(folder)
            self.pending.clear()
        elif before is GitMode.OFF:
            checkpoint.clear_since(folder)
            self.prepare()
        if entry.git is GitMode.SNAPSHOT:
            self.saw(set())

    # -- checkpoints -------------------------------------------------------------------------

    async def checkpoint(self, record: OpRecord) -> tuple[str | None, list[Issue]]:
        """Commit an applied operation (the caller holds the vault's writer): its commit, or None
        and the warnings saying why not (the operation stands either way)."""
        if self.mode is GitMode.OFF:
            return None, []
        return await anyio.to_thread.run_sync(self._flush, record)

    async def checkpoint_plan(
        self, plan: Plan, op_id: str, *, channel: str, client: str, session: str | None, log_rel: str | None
    ) -> tuple[str | None, list[Issue]]:
        """:meth:`checkpoint` for a plan the runner just applied; the log line it appended (if
        any) is part of the same commit."""
        if self.mode is GitMode.OFF:
            return None, []

        from vaultd.git import checkpoint  # loaded with the runner's plan already
        from vaultd.txn.engine import read_current
        from vaultd.txn.plan import MAX_OP_BYTES

        def build() -> OpRecord:
            record = checkpoint.record_for(plan, op_id, channel=channel, client=client, session=session)
            record.files = {rel: data for rel, data in record.files.items() if not raw_copies.left_out(rel, self.entry)}
            if log_rel is not None:
                record.files[log_rel] = read_current(self.root, log_rel, MAX_OP_BYTES)
            return record

        return await self.checkpoint(await anyio.to_thread.run_sync(build))

    def _flush(self, record: OpRecord | None) -> tuple[str | None, list[Issue]]:
        from vaultd.git import checkpoint  # the write path

        queue = [*self.pending, *([record] if record is not None else [])]
        self.pending = []
        made_for_record: str | None = None
        for i, item in enumerate(queue):
            try:
                recorder, staging = self.tools()
                made = checkpoint.commit_op(recorder, staging, item)
            except StagedContent as exc:
                self._hold(queue[i:])
                message = (
                    f"not committed to git: you have staged changes in the vault's paths ({describe(exc.paths)}); vaultd never commits "
                    "what you staged: commit or unstage them, and the next operation commits this one"
                )
                self.problem = message
                return None, [Issue(code=IssueCode.R01, severity=Severity.WARNING, message=message)]
            except (VaultError, OSError) as exc:
                self._hold(queue[i:])
                reason = getattr(exc, "message", None) or str(exc)
                self.problem = reason
                log.warning("checkpoint not committed", vault=self.entry.id, op_id=item.op_id, error=reason)
                message = f"not committed to git: {reason}; the write stands and the next operation commits it"
                return None, [Issue(code=IssueCode.R03, severity=Severity.WARNING, message=message)]
            if item is record and made is not None:
                made_for_record = made.commit
        self.problem = None
        return made_for_record, []

    def _hold(self, records: list[OpRecord]) -> None:
        if len(records) > MAX_PENDING:
            log.warning("dropped operations whose commit waited too long", vault=self.entry.id, dropped=len(records) - MAX_PENDING)
        self.pending = records[-MAX_PENDING:]

    # -- snapshots ---------------------------------------------------------------------------

    def saw(self, rels: set[str]) -> None:
        """The watcher's one call: files changed (on the event loop; cheap)."""
        if self.mode is GitMode.SNAPSHOT:
            self._last_change = time.monotonic()
            self._wake.set()

    def snapshot_sync(self, *, force: bool) -> Snapshot:
        """Commit hand edits now (worker thread; the caller holds the writer)."""
        from vaultd.git import snapshot  # the write path

        recorder, staging = self.tools()
        entry = self.entry
        taken = snapshot.take(
            recorder, staging, quiet_s=entry.snapshot_quiet_s, force=force, leave_out=lambda rel: raw_copies.left_out(rel, entry)
        )
        self.last_snapshot = taken
        return taken

    def commit_local(self) -> None:
        """Before a sync (worker thread; the caller holds the writer): commit what waits, then every
        hand edit, so what is pushed is everything the vault holds.

        Raises:
            StagedContent: the person staged content under the vault's folder.
            Conflict: CONFLICT, a file changed while it was read, detached HEAD, a merge in progress.
        """
        from vaultd.git import checkpoint  # the write path

        recorder, staging = self.tools()
        while self.pending:
            checkpoint.commit_op(recorder, staging, self.pending[0])
            self.pending.pop(0)
        if self.snapshot_sync(force=True).waiting:
            raise Conflict(f"vault {self.entry.id!r}: a file changed while sync read it; nothing was synced, run it again")

    async def run(self) -> None:
        """The snapshot task: after each quiet period that followed a change, one snapshot."""
        if self._running:
            return
        self._running = True
        try:
            await self._snapshots()
        finally:
            self._running = False

    async def _snapshots(self) -> None:
        self.saw(set())  # hand edits made while vaultd was not running
        while not self._stop.is_set():
            await first_of(self._stop, self._wake)
            if self._stop.is_set():
                return
            self._wake = anyio.Event()
            if self.mode is not GitMode.SNAPSHOT:
                continue
            while (left := self._last_change + self.entry.snapshot_quiet_s - time.monotonic()) > 0:
                with anyio.move_on_after(left):
                    await self._stop.wait()
                if self._stop.is_set():
                    return
            await self._snapshot_when_quiet()

    async def _snapshot_when_quiet(self) -> None:
        try:
            async with self.writer:
                taken = await anyio.to_thread.run_sync(lambda: self.snapshot_sync(force=False))
        except StagedContent as exc:
            self.problem = f"snapshot waits: you have staged changes in the vault's paths ({describe(exc.paths)})"
            log.warning("snapshot not committed: staged content", vault=self.entry.id, paths=len(exc.paths))
            return
        except (VaultError, OSError) as exc:
            self.problem = getattr(exc, "message", None) or str(exc)
            log.warning("snapshot failed", vault=self.entry.id, error=self.problem)
            return
        if taken.waiting:
            self.saw(set())  # a file is still being written: wait another quiet period
        elif taken.made is not None:
            self.problem = None
            log.info("snapshot committed", vault=self.entry.id, commit=taken.made.commit, files=len(taken.paths))

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    async def sleep(self, seconds: float) -> None:
        """Sleep, or return early when the vault is released."""
        with anyio.move_on_after(seconds):
            await self._stop.wait()

    def require_mode(self) -> None:
        """A snapshot is a commit: it needs a vault that keeps checkpoints or snapshots.

        Raises:
            Conflict: CONFLICT, the vault's git mode is off.
        """
        if self.mode is GitMode.OFF:
            raise Conflict(
                f"vault {self.entry.id!r} does not record git history (git: off); "
                f"turn it on with 'vaultctl vault git {self.entry.id} --mode checkpoint'"
            )
