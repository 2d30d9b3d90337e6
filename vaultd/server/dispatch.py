"""Turns one decoded request into one response: params decoding, the call, error translation.

This is the only place a ``VaultError`` becomes a JSON-RPC error, and the only place an
unexpected exception is caught, logged with its traceback and answered as INTERNAL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import structlog

from protocol.envelope import Reply, Request, Success, encode_value, error_response
from protocol.errors import ErrorCode, ErrorData, Issue
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.reads import ReadResult
from protocol.table import METHODS, MethodSpec
from vaultd.api import handler as handler_of
from vaultd.errors import VaultError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from vaultd.api.handlers import CallContext
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import VaultIndex

log = structlog.get_logger("vaultd.dispatch")

INTERNAL_MESSAGE = "internal error; see the daemon log ('vaultctl daemon logs')"

_param_decoders: dict[str, msgspec.json.Decoder[Any]] = {}


def _decoder(spec: MethodSpec[Any, Any]) -> msgspec.json.Decoder[Any]:
    """The params decoder of a method, built at its first call: building every one
    at start-up cost about 25 ms, most of it for methods a connection never calls."""
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
    try:
        handler = handler_of(request.method) if spec is not None else None  # its module loaded at the first call
    except Exception:
        log.exception("internal error", method=request.method)
        return error_response(request.id, ErrorData(code=ErrorCode.INTERNAL, message=INTERNAL_MESSAGE))
    if spec is None or handler is None:
        return error_response(
            request.id,
            ErrorData(code=ErrorCode.METHOD_NOT_FOUND, message=f"unknown method {request.method!r}"),
        )
    if ctx.channel == Channel.MCP and not (spec.mcp or spec.session or spec.agent_stream):
        # An agent gets the MCP tools (and the event stream its shim relays) and nothing else, whatever
        # client it speaks through: registering vaults, changing policy, applying proposals and
        # stopping the daemon are a person's.
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
        if ctx.channel == Channel.MCP:
            from vaultd.api.session_methods import observe  # an agent's call: loaded at the first

            observe(ctx, params, result)  # the agent session's record: what it read and wrote
            result = _for_agents(ctx, request.method, result, params)
        # Encoding is part of the call: a result that cannot be encoded is this call's failure.
        encoded = encode_value(result)
    except VaultError as exc:
        log.info("refused", method=request.method, code=str(exc.code), channel=str(ctx.channel))
        data = exc.to_data()
        if ctx.channel == Channel.MCP:
            data = _for_agents(ctx, request.method, data, params)
        return error_response(request.id, data)
    except Exception:
        log.exception("internal error", method=request.method)
        return error_response(request.id, ErrorData(code=ErrorCode.INTERNAL, message=INTERNAL_MESSAGE))
    return Success(id=request.id, result=encoded)


#: Fields of a result that hold a visible note's own text: the agent gets them byte for byte.
_NOTE_TEXT: dict[type, frozenset[str]] = {ReadResult: frozenset({"body", "frontmatter", "title", "headings"})}


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        if node:
            yield node
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, dict):
        for item in node.values():
            yield from _strings(item)


def _private_views(ctx: CallContext) -> list[tuple[Visibility, VaultIndex | None]]:
    from vaultd.policy.visibility import Visibility  # agents' replies only: loaded at the first

    views = []
    for runtime in ctx.host.vaults.values():
        view = Visibility.of(runtime.entry, Channel.MCP)
        if view.hides_anything:
            views.append((view, runtime.live.index if runtime.live is not None else None))
    return views


def _for_agents(ctx: CallContext, method: str, value: Any, params: Any) -> Any:
    """What an agent may be told of ``value``: private paths named anywhere in it are replaced.

    Every read method filters what it finds through the caller's visibility; this screen on the
    way out makes that hold for every method and every free-text field at once (a summary, a
    subject, a candidate, an error's message), whatever a handler forgot. What the agent itself
    sent is not screened: "no note 'diary/x.md'" must read exactly as it does for a name nothing
    has, or the screen itself would tell which names are private.
    """
    views = _private_views(ctx)
    if not views:
        return value
    from vaultd.policy.visibility import screened

    builtins = msgspec.to_builtins(value)
    given = tuple(_strings(msgspec.to_builtins(params))) if params is not None else ()
    clean, count = screened(builtins, views, _NOTE_TEXT.get(type(value), frozenset()), given)
    if not count:
        return value
    log.info("private names screened from a reply", method=method, count=count)
    if isinstance(value, ErrorData):
        return msgspec.convert(clean, ErrorData)
    return clean
