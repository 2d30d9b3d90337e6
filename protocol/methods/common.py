"""Types shared by several methods' params and results."""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

PROTOCOL_VERSION = 1  #: bump when a method changes incompatibly; new optional fields do not bump it
SUPPORTED_PROTOCOLS = (1,)


PERSON_ONLY = "person_only"
"""The key, in a field's ``msgspec.Meta(extra=...)``, of an argument only a person's call may give
(a path outside the vault, say). The MCP tools are generated without it, so an agent is never
offered what the daemon would refuse it, and a call that sends it anyway is refused as for any
unknown argument (:func:`protocol.schema.person_only_fields`)."""


def described(text: str) -> msgspec.Meta:
    """A field's description: the one text the reference, the MCP schema and the CLI help show."""
    return msgspec.Meta(description=text)


VaultId = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[a-z][a-z0-9-]{0,31}$",
        description="A registered vault id: a lowercase letter, then up to 31 lowercase letters, digits or '-'.",
    ),
]
OptionalVault = Annotated[
    VaultId | None,
    msgspec.Meta(description="The vault id; omitted, the default vault."),
]
Fingerprint = Annotated[
    str,
    msgspec.Meta(pattern=r"^[0-9a-f]{64}$", description="The fingerprint a preview returned."),
]

MAX_REASON_CHARS = 200
Reason = Annotated[
    str,
    msgspec.Meta(
        min_length=1, max_length=MAX_REASON_CHARS, pattern=r"^[^\x00-\x1f\x7f]*$", description="One line, for a person and the log."
    ),
]


class Channel(enum.StrEnum):
    """Who is calling; write policies are per channel."""

    CLI = "cli"
    MCP = "mcp"
    EDITOR = "editor"


class Params(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every params Struct: unknown keys are refused, naming the key."""


class Result(msgspec.Struct, kw_only=True):
    """Base of every result Struct."""


class Empty(Params):
    pass
