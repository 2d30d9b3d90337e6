"""The contract between vaultd and its clients: messages, methods, errors, framing.

Imports nothing from ``vaultd`` or ``vaultctl``; both import it. The names below are re-exported
lazily: importing one submodule (``protocol.location`` for the agent-host guard, say) must not
build the whole method table, which a hook run before every tool call cannot afford.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Notification": "protocol.envelope",
    "Request": "protocol.envelope",
    "Response": "protocol.envelope",
    "decode_request": "protocol.envelope",
    "decode_response": "protocol.envelope",
    "encode": "protocol.envelope",
    "ErrorCode": "protocol.errors",
    "ErrorData": "protocol.errors",
    "ExitStatus": "protocol.errors",
    "Issue": "protocol.errors",
    "Severity": "protocol.errors",
    "MAX_FRAME_BYTES": "protocol.framing",
    "LineBuffer": "protocol.framing",
    "OversizedFrame": "protocol.framing",
    "PROTOCOL_VERSION": "protocol.methods.common",
    "SUPPORTED_PROTOCOLS": "protocol.methods.common",
    "Channel": "protocol.methods.common",
    "METHODS": "protocol.table",
    "MethodSpec": "protocol.table",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'protocol' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = sorted(_EXPORTS)
