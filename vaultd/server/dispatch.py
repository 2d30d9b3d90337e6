"""Turns one decoded request into one response: params decoding, the call, error translation.

This is the only place a ``VaultError`` becomes a JSON-RPC error, and the only place an
unexpected exception is caught, logged with its traceback and answered as INTERNAL.
"""

from __future__ import annotations

from typing import Any

import msgspec
import structlog

from protocol.envelope import Reply, Request, Success, encode_value, error_response
from protocol.errors import ErrorCode, ErrorData, Issue
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.table import METHODS, MethodSpec
from vaultd.api.handlers import HANDLERS, CallContext
from vaultd.errors import VaultError

log = structlog.get_logger("vaultd.dispatch")

INTERNAL_MESSAGE = "internal error; see the daemon log ('vaultctl daemon logs')"

_param_decoders: dict[str, msgspec.json.Decoder[Any]] = {}


def _decoder(spec: MethodSpec[Any, Any]) -> msgspec.json.Decoder[Any]:
    """The params decoder of a method, built at its first call: building every one
    at start-up cost about 25 ms, most of it for methods a session never calls."""
    decoder = _param_decoders.get(spec.name)
    if decoder is None:
        decoder = _param_decoders[spec.name] = msgspec.json.Decoder(spec.params)
    return decoder


def _params_error(exc: msgspec.ValidationError) -> ErrorData:
    text = str(exc)
    where = "$.params"
    if " - at `" in text:  # msgspec: "Expected `int`, got `str` - at `$.limit`"
        text, _, at = text.rpartition(" - at `")
        where = "$.params" + at.rstrip("`").removeprefix("$")
    return ErrorData(
        code=ErrorCode.INVALID_PARAMS,
        message=f"invalid params: {text} (at {where})",
        issues=[Issue(code=IssueCode.PARAM, message=text, path=where)],
    )


async def dispatch(request: Request, ctx: CallContext) -> Reply:
    spec = METHODS.get(request.method)
    handler = HANDLERS.get(request.method)
    if spec is None or handler is None:
        return error_response(
            request.id,
            ErrorData(code=ErrorCode.METHOD_NOT_FOUND, message=f"unknown method {request.method!r}"),
        )
    if ctx.channel == Channel.MCP and not (spec.mcp or spec.session):
        # An agent gets the MCP tools and nothing else, whatever client it speaks through:
        # registering vaults, changing policy, applying proposals and stopping the daemon are a person's.
        log.info("refused", method=request.method, code=str(ErrorCode.POLICY), channel=str(ctx.channel))
        message = f"{request.method} is not open to agents (the mcp channel); a person runs it with vaultctl"
        return error_response(request.id, ErrorData(code=ErrorCode.POLICY, message=message))
    try:
        params = _decoder(spec).decode(request.params)
    except msgspec.ValidationError as exc:
        return error_response(request.id, _params_error(exc))
    except msgspec.DecodeError:
        return error_response(request.id, ErrorData(code=ErrorCode.INVALID_PARAMS, message="params must be an object"))
    try:
        result = await handler(ctx, params)
        # Encoding is part of the call: a result that cannot be encoded is this call's failure.
        encoded = encode_value(result)
    except VaultError as exc:
        log.info("refused", method=request.method, code=str(exc.code), channel=str(ctx.channel))
        return error_response(request.id, exc.to_data())
    except Exception:
        log.exception("internal error", method=request.method)
        return error_response(request.id, ErrorData(code=ErrorCode.INTERNAL, message=INTERNAL_MESSAGE))
    return Success(id=request.id, result=encoded)
