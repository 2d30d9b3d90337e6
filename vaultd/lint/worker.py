"""A large vault's lint in a process of its own, so its rules never hold the daemon's GIL.

The rules are pure Python over a copy of the index: on a 20,000-note vault two to five seconds of
CPU that, in a daemon thread, held the interpreter for the event loop's every other turn (another
client's search waited ~100 ms at p95 while a lint ran). :func:`lint_elsewhere` sends the copy to
``python -m vaultd.lint.worker`` (:mod:`vaultd.worker`) and waits on the pipe without the GIL;
the worker rebuilds the copy, runs :func:`vaultd.lint.report.report` on it (the function a small
vault's lint runs in the daemon), reads the canvases, bases and notes' text it needs from the
vault itself, and answers the :class:`~protocol.methods.lint.LintResult`.

The copy travels compact: the note records in their cache form (msgpack), encoded a chunk at a
time so no single encoding holds the GIL for long, and the resolver's paths and the suggester's
titles in their order, so ties break as in the daemon. Measured on a generated 20,000-note vault
(2 cores, busy): see docs/performance.md, "A lint beside writes to the vault it lints".

``lint.fix`` sends the same job with ``fixes`` set: the worker answers the mechanical fixes
(:func:`vaultd.lint.fixes.fixes_of`) instead of the findings.

A vault under :data:`WORKER_MIN_NOTES` notes is linted in a daemon thread: starting a worker (and
importing lint into it) costs more than such a lint holds the GIL.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from protocol.methods.lint import MAX_LINT_SECONDS, LintCode, LintResult
from protocol.methods.vaults import VaultEntry
from vaultd.errors import LimitExceeded, Unavailable
from vaultd.lint.fixes import FixSet, fixes_of
from vaultd.lint.model import Deadline, overran
from vaultd.lint.report import report
from vaultd.memory import collector_paused
from vaultd.policy.visibility import Visibility
from vaultd.vault.index import IndexCopy, VaultIndex
from vaultd.vault.link_targets import LinkResolver, Suggester
from vaultd.vault.model import NoteRecord
from vaultd.vault.walk import FileStat, SkippedFile
from vaultd.worker import WorkerFailed, WorkerOverran, run_elsewhere, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

WORKER_MIN_NOTES = 1000  #: fewer notes than this are linted in a daemon thread
WORKER_ARGS = ("-m", "vaultd.lint.worker")  #: how a worker is started, after the interpreter; a test starts others
#: Past its deadline the worker stops itself (LIMIT); this much later it is killed (stuck in C code).
WORKER_GRACE_S = 5.0
CHUNK_NOTES = 250  #: note records encoded in one step (a few milliseconds of the GIL on a busy machine)


class LintJob(msgspec.Struct, array_like=True):
    """One lint: the copy of the index, whose view of it, and what to answer."""

    entry: VaultEntry
    private: bool  #: the caller does not see the vault's private paths
    as_of: str  #: YYYY-MM-DD
    code: LintCode | None
    note: str | None  #: lint this note only (already found in the copy)
    limit: int
    until: float  #: the deadline, on time.monotonic
    generation: int
    notes: list[msgspec.Raw]  #: chunks, each an encoded list[NoteRecord]
    attachments: list[FileStat]
    skipped: list[SkippedFile]
    files: list[str]  #: the resolver's paths, in its order
    titles: list[str]  #: the suggester's titles, in its order
    fixes: bool = False  #: answer the mechanical fixes (``lint.fix``), not the findings


class LintAnswer(msgspec.Struct, array_like=True):
    result: LintResult | None = None
    overran: str | None = None  #: the LIMIT message when the walk ran past its deadline
    fixes: FixSet | None = None  #: a fixes job's answer


_encode = msgspec.msgpack.Encoder().encode
_decode_job = msgspec.msgpack.Decoder(LintJob).decode
_decode_notes = msgspec.msgpack.Decoder(list[NoteRecord]).decode
_decode_answer = msgspec.msgpack.Decoder(LintAnswer).decode


def _chunks(notes: list[NoteRecord]) -> Iterator[msgspec.Raw]:
    for start in range(0, len(notes), CHUNK_NOTES):
        yield msgspec.Raw(_encode(notes[start : start + CHUNK_NOTES]))


def job_of(
    copy: IndexCopy,
    entry: VaultEntry,
    view: Visibility,
    when: dt.date,
    *,
    code: LintCode | None,
    note: str | None,
    limit: int,
    until: float,
    fixes: bool = False,
) -> LintJob:
    """The job for ``copy`` (run it in a thread: a chunk at a time, the event loop gets its turns)."""
    return LintJob(
        entry=entry,
        private=view.hides_anything,
        as_of=when.isoformat(),
        code=code,
        note=note,
        limit=limit,
        until=until,
        generation=copy.generation,
        notes=list(_chunks(list(copy.notes.values()))),
        attachments=list(copy.attachments.values()),
        skipped=list(copy.skipped.values()),
        files=copy.resolver.paths(),
        titles=copy.suggester.titles(),
        fixes=fixes,
    )


def copy_of(job: LintJob) -> IndexCopy:
    """The copy of the index the job was made from, rebuilt (in the worker)."""
    notes = {record.path: record for chunk in job.notes for record in _decode_notes(chunk)}
    return IndexCopy(
        origin=VaultIndex(Path(job.entry.path), None),
        generation=job.generation,
        notes=notes,
        attachments={a.path: a for a in job.attachments},
        skipped={s.path: s for s in job.skipped},
        resolver=LinkResolver(job.files),
        suggester=Suggester(job.titles),
    )


def answer(job: LintJob) -> LintAnswer:
    """The lint's answer, or why it stopped (in the worker)."""
    entry = job.entry
    view = Visibility(entry.private_paths if job.private else ())
    deadline = Deadline.at(job.until, MAX_LINT_SECONDS)
    try:
        with collector_paused():  # decoding 20,000 records with the collector on took ten times as long
            copy = copy_of(job)
        if job.fixes:
            when = dt.date.fromisoformat(job.as_of)
            return LintAnswer(fixes=fixes_of(copy, entry, view, when, code=job.code, note=job.note, deadline=deadline))
        result = report(
            copy, entry, view, dt.date.fromisoformat(job.as_of), code=job.code, note=job.note, limit=job.limit, deadline=deadline
        )
    except LimitExceeded as exc:
        return LintAnswer(overran=str(exc))
    return LintAnswer(result=result)


