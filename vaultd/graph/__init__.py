"""The link graph as pure functions over the index: one resolved snapshot of every link
(:mod:`~vaultd.graph.snapshot`), walks (neighbourhoods and paths), communities (Leiden through
igraph and leidenalg, imported on first use), hubs and maps of content, the topic map and its
navigator, and a neighbourhood drawn as a JSON Canvas. Nothing here writes a file.

igraph and leidenalg come with the ``graph`` extra (``vaultd[graph]``); without them the two
methods that need them (communities and hubs) refuse with the extra's name and everything else
here works. The check asks the import system, so it imports nothing."""

from __future__ import annotations

from protocol.extras import GRAPH
from vaultd.errors import Unavailable


def need_graph_extra(method: str) -> None:
    """Refuse ``method`` plainly when the graph extra is not installed, before any work.

    Raises:
        Unavailable: igraph or leidenalg cannot be imported here (UNAVAILABLE, naming ``vaultd[graph]``).
    """
    if (absence := GRAPH.absence(method)) is not None:
        raise Unavailable(absence)
