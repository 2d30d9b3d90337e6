"""note.names: the names and paths of notes that start with what was typed, for shell completion.

A person's shell asks this at each press of Tab, so it answers from the index in memory and is
bounded. It is not an MCP tool: an agent finds notes with ``note.search`` and ``note.list``.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.spec import Effect, spec

MAX_NAMES = 1000


class NamesParams(Params):
    vault: OptionalVault = None
    prefix: Annotated[
        str,
        msgspec.Meta(
            max_length=1024,
            description=(
                "What was typed so far. Without a '/', note names (file names without .md) and top-level folders "
                "starting with it, case-insensitively; with one, the entries of that folder, as paths."
            ),
        ),
    ] = ""
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_NAMES, description="At most this many names.")] = 200


class NamesResult(Result):
    names: list[str]  #: sorted; a folder ends in "/"; a name two notes share is given as their two paths
    truncated: bool  #: more names start with the prefix than ``limit``


NOTE_NAMES = spec(
    "note.names",
    NamesParams,
    NamesResult,
    "Note names, folders and paths that start with a prefix, for shell completion.",
    Effect.READ,
)
SPECS = (NOTE_NAMES,)
