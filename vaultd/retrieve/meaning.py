"""Meaning: passage vectors filled in behind the chunk index, and a question's nearest passages.

Once a vault's chunk index is ready, a filler thread hands its passages, a few at a time, to the
worker process (:mod:`vaultd.retrieve.embed_worker`) and stores the vectors it answers
(:mod:`vaultd.retrieve.vectors`): the recently changed notes' passages first, then every note's
first passage, then every note's second, and so on. It wakes whenever the chunk index takes a
change, and follows what the change did to the passage keys (:meth:`ChunkStore.take_changes`)
instead of listing the whole chunk index again; the passages of a small change (a write, an
edit) go ahead of it, embedded in the daemon's own process by :mod:`vaultd.retrieve.fresh`, so a
changed note is embedded again within seconds of its write however busy the worker is; a write
never waits for it. The worker leaves when nothing is left to embed (its memory goes back to the
system) and is started again by the next work. On restart the stored vectors are matched by
passage key: unchanged passages are never embedded again, and keys no passage carries are
dropped.

A question is embedded in the daemon's own process (a few tens of milliseconds for the shipped
model; the last few hundred questions are remembered), so it never queues behind the worker's
batches. Ranking uses whichever passages have vectors; status says how many do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import structlog

from vaultd import memory
from vaultd.retrieve import backend as backends
from vaultd.retrieve.embed_worker import WORKER_ENV, EmbedAnswer, EmbedJob, read_frame, write_frame
from vaultd.retrieve.fresh import FreshLane
from vaultd.retrieve.vectors import VectorStore, file_name

# numpy comes with the meaning extra: it is imported where it is used, so a daemon without it starts.
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy as np

    from vaultd.retrieve.store import ChunkStore

log = structlog.get_logger("vaultd.retrieve")

BATCH = 8  #: passages a job: about two seconds of the shipped model on a busy core
IDLE_WAIT_S = 5.0  #: a filler with nothing to do looks again after this (or at the next change)
RETRY_S = 30.0  #: a worker that failed is started again after this
#: The worker leaves after this long with nothing to embed (``VAULTD_MEANING_IDLE_S`` sets it, for
#: tests), and is started again by the next passage the fresh lane does not take.
WORKER_IDLE_S = 30.0
IDLE_ENV = "VAULTD_MEANING_IDLE_S"
#: Keys no passage carries any more are dropped from the vectors this many at a time (each drop
#: copies the matrix); until then they only cost a candidate slot, and a restart drops them all.
DROP_AT = 256
#: An idle filler hands the heap's free pages back to the system at most this often: a listing,
#: the questions' threads and the model's buffers free what they used, and glibc keeps it.
TRIM_S = 30.0
WORKER_TIMEOUT_S = 300.0
"""A job unanswered after this long with no CPU used meanwhile, or after this many seconds of
the worker's CPU, kills the worker (see ``_watch``)."""
_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
MAX_QUERIES_REMEMBERED = 512
#: How the worker is started, after the interpreter; a test starts others.
WORKER_ARGS = ("-m", "vaultd.retrieve.embed_worker")


class WorkerFailed(Exception):
    """The worker could not start, did not load its model, or ended or failed on a job."""


