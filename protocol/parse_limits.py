"""Bounds on the work one parse of untrusted bytes may cost, each declared once.

A vault's files arrive from anywhere (a sync, an unzip, an agent's write), and so do captured
documents: a YAML header, a ``.base``, a ``.canvas``, an ``app.json``, an EPUB's ZIP directory.
Every parser vaultd runs on such bytes stops at these bounds, before it builds anything, and says
which bound the file passed (an indexing issue, a lint finding, a LIMIT or INVALID error): an
alias bomb or a document nested thousands of levels deep costs one linear scan, never hours.
Real files stay far inside them; the sizes in bytes are in :mod:`protocol.limits`.
"""

from __future__ import annotations

from typing import Final

MAX_YAML_DEPTH: Final = 64  #: nested mappings and sequences in one YAML document; real ones nest two or three
MAX_YAML_NODES: Final = 200_000  #: scalars, mappings and sequences one YAML document may hold (a 2 MiB base has fewer)
#: Nodes the aliases of one YAML document may repeat, in total, counting what each aliased node holds:
#: an alias bomb (billion laughs) passes it at its second level, before anything is expanded.
MAX_YAML_ALIAS_NODES: Final = 1_000
MAX_JSON_DEPTH: Final = 64  #: nested objects and arrays in one JSON file (a canvas nests four)
MAX_ZIP_ENTRIES: Final = 10_000  #: entries in the directory of a captured ZIP (an EPUB holds a few hundred)
MAX_PDF_SECONDS: Final = 10.0  #: reading a captured PDF's metadata, in its own process
MAX_PDF_MEMORY_BYTES: Final = 512 * 1024 * 1024  #: that process's address space (pypdf, the PDF and its objects)
MAX_LINT_DOCUMENT_SECONDS: Final = 10.0  #: reading and parsing one lint's canvases and bases, together
