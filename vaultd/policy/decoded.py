"""The decoded frontmatter as screenable lines, so YAML escapes cannot hide a value.

``token: "\\x67hp_..."`` reads as harmless text but decodes to a token. Screening the raw text
and also these lines (``key.path: value``, one per scalar, the key kept so that an assignment
rule sees its context) closes that gap. Output is bounded: at most :data:`MAX_SCALARS` scalars
of at most :data:`MAX_SCALAR_CHARS` characters each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_SCALARS: Final = 4096
MAX_SCALAR_CHARS: Final = 8192


def _walk(value: Any, key: str, depth: int) -> Iterator[str]:
    if depth > 64:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{key}.{k}" if key else str(k), depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key, depth + 1)
    elif value is not None:
        text = str(value)[:MAX_SCALAR_CHARS]
        for part in text.splitlines() or [""]:
            yield f"{key}: {part}"


def decoded_lines(data: dict[str, Any] | None, line: int = 1) -> list[tuple[int, str]]:
    """``(line, "key: value")`` for every decoded scalar of ``data``, all attributed to ``line``.

    Pass the header's first line as ``line``; feed the result to
    :func:`~vaultd.policy.secrets.scan_secret_lines` or
    :func:`~vaultd.policy.pii.pii_line_findings` next to the raw text's lines.
    """
    if not data:
        return []
    out: list[tuple[int, str]] = []
    for text in _walk(data, "", 0):
        out.append((line, text))
        if len(out) >= MAX_SCALARS:
            break
    return out
