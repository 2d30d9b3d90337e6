"""Masking secrets in what setup shows: the diff's context lines and the entries before and after.

Host files hold other servers' API keys, and ``vaultctl setup`` output may land in an agent's
transcript. The diff is for seeing *where* the entry goes, so values under secret-looking keys,
token-shaped strings, and lines too long to read (a one-line JSON file) are not shown. This is
display hygiene, not a guarantee; errors never quote file text at all.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
MAX_LINE = 240

_WORDS = (
    r"(?:token|secret|passw|pwd|api[_-]?key|apikey|private[_-]?key|access[_-]?key|auth|bearer"
    r"|credential|cookie|session|signature)"
)
_STR = r'"(?:[^"\\\n]|\\.)*"'
_JSON_PAIR = re.compile(rf'("(?:[^"\\\n]|\\.)*{_WORDS}(?:[^"\\\n]|\\.)*"\s*:\s*){_STR}', re.IGNORECASE)
_TOML_PAIR = re.compile(rf"""((?:^|[\s,{{])[\w.\-"']*{_WORDS}[\w.\-"']*\s*=\s*)(?:{_STR}|'[^'\n]*')""", re.IGNORECASE)
_ASSIGN = re.compile(rf"(\b\w*{_WORDS}\w*=)[^\s\"',]+", re.IGNORECASE)
_BEARER = re.compile(r"(\bbearer\s+)[^\s\"',]+", re.IGNORECASE)
_SHAPED = re.compile(
    r"\b(?:sk|pk|rk|ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs]|AKIA|AIza)[-_A-Za-z0-9]{8,}"
    r"|(?<![\w/.\-])[A-Za-z0-9_\-+=]{32,}(?![\w/.\-])"
)
_SECRET_KEY = re.compile(_WORDS, re.IGNORECASE)


def redact_text(text: str) -> str:
    """Mask secret-looking values in each line; replace lines too long to show."""
    return "\n".join(_line(line) for line in text.split("\n"))


def redact_value(value: Any) -> Any:
    """A copy of an entry with values under secret-looking keys masked."""
    if isinstance(value, dict):
        return {k: MASK if _SECRET_KEY.search(str(k)) else redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, str):
        return _mask_shapes(value)
    return value


def _line(line: str) -> str:
    masked = _JSON_PAIR.sub(rf'\1"{MASK}"', line)
    masked = _TOML_PAIR.sub(rf'\1"{MASK}"', masked)
    masked = _mask_shapes(masked)
    if len(masked) > MAX_LINE:
        return f"{masked[:1]}[a line of {len(line)} characters, not shown]"
    return masked


def _mask_shapes(text: str) -> str:
    text = _ASSIGN.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    return _SHAPED.sub(lambda m: MASK if _looks_random(m[0]) else m[0], text)


def _looks_random(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
