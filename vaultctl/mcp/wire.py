"""JSON-RPC 2.0 messages as the MCP client sends them, and the replies the shim writes.

Decoding is lenient about shape so every bad frame can be answered precisely: malformed JSON is
-32700, JSON that is not a JSON-RPC request is -32600 (with the request's id when one can be
read), a response from the client (we never send requests, so it answers nothing) is dropped.
``params`` stays raw so each method decodes only what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from vaultctl.mcp.errors import McpError, RpcCode

RequestId = int | str

_EMPTY = msgspec.Raw(b"{}")


class _Incoming(msgspec.Struct):
    jsonrpc: Any = UNSET
    method: Any = UNSET
    id: Any = UNSET
    params: msgspec.Raw = _EMPTY
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


class _MetaOnly(msgspec.Struct):
    meta: dict[str, Any] | None = msgspec.field(name="_meta", default=None)


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: msgspec.Raw


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: msgspec.Raw


@dataclass(frozen=True, slots=True)
class Ignored:
    """A frame that gets no reply: a response from the client."""

    why: str


class ErrorBody(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = None


class Reply(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: RequestId | None
    result: Any = UNSET
    error: ErrorBody | UnsetType = UNSET


class Notice(msgspec.Struct):
    """A notification the shim sends (no id, no reply)."""

    jsonrpc: str
    method: str
    params: Any


_decoder = msgspec.json.Decoder(_Incoming)
_meta_decoder = msgspec.json.Decoder(_MetaOnly)
_object_decoder = msgspec.json.Decoder(dict[str, Any])
_encoder = msgspec.json.Encoder()


class BadFrame(Exception):
    """A frame answered with a JSON-RPC error; ``request_id`` when the frame had a usable one."""

    def __init__(self, error: McpError, request_id: RequestId | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.request_id = request_id


def parse(frame: bytes) -> Request | Notification | Ignored:
    """Classify one frame.

    Raises:
        BadFrame: -32700 for malformed JSON, -32600 for anything that is not a JSON-RPC 2.0
            request or notification.
    """
    try:
        msg = _decoder.decode(frame)
    except msgspec.ValidationError as exc:
        raise BadFrame(McpError(RpcCode.INVALID_REQUEST, f"not a JSON-RPC 2.0 message: {exc}")) from exc
    except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: nesting too deep
        raise BadFrame(McpError(RpcCode.PARSE_ERROR, "malformed JSON frame")) from exc
    has_id = msg.id is not UNSET
    good_id = isinstance(msg.id, (int, str)) and not isinstance(msg.id, bool)
    usable_id = msg.id if good_id else None
    if msg.jsonrpc != "2.0":
        raise BadFrame(McpError(RpcCode.INVALID_REQUEST, 'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"'), usable_id)
    if msg.method is UNSET and (bytes(msg.result) or bytes(msg.error)):
        return Ignored("a response, but this server sends no requests")
    if not isinstance(msg.method, str):
        raise BadFrame(McpError(RpcCode.INVALID_REQUEST, '"method" must be a string'), usable_id)
    if has_id and not good_id:
        raise BadFrame(McpError(RpcCode.INVALID_REQUEST, '"id" must be a string or an integer'))
    if not has_id:
        return Notification(msg.method, msg.params)
    return Request(msg.id, msg.method, msg.params)


def meta_of(params: msgspec.Raw) -> dict[str, Any] | None:
    """``params._meta``, or None.

    Raises:
        McpError: -32602 when params is not an object or ``_meta`` is not one.
    """
    raw = bytes(params)
    if raw == b"null":
        return None
    try:
        return _meta_decoder.decode(raw).meta
    except msgspec.ValidationError as exc:
        raise McpError(RpcCode.INVALID_PARAMS, f"params must be an object with an optional _meta object: {exc}") from exc


def decode_object(params: msgspec.Raw) -> dict[str, Any]:
    """``params`` as a plain object (absent or null reads as empty).

    Raises:
        McpError: -32602 when params is not an object.
    """
    raw = bytes(params)
    if raw == b"null":
        return {}
    try:
        return _object_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise McpError(RpcCode.INVALID_PARAMS, f"params must be an object: {exc}") from exc


def result_frame(request_id: RequestId, result: Any) -> bytes:
    return _encoder.encode(Reply(jsonrpc="2.0", id=request_id, result=result)) + b"\n"


def error_frame(request_id: RequestId | None, error: McpError) -> bytes:
    body = ErrorBody(code=int(error.code), message=error.message, data=error.data)
    return _encoder.encode(Reply(jsonrpc="2.0", id=request_id, error=body)) + b"\n"


def notification_frame(method: str, params: Any) -> bytes:
    return _encoder.encode(Notice(jsonrpc="2.0", method=method, params=params)) + b"\n"
