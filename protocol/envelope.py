"""The JSON-RPC 2.0 envelope: requests, responses, notifications, and their codecs.

``params`` and ``result`` travel as :class:`msgspec.Raw` so the envelope is decoded once and each
method's own Struct decodes its params, giving field-level errors (``$.params.limit``).
Decoders and encoders are built once at import and reused.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from protocol.errors import ErrorCode, ErrorData

RequestId = int | str

_EMPTY_OBJECT = msgspec.Raw(b"{}")


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    jsonrpc: Literal["2.0"]
    method: str
    params: msgspec.Raw = _EMPTY_OBJECT
    id: RequestId | None = None  #: None (absent) makes it a notification

    @property
    def is_notification(self) -> bool:
        return self.id is None


class ErrorObject(msgspec.Struct, kw_only=True, omit_defaults=True):
    code: int
    message: str
    data: ErrorData | None = None


_NULL = msgspec.Raw(b"null")


class Response(msgspec.Struct, kw_only=True):
    """A reply as a client decodes it: a success (``result``) or a failure (``error``).

    ``result`` defaults to JSON null so a decoded error reply needs no sentinel. The daemon
    writes :class:`Success` or :class:`Failure`, which always carry ``jsonrpc``.
    """

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None = None
    result: msgspec.Raw = _NULL
    error: ErrorObject | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Incoming(Response, kw_only=True):
    """Any frame a client reads: a reply (``id``), or a notification (``method`` and ``params``)."""

    method: str | None = None
    params: msgspec.Raw = _NULL

    @property
    def is_notification(self) -> bool:
        return self.id is None and self.method is not None


class Success(msgspec.Struct, kw_only=True):
    """What the daemon writes for a successful call (``jsonrpc`` always present)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None
    result: msgspec.Raw


class Failure(msgspec.Struct, kw_only=True):
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None
    error: ErrorObject


Reply = Success | Failure


class Notification(msgspec.Struct, kw_only=True):
    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: Any = None


class InvalidFrame(Exception):
    """A frame that is not a usable request; carries the JSON-RPC error to answer with."""

    def __init__(self, code: ErrorCode, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


_request_decoder = msgspec.json.Decoder(Request)
_id_probe = msgspec.json.Decoder(dict[str, Any])
_response_decoder = msgspec.json.Decoder(Response)
_incoming_decoder = msgspec.json.Decoder(Incoming)
_encoder = msgspec.json.Encoder()


def decode_request(frame: bytes) -> Request:
    """Decode one frame into a Request.

    Raises:
        InvalidFrame: PARSE_ERROR for malformed JSON, INVALID_REQUEST for JSON that is not a
            JSON-RPC 2.0 request (the request id is recovered when there is one).
    """
    try:
        return _request_decoder.decode(frame)
    except msgspec.ValidationError as exc:
        request_id = _probe_id(frame)
        raise InvalidFrame(ErrorCode.INVALID_REQUEST, f"not a JSON-RPC 2.0 request: {exc}", request_id) from exc
    except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: nesting too deep
        raise InvalidFrame(ErrorCode.PARSE_ERROR, "malformed JSON frame") from exc


def _probe_id(frame: bytes) -> RequestId | None:
    try:
        value = _id_probe.decode(frame).get("id")
    except (msgspec.DecodeError, RecursionError):
        return None
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def decode_response(frame: bytes) -> Response:
    return _response_decoder.decode(frame)


def decode_incoming(frame: bytes) -> Incoming:
    """Decode a frame a client reads, reply or notification."""
    return _incoming_decoder.decode(frame)


def encode(message: Any) -> bytes:
    """Encode one message as a frame, newline included."""
    return _encoder.encode(message) + b"\n"


def encode_value(value: Any) -> msgspec.Raw:
    return msgspec.Raw(_encoder.encode(value))


def error_response(request_id: RequestId | None, data: ErrorData) -> Failure:
    return Failure(id=request_id, error=ErrorObject(code=data.code.rpc_code, message=data.message, data=data))