class Worker:
    """The worker process, started on the first job and again after it fails."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._closed = False
        self._decoder = msgspec.msgpack.Decoder(EmbedAnswer)

    def _start(self) -> subprocess.Popen[bytes]:
        env = {**os.environ, **WORKER_ENV}
        proc = subprocess.Popen([sys.executable, *WORKER_ARGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True)
        try:
            ready = self._answer(proc)
        except WorkerFailed:
            self._kill(proc)
            raise
        if ready.error:
            self._kill(proc)
            raise WorkerFailed(ready.error)
        log.info("meaning worker started", pid=proc.pid)
        return proc

    def _answer(self, proc: subprocess.Popen[bytes]) -> EmbedAnswer:
        assert proc.stdout is not None
        answered = threading.Event()
        threading.Thread(target=_watch, args=(proc, answered), name="vaultd-meaning-watch", daemon=True).start()
        try:
            frame = read_frame(proc.stdout)  # type: ignore[arg-type]
        except (OSError, ValueError) as exc:
            raise WorkerFailed(f"the worker's answer was broken ({exc})") from exc
        finally:
            answered.set()
        if frame is None:
            raise WorkerFailed(f"the worker ended (exit {proc.poll()})")
        return self._decoder.decode(frame)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for ``texts``, one row each.

        Raises:
            WorkerFailed: the worker could not answer (it is stopped; the next job starts another).
        """
        import numpy as np

        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
            if self._closed:  # closed while it was starting
                self.close()
                raise WorkerFailed("the meaning filler is stopping")
        proc = self._proc
        assert proc.stdin is not None
        try:
            write_frame(proc.stdin, msgspec.msgpack.encode(EmbedJob(texts)))  # type: ignore[arg-type]
            answer = self._answer(proc)
        except (OSError, WorkerFailed) as exc:
            self.close()
            raise WorkerFailed(str(exc)) from exc
        if answer.error:
            raise WorkerFailed(answer.error)
        if answer.rows != len(texts):
            self.close()
            raise WorkerFailed(f"the worker answered {answer.rows} vectors for {len(texts)} passages")
        return np.frombuffer(answer.data, dtype=np.float32).reshape(answer.rows, answer.dims)

    def leave(self) -> bool:
        """End the process while there is nothing to embed, so its memory (its interpreter, its
        copy of the model's pages, its buffers) goes back to the system; the next job starts
        another. Whether one was running."""
        proc, self._proc = self._proc, None
        if proc is None:
            return False
        self._kill(proc)
        return True

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        """Stop the worker at once: it holds nothing that is not in the vector file already."""
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None:
            self._kill(proc)


def _watch(proc: subprocess.Popen[bytes], answered: threading.Event, timeout: float = WORKER_TIMEOUT_S) -> None:
    """Kill a worker whose job is unanswered and that is stuck or spinning: it used no CPU for
    ``timeout``, or more than ``timeout`` seconds of CPU on this one job (a job is a few seconds
    of the model's). One that works slowly goes on: it runs only on idle cores, and on a busy
    machine a batch may take it longer than ``timeout`` of wall time."""
    first = last = _cpu_ticks(proc.pid)
    while not answered.wait(timeout):
        now = _cpu_ticks(proc.pid)
        stuck = now is None or now == last
        spinning = now is not None and first is not None and (now - first) / _TICKS_PER_S > timeout
        if stuck or spinning:
            proc.kill()
            return
        last = now


