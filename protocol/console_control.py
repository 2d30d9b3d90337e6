"""The daemon's control pipe to its console process: one JSON object per line.

The daemon starts the console with pipes on its standard input and output. The console says
:class:`Ready` once it listens; each :class:`Mint` the daemon sends is answered, in order, by a
:class:`Minted` carrying a fresh one-time token. The console ends when its standard input closes,
so it never outlives the daemon, even one that was killed.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

MAX_CONTROL_LINE = 4096  #: bytes in one control message; longer lines are a broken peer


class Ready(msgspec.Struct, kw_only=True, tag="ready"):
    origin: str  #: http://127.0.0.1:PORT
    pid: int


class Mint(msgspec.Struct, kw_only=True, tag="mint"):
    ttl_s: Annotated[int, msgspec.Meta(ge=1, le=3600)]
    vault: str | None = None


class Minted(msgspec.Struct, kw_only=True, tag="minted"):
    url: str  #: the origin, /login, and the token (and vault) in the fragment


ToConsole = Mint
FromConsole = Ready | Minted

_to_console = msgspec.json.Decoder(ToConsole)
_from_console = msgspec.json.Decoder(FromConsole)
_encoder = msgspec.json.Encoder()


def encode_line(message: msgspec.Struct) -> bytes:
    return _encoder.encode(message) + b"\n"


def decode_to_console(line: bytes) -> ToConsole:
    return _to_console.decode(line)


def decode_from_console(line: bytes) -> FromConsole:
    return _from_console.decode(line)
