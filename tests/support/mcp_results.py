"""Reading a tool result the way every MCP client can: an error carries its JSON in the text."""

from __future__ import annotations

import json
from typing import Any


def tool_error(result: Any) -> dict[str, Any]:
    """The ``{code, message, issues, issues_omitted, candidates}`` of an error result (an SDK ``CallToolResult``
    or a raw result dict), checking it has no structuredContent a strict client would validate."""
    if isinstance(result, dict):
        assert result["isError"] is True, result
        assert "structuredContent" not in result, result
        text = result["content"][0]["text"]
    else:
        assert result.is_error, result
        assert result.structured_content is None, result.structured_content
        text = result.content[0].text
    body = json.loads(text)
    assert isinstance(body, dict) and set(body) == {"code", "message", "issues", "issues_omitted", "candidates"}, body
    return body
