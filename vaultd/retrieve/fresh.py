"""A write's passages embedded first: in the daemon's own process, at its own priority.

The filler's worker runs niced, one thread, a batch at a time: on a busy machine it embeds a
passage in tens of seconds, and a batch already sent is answered before anything else. A note
just written or edited is the one its writer asks about next, so its passages do not queue
there: the chunk index hands the paths of a small change (at most :data:`MAX_NOTES` notes) to
this lane, which embeds their new passages one at a time with the model the daemon already holds
for questions (no second copy of it, no process to start), and stores them as the filler would.
The write itself never waits: the lane runs on its own thread after the receipt has gone.

Bounded so that a burst of changes cannot take the daemon's cores from requests: in any
:data:`WINDOW_S` seconds the lane takes at most :data:`MAX_NOTES` notes and :data:`MAX_PASSAGES`
new passages (about a quarter of one core for the shipped model); a change of more notes than
it can take (a checkout, a sync, a script writing hundreds) is left to the worker whole, and of
a note it takes, the passages past the budget are the worker's too (the head is the lane's). At
most :data:`MAX_PASSAGES` passages wait here, however slowly the machine lets the lane go.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import TYPE_CHECKING

import structlog

from vaultd import faults, memory

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from vaultd.retrieve.backend import Loaded
    from vaultd.retrieve.store import ChunkStore
    from vaultd.retrieve.vectors import VectorStore

log = structlog.get_logger("vaultd.retrieve")

WINDOW_S = 10.0
MAX_NOTES = 8  #: notes the lane takes in any WINDOW_S seconds; a change of more is the worker's
MAX_PASSAGES = 16  #: new passages the lane takes in any WINDOW_S seconds


class FreshLane:
    """The passages of recently written notes, embedded ahead of the filler's worker.

    The keys a change names are claimed when it is offered, before the filler hears of it, so
    the filler passes them by instead of sending them to its worker too; ``added`` hears of
    every vector this lane stores, ``left`` of keys it gave up on (the filler takes them first).
    """

    def __init__(
        self,
        store: ChunkStore,
        vectors: VectorStore,
        model: Callable[[], Loaded | None],
        added: Callable[[list[bytes]], None],
        left: Callable[[list[bytes]], None],
    ) -> None:
        self.store = store
        self.vectors = vectors
        self._model = model
        self._added = added
        self._left = left
        self._notes: deque[list[bytes]] = deque()
        self._notes_taken: deque[float] = deque()  #: when each note of the last WINDOW_S seconds was taken
        self._keys_taken: deque[float] = deque()  #: and each passage
        self.claimed: set[bytes] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.embedded = 0  #: passages this lane has embedded
        self._thread = threading.Thread(target=self._run, name="vaultd-meaning-fresh", daemon=True)
        self._thread.start()

    def offer(self, paths: Sequence[str]) -> bool:
        """Take the notes of one change, within the window's budget; whether the lane took them."""
        if not paths:
            return False
        now = time.monotonic()
        with self._lock:
            for taken in (self._notes_taken, self._keys_taken):
                while taken and taken[0] <= now - WINDOW_S:
                    taken.popleft()
            if len(self._notes_taken) + len(paths) > MAX_NOTES:
                return False
            self._notes_taken.extend([now] * len(paths))
        wanted = [self.store.keys_of_paths([p]) for p in paths]
        with self._lock:
            for keys in wanted:
                keys = [k for k in dict.fromkeys(keys) if k not in self.vectors and k not in self.claimed]
                # Within the window's budget, and never more waiting here than one window's worth.
                keys = keys[: max(0, MAX_PASSAGES - max(len(self._keys_taken), len(self.claimed)))]
                if keys:
                    self._keys_taken.extend([now] * len(keys))
                    self._notes.append(keys)
                    self.claimed.update(keys)
        self._wake.set()
        return True

    def _next(self) -> list[bytes] | None:
        with self._lock:
            return self._notes.pop() if self._notes else None  # the latest write first

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            worked = False
            while not self._stop.is_set() and (keys := self._next()) is not None:
                worked = True
                try:
                    self._embed(keys)
                except Exception as exc:  # noqa: BLE001 - the worker embeds what this lane could not
                    log.warning("a written note's passages were left to the filler", error=f"{type(exc).__name__}: {exc}"[:300])
                finally:
                    with self._lock:
                        self.claimed.difference_update(keys)
                left = [k for k in keys if k not in self.vectors]
                if left:
                    self._left(left)
            if worked:  # the model's activations, freed, go back to the system, not to this thread's heap
                memory.give_back()

    def _embed(self, keys: list[bytes]) -> None:
        faults.point("meaning-fresh")
        model = self._model()
        if model is None:
            return
        texts = self.store.texts_of([k for k in keys if k not in self.vectors])
        for key in keys:  # one at a time, each stored as soon as it is made
            if self._stop.is_set():
                return
            if key in texts and key not in self.vectors and self.vectors.add([key], model.passages([texts[key]])):
                self.embedded += 1
                self._added([key])

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=2)
