"""Redaction (T07, T08): a secret already written in a note or in the operation log becomes
:data:`~vaultd.tidy.model.MARKER`.

In a note's body the secret's own characters go; in its frontmatter the whole value of the field
that holds it (the key stays, so the header stays valid YAML). A line that still looks like a
secret once its spans are replaced (a form only NFKC shows, a credential the span finder did not
bound) loses everything after its indentation and list marker: redaction fails closed. A secret in
a header comment is outside any value: it is reported for a person, never guessed at. The records
name rule, file and line, never the secret.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from protocol.issue_codes import IssueCode
from vaultd.policy.secrets import scan_secrets, secret_spans
from vaultd.tidy.model import MARKER
from vaultd.vault.frontmatter_emit import emit, key_spans

if TYPE_CHECKING:
    from vaultd.tidy.model import Work

_LEAD = re.compile(r"[ \t]*(?:(?:[-*+]|[0-9]{1,9}[.)])[ \t]+)?(?:>[ \t]*)*")


def redact_line(line: str) -> str:
    """``line`` (without its line break) with every secret replaced by the marker."""
    out = line
    for start, end in reversed(secret_spans(out)):
        out = out[:start] + MARKER + out[end:]
    if scan_secrets(out):
        lead = _LEAD.match(out)
        out = (lead.group(0) if lead else "") + MARKER
    return out


def redact_lines(text: str, first: int = 0) -> tuple[str, list[int]]:
    """``text`` with every line from ``first`` (a character offset) redacted where it holds a secret;
    and the 1-based lines (of ``text``) that changed."""
    head, rest = text[:first], text[first:]
    base = head.count("\n")
    lines = rest.split("\n")
    changed: list[int] = []
    for finding in scan_secrets(rest):
        i = finding.line - 1
        line = lines[i]
        cr = "\r" if line.endswith("\r") else ""
        new = redact_line(line.removesuffix("\r")) + cr
        if new != line:
            lines[i] = new
            changed.append(base + finding.line)
    return head + "\n".join(lines), sorted(set(changed))


def _redacted_value(key: str, value: Any, raw: str) -> Any:
    """The value a frontmatter field gets: the marker in place of each item holding a secret."""

    def holds(item: Any) -> bool:
        return isinstance(item, str) and bool(scan_secrets(item) or scan_secrets(f"{key}: {item}"))

    if isinstance(value, list):
        items = [MARKER if holds(item) else item for item in value]
        return items if items != value else [MARKER] * len(value)
    if holds(value) or scan_secrets(raw):
        return MARKER
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _header_holds_secret(header: str, data: dict[str, Any]) -> bool:
    """Whether any field may hold a secret, as written or as decoded (a YAML escape can hide one);
    only then is the header mapped to its keys, which costs a full parse."""
    decoded = "\n".join(f"{key}: {s}" for key, value in data.items() for s in _strings(value) if "\n" not in s)
    multiline = [s for value in data.values() for s in _strings(value) if "\n" in s]
    return bool(scan_secrets(header) or scan_secrets(decoded) or any(scan_secrets(s) for s in multiline))


def redact_secrets(work: Work) -> None:
    """T07 over one note: frontmatter values first, then the body."""
    parsed = work.parsed()
    header_lines: set[int] = set()
    if parsed.data and _header_holds_secret(work.text[: parsed.body_offset], parsed.data):
        spans = key_spans(work.text)
        changes: dict[str, Any] = {}
        for key, value in parsed.data.items():
            if key not in spans:
                continue
            start, end = spans[key]
            raw = work.text[start:end]
            if scan_secrets(raw) or any(scan_secrets(s) or scan_secrets(f"{key}: {s}") for s in _strings(value)):
                new = _redacted_value(key, value, raw)
                if new != value:
                    changes[key] = new
                    line = work.line_of(start)
                    header_lines.update(range(line, work.line_of(end - 1) + 1))
                    work.changed(IssueCode.T07, line, f"{key}: a secret in the value, replaced by {MARKER}")
        if changes:
            work.text = emit(work.text, changes)
            parsed = work.parsed()
    if parsed.present:
        header = work.text[: parsed.body_offset]
        for finding in scan_secrets(header):
            if finding.line not in header_lines:
                work.report(IssueCode.T07, finding.line, f"looks like {finding.rule.description} outside a value: remove it by hand")
    work.text, lines = redact_lines(work.text, parsed.body_offset)
    for line in lines:
        work.changed(IssueCode.T07, line, f"a secret in the text, replaced by {MARKER}")


def redact_log(text: str) -> tuple[str, list[int]]:
    """T08: the operation log's text with every secret replaced; and the lines that changed."""
    return redact_lines(text)
