"""Notes as MCP resources: ``vault://{vault}/{path}``, listed in pages, read as Markdown.

A host that shows resources lets its user attach a note to the conversation without the model
calling a tool. Every listing and read is a call to the daemon on the ``mcp`` channel, so a
private note is neither listed nor read (NOT_FOUND, as for a note that is not there).

- ``resources/list`` pages through every vault's notes in path order (:data:`PAGE` a page); its
  cursor names the vault and the daemon's own ``note.list`` cursor in it.
- ``resources/read`` reads one note's body, first page of at most the result budget (and the
  daemon's 64 KiB page); ``_meta`` carries the frontmatter, the file's sha256 and, when the body
  goes on, ``next_offset`` for ``note_read``.
- ``resources/templates/list`` offers the one template, ``vault://{vault}/{path}``.

- ``resources/subscribe`` and ``resources/unsubscribe`` (handshake era): :mod:`vaultctl.mcp.updates`
  relays the daemon's note events for the subscribed notes as ``notifications/resources/updated``.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

import msgspec

from protocol.errors import ErrorCode
from protocol.limits import MAX_READ_PAGE_BYTES
from protocol.methods.common import Empty
from protocol.methods.reads import LIST, READ, ListParams, ListResult, ReadParams, ReadResult
from protocol.methods.vaults import VAULT_LIST, VaultListResult
from vaultctl.client import CallError
from vaultctl.mcp.errors import McpError, RpcCode, ToolFailure, invalid_params

if TYPE_CHECKING:
    from vaultctl.mcp.daemon_connection import DaemonConnection

SCHEME = "vault"
TEMPLATE = "vault://{vault}/{path}"
PAGE = 100  #: resources a ``resources/list`` page holds
MIME = "text/markdown"
_READ_RESERVE = 2048  #: bytes of a read's budget kept for its JSON around the text


def uri_of(vault: str, path: str) -> str:
    """A note's resource URI; each path segment percent-encoded (spaces, ``#``, ``?``, non-ASCII)."""
    return f"{SCHEME}://{vault}/{quote(path, safe='/')}"


def parse_uri(uri: object) -> tuple[str, str]:
    """(vault, path) of a resource URI.

    Raises:
        McpError: -32602 for anything but ``vault://{vault}/{path}``.
    """
    if not isinstance(uri, str) or len(uri) > 4096:
        raise invalid_params("uri must be a string of at most 4096 characters", "$.params.uri")
    parts = urlsplit(uri)
    path = unquote(parts.path.removeprefix("/"))
    if parts.scheme != SCHEME or not parts.netloc or not path or parts.query or parts.fragment:
        raise invalid_params(f"not a vaultd resource: {uri!r}; expected {TEMPLATE}", "$.params.uri")
    return parts.netloc, path


def templates() -> dict[str, Any]:
    return {
        "resourceTemplates": [
            {
                "uriTemplate": TEMPLATE,
                "name": "note",
                "description": "A note of a registered vault, by its vault-relative path (its body as Markdown).",
                "mimeType": MIME,
            }
        ]
    }


def list_page(daemon: DaemonConnection, cursor: object) -> dict[str, Any]:
    """One page of every vault's notes, in vault then path order.

    Raises:
        McpError: -32602 for a cursor this server did not hand out; -32603 when the daemon cannot say.
    """
    vaults = [v.entry.id for v in _call(daemon, VAULT_LIST, Empty(), VaultListResult).vaults]
    index, inner = (0, None) if cursor is None else _decode_cursor(cursor, vaults)
    resources: list[dict[str, Any]] = []
    while index < len(vaults) and len(resources) < PAGE:
        vault = vaults[index]
        page = _call(daemon, LIST, ListParams(vault=vault, limit=PAGE - len(resources), cursor=inner), ListResult)
        resources += [
            {"uri": uri_of(vault, n.path), "name": n.path, "title": n.title, "mimeType": MIME, "size": n.size} for n in page.notes
        ]
        inner = page.next_cursor
        if inner is None:
            index += 1
    result: dict[str, Any] = {"resources": resources}
    if index < len(vaults):
        result["nextCursor"] = _encode_cursor(vaults[index], inner)
    return result


def read(daemon: DaemonConnection, uri: object, budget: int) -> dict[str, Any]:
    """The note's body as one text content, at most ``budget`` bytes of it.

    Raises:
        McpError: -32602 for a bad URI; -32002 for a note or vault that is not there (or private);
            -32603 for any other refusal, with the daemon's error in ``data``.
    """
    vault, path = parse_uri(uri)
    page = max(1, min(MAX_READ_PAGE_BYTES, budget - _READ_RESERVE))
    note = _call(daemon, READ, ReadParams(target=path, vault=vault, max_bytes=page, fresh=True), ReadResult, uri=uri)
    meta: dict[str, Any] = {"frontmatter": note.frontmatter, "sha256": note.sha256, "size": note.size}
    if note.next_offset is not None:
        meta["next_offset"] = note.next_offset  # note_read with this offset reads on
    content = {"uri": uri_of(vault, note.path), "mimeType": MIME, "text": note.body, "_meta": meta}
    return {"contents": [content]}


def resolve(daemon: DaemonConnection, uri: object) -> tuple[str, str]:
    """(vault, the note's path) of a resource URI, as ``resources/read`` would find the note.

    Raises:
        McpError: -32602 for a bad URI; -32002 for a note or vault that is not there (or private).
    """
    vault, path = parse_uri(uri)
    note = _call(daemon, READ, ReadParams(target=path, vault=vault, max_bytes=1, fresh=True), ReadResult, uri=uri)
    return vault, note.path


def _call(daemon: DaemonConnection, spec: Any, params: Any, result: type, uri: object = None) -> Any:
    try:
        raw = daemon.call(spec, params)
    except CallError as exc:
        data = msgspec.to_builtins(exc.data)
        if exc.data.code is ErrorCode.NOT_FOUND and uri is not None:
            raise McpError(RpcCode.RESOURCE_NOT_FOUND, "resource not found", data={"uri": uri, **data}) from exc
        raise McpError(RpcCode.INTERNAL_ERROR, exc.data.message, data=data) from exc
    except ToolFailure as exc:
        raise McpError(RpcCode.INTERNAL_ERROR, exc.data.message, data=exc.structured()) from exc
    return msgspec.json.decode(raw, type=result)


def _encode_cursor(vault: str, inner: str | None) -> str:
    return base64.urlsafe_b64encode(json.dumps([vault, inner]).encode()).decode()


def _decode_cursor(cursor: object, vaults: list[str]) -> tuple[int, str | None]:
    unknown = invalid_params("unknown cursor: call resources/list without a cursor to start again", "$.params.cursor")
    if not isinstance(cursor, str) or len(cursor) > 8192:
        raise unknown
    try:
        vault, inner = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError) as exc:
        raise unknown from exc
    if vault not in vaults or not (inner is None or isinstance(inner, str)):
        raise unknown
    return vaults.index(vault), inner
