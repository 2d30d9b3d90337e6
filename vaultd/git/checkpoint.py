"""Checkpoints: each applied operation becomes one commit holding exactly the bytes it wrote.

The message names the operation, its summary (paths, never note text) and, in trailers, its op id,
the channel it came on and the agent that made it; the author is the repository's configured
user. The commit is made after the operation is durable and journaled, under the vault's writer.

Exactly once: a commit carries its op id in a ``Vaultd-Op`` trailer. At start-up, every kept
journal newer than the moment checkpoints were turned on whose op id no recent commit names is
committed then (its files as they are, where they still hold the operation's bytes); one whose
commit was made before a crash is found by its trailer and never committed twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from vaultd.fsio import is_temp_name
from vaultd.git import command, objects
from vaultd.git.repo import checked_branch, resolve
from vaultd.git.staging import Entry, StagedContent, StagingArea
from vaultd.txn import journal
from vaultd.txn.engine import read_current
from vaultd.txn.plan import MAX_OP_BYTES, Plan, sha256
from vaultd.vault.layout import SKIPPED_DIRS

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.git.record import Made, Recorder

log = structlog.get_logger("vaultd.git")

TRAILER_OP = "Vaultd-Op"
TRAILER_CHANNEL = "Vaultd-Channel"
TRAILER_AGENT = "Vaultd-Agent"
RECOVERY_DEPTH = 500  #: recent commits searched for op ids at start-up (more than the journal keeps)
MAX_SUBJECT = 120
MAX_BODY_PATHS = 50


def committable(rel: str) -> bool:
    """False for what vaultd never commits: anything in the folders it never indexes, watches or
    writes (its own, ``.git``, ``.obsidian``, ``.trash``: Obsidian's settings and trash are the
    person's to commit) and its temp files (see also :mod:`vaultd.git.exclude`)."""
    parts = rel.split("/")
    return not (any(p.casefold() in SKIPPED_DIRS for p in parts) or is_temp_name(parts[-1]))


@dataclass(slots=True)
class OpRecord:
    """One applied operation, as its commit records it."""

    op_id: str
    op: str
    summary: str
    channel: str
    agent: str | None = None  #: the agent's client and session, for an operation on the mcp channel
    files: dict[str, bytes | None] = field(default_factory=dict)  #: vault-relative path -> bytes written (None: removed)
    trailers: dict[str, str] = field(default_factory=dict)  #: more trailers (a sync's op ids)

    def message(self) -> str:
        subject = f"{self.op}: {self.summary}".replace("\n", " ")
        if len(subject) > MAX_SUBJECT:
            subject = subject[: MAX_SUBJECT - 1] + "…"
        paths = sorted(self.files)
        listed = "\n".join(f"  {p}" for p in paths[:MAX_BODY_PATHS])
        if len(paths) > MAX_BODY_PATHS:
            listed += f"\n  … and {len(paths) - MAX_BODY_PATHS} more"
        trailers = [f"{TRAILER_OP}: {self.op_id}", f"{TRAILER_CHANNEL}: {self.channel}"]
        if self.agent:
            trailers.append(f"{TRAILER_AGENT}: {self.agent}")
        trailers += [f"{k}: {v}" for k, v in self.trailers.items()]
        return f"{subject}\n\nvaultd operation {self.op_id} ({self.op}):\n{listed}\n\n" + "\n".join(trailers) + "\n"


def record_for(plan: Plan, op_id: str, *, channel: str, client: str, session: str | None) -> OpRecord:
    """The record of an operation the engine just applied: exactly the bytes it wrote."""
    agent = f"{client} (session {session})" if channel == "mcp" and session else (client if channel == "mcp" else None)
    record = OpRecord(
        op_id=op_id,
        op=plan.op,
        summary=plan.summary,
        channel=channel,
        agent=agent,
        files={c.path: c.after for c in plan.effective()},
    )
    if plan.proposal is not None:
        record.trailers["Vaultd-Proposal"] = f"{plan.proposal} by {plan.proposed_by}"
    return record


def entries_for(recorder: Recorder, files: dict[str, bytes | None]) -> dict[str, Entry]:
    """Repository entries for vault files: blobs stored from the exact bytes, modes from disk."""
    repo = recorder.repo
    kept = {rel: data for rel, data in files.items() if committable(rel)}
    ignored = _ignored(recorder, list(kept))
    stored = objects.write_blobs(
        repo, [(repo.path(rel), data) for rel, data in sorted(kept.items()) if data is not None and rel not in ignored]
    )
    out: dict[str, Entry] = {}
    for rel, data in kept.items():
        if rel in ignored:
            continue
        path = repo.path(rel)
        out[path] = None if data is None else (objects.file_mode(repo.top / path), stored[path])
    return out


def _ignored(recorder: Recorder, rels: list[str]) -> set[str]:
    """The paths git ignores and does not track (the person chose to keep them out). A path this
    keeper committed since the mirror was last rebuilt is tracked: git is not asked again."""
    repo = recorder.repo
    rels = [r for r in rels if repo.path(r) not in recorder.tracked]
    if not rels:
        return set()
    paths = "\0".join(repo.path(r) for r in rels) + "\0"
    out = command.run(
        repo.top,
        "check-ignore",
        "-z",
        "--stdin",
        input=paths.encode("utf-8", "surrogateescape"),
        env={**recorder.env, "GIT_LITERAL_PATHSPECS": "0"},
        ok=(0, 1),
    )
    return {p.decode("utf-8", "surrogateescape")[len(repo.prefix) :] for p in out.stdout.split(b"\0") if p}


def commit_op(recorder: Recorder, staging: StagingArea, record: OpRecord) -> Made | None:
    """Commit one operation's files; None when they already are the head's.

    Raises:
        StagedContent: the person staged content under the vault's folder; nothing was committed.
        Conflict: CONFLICT, detached HEAD, a merge or rebase in progress, or a branch that kept moving.
    """
    entries = entries_for(recorder, record.files)
    if not entries:
        return None
    branch = checked_branch(recorder.repo, recorder.vault_id)
    head = recorder.guess_head(branch)
    staged = staging.staged(head)
    if staged:
        actual = resolve(recorder.repo, branch)  # the guess may be stale: a person's commit moved the branch
        staged = staging.staged(actual) if actual != head else staged
    if staged:
        raise StagedContent(staged)
    made = recorder.commit(entries, record.message(), reason=f"{record.op} {record.op_id}")
    if made is not None:
        staging.refresh(entries, made.commit)  # before the receipt: git status is coherent when the caller hears back
    return made


# -- after a crash ---------------------------------------------------------------------------


def committed_op_ids(recorder: Recorder, depth: int = RECOVERY_DEPTH) -> set[str]:
    """Op ids named by the branch's recent commits."""
    out = command.run(
        recorder.repo.top,
        "log",
        "-n",
        str(depth),
        f"--format=%(trailers:key={TRAILER_OP},valueonly,separator=%x00)%x00",
        "HEAD",
        ok=(0, 128),
    )
    return {t.strip() for t in out.text.split("\0") if t.strip()}


def from_journal(root: Path, folder: Path, log_rel: str | None = None) -> OpRecord | None:
    """An operation's record rebuilt from its kept journal: each file as it is now, where it still
    holds what the operation wrote (a file changed since is left to a later commit), and vaultd's
    log as it is (the operation's line was appended after the journal committed)."""
    try:
        manifest = journal.open_journal(folder)
    except (OSError, journal.UntrustedJournal):
        return None
    files: dict[str, bytes | None] = {}
    for entry in manifest.entries:
        current = read_current(root, entry.path)
        if sha256(current) == entry.after_sha:
            files[entry.path] = current
    if log_rel is not None and files and (log := read_current(root, log_rel, MAX_OP_BYTES)) is not None:
        files[log_rel] = log
    return OpRecord(op_id=manifest.op_id, op=manifest.op, summary=manifest.summary, channel=manifest.channel, files=files)


def uncommitted(root: Path, recorder: Recorder, since: str, log_rel: str | None = None) -> list[OpRecord]:
    """Kept, committed operations newer than ``since`` that no recent commit records, oldest first."""
    candidates = [f for f in journal.journals(root) if f.name > since and journal.is_committed(f)]
    if not candidates:
        return []
    done = committed_op_ids(recorder)
    records = []
    for folder in candidates:
        if folder.name in done:
            continue
        record = from_journal(root, folder, log_rel)
        if record is not None and record.files:
            records.append(record)
    return records


def checkpoints_since(folder: Path, now_id: str) -> str:
    """When checkpoints were turned on (an op-id prefix): operations before it are never committed
    by recovery. Written once, durably; read back afterwards."""
    path = folder / "since"
    try:
        return path.read_text(encoding="ascii").strip() or now_id
    except FileNotFoundError:
        pass
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = folder / "since.tmp"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write(now_id + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return now_id


def clear_since(folder: Path) -> None:
    (folder / "since").unlink(missing_ok=True)
