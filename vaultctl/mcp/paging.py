"""``tools/list`` pages: an opaque cursor that names an offset in one exact tool list.

The spec leaves page size to the server and asks it to refuse a cursor it did not hand out with
-32602 (MCP 2025-06-18, *server/utilities/pagination*). A cursor here is the offset of the next
page and a digest of the list it was cut from, so a cursor from another build or another vault
enum is refused instead of silently paging a different list.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING, Any

from vaultctl.mcp.errors import invalid_params
from vaultctl.mcp.settings import bounded_int

if TYPE_CHECKING:
    from collections.abc import Mapping

TOOLS_PAGE_ENV = "VAULTD_MCP_TOOLS_PAGE"  #: tools per page (1..1000), for hosts that want smaller pages
DEFAULT_TOOLS_PAGE = 100
_PAGE_RANGE = (1, 1000)


def tools_page_size(environ: Mapping[str, str]) -> int:
    return bounded_int(environ, TOOLS_PAGE_ENV, DEFAULT_TOOLS_PAGE, *_PAGE_RANGE)


def _digest(items: list[dict[str, Any]]) -> str:
    encoded = json.dumps(items, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]


def page(items: list[dict[str, Any]], cursor: object, size: int) -> tuple[list[dict[str, Any]], str | None]:
    """The page ``cursor`` names (None: the first) and the cursor of the next one, if any.

    Raises:
        McpError: -32602 for a cursor this list did not hand out.
    """
    digest = _digest(items)
    start = 0 if cursor is None else _offset(cursor, digest, len(items))
    end = start + size
    following = _cursor(end, digest) if end < len(items) else None
    return items[start:end], following


def _cursor(offset: int, digest: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}:{digest}".encode()).decode().rstrip("=")


def _offset(cursor: object, digest: str, count: int) -> int:
    unknown = invalid_params("unknown cursor: call tools/list without a cursor to start again", "$.params.cursor")
    if not isinstance(cursor, str) or not 0 < len(cursor) <= 64:
        raise unknown
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        offset_text, _, got = text.partition(":")
        offset = int(offset_text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise unknown from exc
    if got != digest or not 0 < offset < count or _cursor(offset, digest) != cursor:
        raise unknown
    return offset