def _cpu_ticks(pid: int) -> int | None:
    """The process's CPU time so far (every thread's, in clock ticks), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class Coverage:
    model: str
    covered: int  #: distinct passages with a vector
    total: int  #: distinct passages in the chunk index
    embedded: int  #: passages embedded since the daemon started
    per_second: float | None  #: the filler's recent rate
    note: str = ""  #: why it is not filling, when it is not


class Meaning:
    """One vault's vectors, and the thread that fills them from its chunk index."""

    def __init__(self, store: ChunkStore, choice: backends.Choice) -> None:
        self.store = store
        self.choice = choice
        self.vectors = VectorStore(store.path.with_name(file_name(store.path.name, choice.key)))
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker = Worker()
        self._idle_s = _idle_seconds()
        self._total = 0
        self._missing: set[bytes] = set()  #: listed keys without a vector yet
        self._dead: set[bytes] = set()  #: keys no passage carries any more, their vectors not yet dropped
        self._returned: deque[bytes] = deque()  #: keys the fresh lane gave back
        self._embedded = 0
        self._rate: float | None = None
        self._note = ""
        self._fresh = FreshLane(store, self.vectors, lambda: question_model(choice), self._added, self._left)
        self._thread = threading.Thread(target=self._run, name="vaultd-meaning", daemon=True)
        self._thread.start()

    def changed(self, paths: Sequence[str] = ()) -> None:
        """The chunk index took a change (of ``paths``, when they are known): look again at once,
        the passages of a small change first."""
        self._fresh.offer(paths)
        self._wake.set()

    def _added(self, keys: list[bytes]) -> None:
        self._missing.difference_update(keys)

    def _left(self, keys: list[bytes]) -> None:
        """Keys the fresh lane claimed and did not embed are the filler's again, first."""
        self._returned.extend(keys)
        self._wake.set()

    def coverage(self) -> Coverage:
        embedded = self._embedded + self._fresh.embedded
        covered = max(0, self._total - len(self._missing))
        return Coverage(self.choice.key, covered, self._total, embedded, self._rate, self._note)

    def _list(self) -> deque[bytes]:
        """Every passage key in fill order: what the filler has left to embed (once at start,
        and again only when the chunk index changed more than it remembers)."""
        keys = self.store.listing()
        self.vectors.keep_only(set(keys))
        self._dead.clear()
        pending = deque(k for k in keys if k not in self.vectors)
        self._missing = set(pending)
        self._total = len(keys)
        del keys
        memory.give_back()  # the listing's rows, freed: tens of MB at 40,000 passages
        return pending

    def _follow(self, pending: deque[bytes]) -> bool:
        """Follow the chunk index's changes since the last look: the keys that appeared and
        vanished counted, the written notes' passages put at the head of what is left. False
        when the chunk index changed more than it remembered (list everything again)."""
        changes = self.store.take_changes()
        if changes.overflowed:
            return False
        self._total += len(changes.appeared) - len(changes.vanished)
        self._dead.difference_update(changes.appeared)
        if changes.vanished:
            self._missing.difference_update(changes.vanished)
            self._dead.update(changes.vanished)
            if len(self._dead) >= DROP_AT:
                self.vectors.drop(self._dead)
                self._dead.clear()
        paths = list(dict.fromkeys(changes.paths))
        front = [k for k in self.store.keys_of_paths(paths) if k not in self.vectors and k not in self._missing]
        pending.extendleft(reversed(front))
        self._missing.update(front)
        return True

    def _take_returned(self, pending: deque[bytes]) -> None:
        back = []
        while self._returned:
            key = self._returned.popleft()
            if key in self._missing and key not in self.vectors:
                back.append(key)
        pending.extendleft(reversed(back))

    def _run(self) -> None:
        seen = -1
        listed = False
        idle_since: float | None = None
        trimmed = time.monotonic()
        trimmed_at = (-1, -1)  #: the writes and questions as of the last trim
        pending: deque[bytes] = deque()
        while not self._stop.is_set():
            try:
                writes = self.store.writes
                if not listed:
                    seen = writes
                    pending = self._list()
                    listed = True
                elif writes != seen:  # followed, never listed again, while the record holds
                    seen = writes
                    if not self._follow(pending):
                        listed = False
                        continue
                self._take_returned(pending)
                if not pending:
                    self._rate = None
                    now = time.monotonic()
                    idle_since = now if idle_since is None else idle_since
                    if now - idle_since >= self._idle_s and self._worker.leave():
                        log.info("meaning worker left: nothing to embed", vault_passages=self._total)
                    busy = (self.store.writes, _embedded_questions)
                    if busy != trimmed_at and now - trimmed >= TRIM_S:  # only after work freed something
                        memory.give_back()
                        trimmed, trimmed_at = now, busy
                    self._wake.wait(min(IDLE_WAIT_S, max(self._idle_s, 0.2)))
                    self._wake.clear()
                    continue
                idle_since = None
                batch: list[bytes] = []
                while pending and len(batch) < BATCH:
                    key = pending.popleft()
                    if key not in self.vectors and key not in self._fresh.claimed:
                        batch.append(key)
                if not batch:
                    continue
                texts = self.store.texts_of(batch)
                keys = [k for k in batch if k in texts]
                started = time.monotonic()
                vectors = self._worker.embed([texts[k] for k in keys]) if keys else None
                if vectors is not None and not self._stop.is_set():
                    self._embedded += self.vectors.add(keys, vectors)
                    self._missing.difference_update(keys)
                    rate = len(keys) / max(time.monotonic() - started, 1e-3)
                    self._rate = rate if self._rate is None else 0.8 * self._rate + 0.2 * rate
                self._missing.difference_update(k for k in batch if k not in texts)  # gone meanwhile
                self._note = ""
            except WorkerFailed as exc:
                self._note = f"the meaning model is not filling in: {exc}"
                log.warning("meaning worker failed", error=str(exc)[:300])
                pending.clear()
                listed = False  # list again after the pause
                self._stop.wait(RETRY_S)
            except Exception as exc:
                if self._stop.is_set():
                    return
                self._note = f"the meaning filler stopped a moment ({type(exc).__name__})"
                log.exception("meaning filler failed")
                pending.clear()
                listed = False  # list again after the pause
                self._stop.wait(RETRY_S)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._worker.close()
        self._fresh.close()
        self._thread.join(timeout=2)
        self.vectors.close()


