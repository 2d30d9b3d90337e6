"""Leiden in a process of its own, so a large vault's communities never hold the daemon's GIL.

leidenalg runs its C++ with the GIL held: on a 50,000-note vault that is ~10 s in which no other
request of any client (nor the event loop) ran. :func:`solve_elsewhere` hands the graph to
``python -m vaultd.graph.leiden_worker`` over a pipe (:mod:`vaultd.worker`, as lint's rules are)
and waits on the pipe, which releases the GIL; the worker imports igraph and leidenalg, never
the daemon's handlers, reads nothing but its input and exits with its answer, niced.

The same :func:`solve` runs in either process, on the same input with the same seed, so where it
runs never changes the partition. A graph too small to repay starting a process (a few hundred
milliseconds) is solved in the daemon's own process.
"""

from __future__ import annotations

import msgspec

from vaultd import faults
from vaultd.worker import WorkerFailed as WorkerFailed  # re-exported: the callers of solve_elsewhere catch it
from vaultd.worker import run_elsewhere, serve

WORKER_MIN_NOTES = 1000  #: fewer notes than this are solved in the daemon's process (well under 100 ms)
WORKER_TIMEOUT_S = 900.0  #: a worker still running after this is killed and the request fails
#: How a worker is started, after the interpreter; a test starts others.
WORKER_ARGS = ("-m", "vaultd.graph.leiden_worker")


class LeidenJob(msgspec.Struct, array_like=True):
    """The undirected simple graph (vertices 0..n-1, each edge once) and how to partition it."""

    n: int
    edges: list[tuple[int, int]]
    resolution: float
    seed: int
    iterations: int


class LeidenAnswer(msgspec.Struct, array_like=True):
    membership: list[int]  #: each vertex's community number
    degree: list[int]  #: each vertex's degree in the whole graph
    modularity: float


def solve(job: LeidenJob) -> LeidenAnswer:
    """Leiden (modularity, RB configuration) on the job's graph, in this process."""
    import igraph
    import leidenalg

    graph = igraph.Graph(n=job.n, edges=job.edges, directed=False)
    found = leidenalg.find_partition(
        graph, leidenalg.RBConfigurationVertexPartition, resolution_parameter=job.resolution, seed=job.seed, n_iterations=job.iterations
    )
    membership = [int(m) for m in found.membership]
    modularity = graph.modularity(membership, resolution=job.resolution) if job.edges else 0.0
    return LeidenAnswer(membership=membership, degree=[int(d) for d in graph.degree()], modularity=float(modularity))


_encode = msgspec.msgpack.Encoder().encode
_decode_job = msgspec.msgpack.Decoder(LeidenJob).decode
_decode_answer = msgspec.msgpack.Decoder(LeidenAnswer).decode


def solve_elsewhere(job: LeidenJob, timeout: float = WORKER_TIMEOUT_S) -> LeidenAnswer:
    """:func:`solve` in a worker process; blocks (without the GIL) until it answers.

    Raises:
        WorkerFailed: it could not start, died, answered something unreadable, or timed out.
    """
    out = run_elsewhere(WORKER_ARGS, _encode(job), timeout=timeout, what="communities", point="communities-worker")
    try:
        answer = _decode_answer(out)
    except msgspec.DecodeError as exc:
        raise WorkerFailed(f"the communities worker answered something unreadable: {exc}") from exc
    if len(answer.membership) != job.n or len(answer.degree) != job.n:
        raise WorkerFailed("the communities worker answered for another graph")
    return answer


def _answer(payload: bytes) -> bytes:
    job = _decode_job(payload)
    faults.point("communities-worker")
    return _encode(solve(job))


def main() -> None:
    serve(_answer)


if __name__ == "__main__":
    main()
