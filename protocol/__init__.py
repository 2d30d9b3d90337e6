"""The contract between vaultd and its clients: messages, methods, errors, framing.

Imports nothing from ``vaultd`` or ``vaultctl``; both import it.
"""

from protocol.envelope import Notification, Request, Response, decode_request, decode_response, encode
from protocol.errors import ErrorCode, ErrorData, ExitStatus, Issue, Severity
from protocol.framing import MAX_FRAME_BYTES, LineBuffer, OversizedFrame
from protocol.methods.common import PROTOCOL_VERSION, SUPPORTED_PROTOCOLS, Channel
from protocol.table import METHODS, MethodSpec

__all__ = [
    "MAX_FRAME_BYTES",
    "METHODS",
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOLS",
    "Channel",
    "ErrorCode",
    "ErrorData",
    "ExitStatus",
    "Issue",
    "LineBuffer",
    "MethodSpec",
    "Notification",
    "OversizedFrame",
    "Request",
    "Response",
    "Severity",
    "decode_request",
    "decode_response",
    "encode",
]