def _idle_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get(IDLE_ENV, "") or WORKER_IDLE_S))
    except ValueError:
        return WORKER_IDLE_S


_query_lock = threading.Lock()
_query_model: Any = None
_query_failure: str | None = None
_queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_embedded_questions = 0  #: questions the model embedded (not remembered ones): what an idle filler's trim follows


def question_model(choice: backends.Choice) -> backends.Loaded | None:
    """The backend loaded in the daemon's own process (once), or None when it cannot load here."""
    global _query_model, _query_failure
    with _query_lock:
        if _query_failure is not None:
            return None
        if _query_model is None:
            # OpenMP's threads in the daemon sleep when idle (read when the engine loads): a
            # spinning pool would take cores from every other request between questions. One
            # thread a call: a question is a few dozen tokens, and splitting it over two cores
            # cost more CPU (14 against 12 ms) and more wall time on a busy machine, where the
            # second thread waits for a core at every layer (docs/performance.md).
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            try:
                _query_model = backends.load(choice)
            except Exception as exc:  # noqa: BLE001 - no vectors for questions: BM25 alone, said once
                _query_failure = f"{type(exc).__name__}: {exc}"[:300]
                log.warning("meaning model did not load for questions", error=_query_failure)
                return None
        loaded: backends.Loaded = _query_model
        return loaded


def query_vector(choice: backends.Choice, query: str) -> np.ndarray | None:
    """The question's unit vector (remembered), or None when the model cannot give one here."""
    import numpy as np

    key = (choice.key, query)
    with _query_lock:
        found = _queries.get(key)
        if found is not None:
            _queries.move_to_end(key)
            return found
    loaded = question_model(choice)
    if loaded is None:
        return None
    try:
        vector: np.ndarray = np.asarray(loaded.queries([query]), dtype=np.float32)[0]
    except Exception as exc:  # noqa: BLE001 - this question goes without vectors
        log.warning("meaning model failed on a question", error=f"{type(exc).__name__}: {exc}"[:300])
        return None
    global _embedded_questions
    with _query_lock:
        _queries[key] = vector
        _embedded_questions += 1
        while len(_queries) > MAX_QUERIES_REMEMBERED:
            _queries.popitem(last=False)
    return vector


_open: dict[Path, Meaning] = {}
_lock = threading.Lock()


def meaning_for(store: ChunkStore) -> Meaning | None:
    """The vault's meaning filler (started on first call), or None when no backend runs here."""
    choice = backends.configured()
    if choice.absence() is not None:
        return None
    with _lock:
        found = _open.get(store.path)
        if found is None or found.store is not store:
            if found is not None:
                found.close()
            found = _open[store.path] = Meaning(store, choice)
        return found


def coverage_of(store_path: Path) -> Coverage | None:
    with _lock:
        found = _open.get(store_path)
    return found.coverage() if found is not None else None


def absence() -> str | None:
    """Why ranking by meaning is not available in this daemon, or None when it is."""
    return backends.configured().absence()


def forget(stopping: Meaning) -> None:
    """Stop one vault's filler (its vault is no longer served)."""
    with _lock:
        if _open.get(stopping.store.path) is stopping:
            del _open[stopping.store.path]
    stopping.close()


def close_all() -> None:
    with _lock:
        found = list(_open.values())
        _open.clear()
    for meaning in found:
        meaning.close()