def lint_elsewhere(job: LintJob) -> LintResult:
    """The job's lint in a worker process; blocks (without the GIL) until it answers.

    Raises:
        LimitExceeded: LIMIT, the walk ran past its deadline.
        Unavailable: UNAVAILABLE, the worker could not start, died or answered something unreadable.
    """
    got = _run(job)
    if got.result is None:
        raise Unavailable("the lint could not be run: the lint worker answered nothing; retry")
    return got.result


def fixes_elsewhere(job: LintJob) -> FixSet:
    """The job's mechanical fixes (a job made with ``fixes=True``) in a worker process, as
    :func:`lint_elsewhere` runs a lint.

    Raises:
        LimitExceeded: LIMIT, the walk ran past its deadline.
        Unavailable: UNAVAILABLE, the worker could not start, died or answered something unreadable.
    """
    got = _run(job)
    if got.fixes is None:
        raise Unavailable("the lint could not be run: the lint worker answered nothing; retry")
    return got.fixes


def _run(job: LintJob) -> LintAnswer:
    """The worker's answer to ``job``.

    Raises:
        LimitExceeded: LIMIT, the walk ran past its deadline.
        Unavailable: UNAVAILABLE, the worker could not start, died or answered something unreadable.
    """
    timeout = max(0.0, job.until - time.monotonic()) + WORKER_GRACE_S
    try:
        out = run_elsewhere(WORKER_ARGS, _encode(job), timeout=timeout, what="lint", point="lint-rules")
    except WorkerOverran as exc:
        raise LimitExceeded(overran(MAX_LINT_SECONDS)) from exc
    except WorkerFailed as exc:
        raise Unavailable(f"the lint could not be run: {exc}; retry") from exc
    try:
        got = _decode_answer(out)
    except msgspec.DecodeError as exc:
        raise Unavailable(f"the lint could not be run: the lint worker answered something unreadable: {exc}; retry") from exc
    if got.overran is not None:
        raise LimitExceeded(got.overran)
    return got


def main() -> None:
    serve(lambda payload: _encode(answer(_decode_job(payload))))


if __name__ == "__main__":
    main()
