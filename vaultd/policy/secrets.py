"""Secret screening (V06): credentials are never stored in a vault, whatever its policy.

Rules (the rule name travels in the issue; the matched text never does):

======================== =================================================================
``private-key``          a ``-----BEGIN ... PRIVATE KEY-----`` line (PEM, OpenSSH, PGP)
``aws-access-key-id``    ``AKIA`` or ``ASIA`` and 16 upper-case letters or digits
``aws-secret-key``       40 base64 characters assigned to a key naming aws and secret
``github-token``         ``ghp_ gho_ ghu_ ghs_ ghr_`` and 36+ characters, or ``github_pat_``
``gitlab-token``         ``glpat-`` and 20+ characters
``slack-token``          ``xoxa- xoxb- xoxp- xoxr- xoxs-`` and 10+ characters
``stripe-key``           ``sk_live_`` or ``rk_live_`` and 20+ characters
``google-api-key``       ``AIza`` and 35 characters
``anthropic-key``        ``sk-ant-`` and 20+ characters
``openai-key``           ``sk-`` and 32+ characters with upper case, lower case and a digit
``jwt``                  three base64url segments, the first starting ``eyJ``
``credential``           a password/secret/token/api_key/... key assigned a real-looking value
``high-entropy``         32+ base64/hex characters of high entropy next to a key-like word
======================== =================================================================

``credential``: the key is a run of ``[A-Za-z0-9_.-]`` (up to 64 characters, optionally quoted or
in Markdown emphasis) containing a key word, then ``:`` or ``=``. The value (quoted, or up to the
next whitespace) must be at least :data:`MIN_CREDENTIAL_LEN` characters and not a placeholder:
``<...>``, ``${...}``, ``{{...}}``, ``$NAME``, ``%(...)``, one repeated character (``xxxxxxxx``,
``********``), or a word such as ``changeme``, ``example``, ``placeholder``, ``redacted``,
``your-...``. The key word must end the key or be followed by ``_ . -`` (``db_password``,
``token_value``; not ``tokenizer``, ``author``). For keys that are not password-like (``token``,
``secret``, ``api_key``...) the value must hold a letter and also a digit or a symbol, so prose such
as ``Token: tokenization`` and counts such as ``token_count: 12345678`` pass.

``high-entropy``: a maximal run of 32 to 512 base64/hex characters, within 40 characters after a
key word (the credential key words, ``key`` or ``bearer``) on the same line, whose Shannon entropy is at least :data:`HEX_ENTROPY` bits per
character for pure hex or :data:`BASE64_ENTROPY` otherwise. Pure hex on a line that also speaks of
a hash (``sha``, ``hash``, ``digest``, ``checksum``, ``commit``) is never flagged, and a bare digest
without a key word never is: SHA-256 hex digests are common in notes.

Every pattern is linear in its input: each starts at a literal prefix or behind a lookbehind that
forbids starting inside a run of its own characters, and every repetition is over a class disjoint
from what follows it. The text is scanned as written and in NFKC form (line by line, for lines that
change), so full-width or other compatibility letters cannot hide a token.
"""

from __future__ import annotations

import enum
import math
import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from typing import TYPE_CHECKING, Final, NamedTuple

from protocol.errors import Issue
from protocol.issue_codes import IssueCode

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

MIN_CREDENTIAL_LEN: Final = 8
HEX_ENTROPY: Final = 3.0  #: bits per character; random hex of 32+ characters sits near 3.7-4.0
BASE64_ENTROPY: Final = 4.0  #: bits per character; random base64 of 32+ characters sits near 4.6-5.5
_VALUE_WINDOW: Final = 256  #: how far a credential value is read


class SecretRule(enum.StrEnum):
    """A secret rule; the value is the stable name shown to users."""

    PRIVATE_KEY = "private-key"
    AWS_ACCESS_KEY_ID = "aws-access-key-id"
    AWS_SECRET_KEY = "aws-secret-key"
    GITHUB_TOKEN = "github-token"
    GITLAB_TOKEN = "gitlab-token"
    SLACK_TOKEN = "slack-token"
    STRIPE_KEY = "stripe-key"
    GOOGLE_API_KEY = "google-api-key"
    ANTHROPIC_KEY = "anthropic-key"
    OPENAI_KEY = "openai-key"
    JWT = "jwt"
    CREDENTIAL = "credential"
    HIGH_ENTROPY = "high-entropy"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS: Final = {
    SecretRule.PRIVATE_KEY: "a private key block",
    SecretRule.AWS_ACCESS_KEY_ID: "an AWS access key id",
    SecretRule.AWS_SECRET_KEY: "an AWS secret access key",
    SecretRule.GITHUB_TOKEN: "a GitHub token",
    SecretRule.GITLAB_TOKEN: "a GitLab token",
    SecretRule.SLACK_TOKEN: "a Slack token",
    SecretRule.STRIPE_KEY: "a Stripe live key",
    SecretRule.GOOGLE_API_KEY: "a Google API key",
    SecretRule.ANTHROPIC_KEY: "an Anthropic API key",
    SecretRule.OPENAI_KEY: "an OpenAI-style API key",
    SecretRule.JWT: "a JSON Web Token",
    SecretRule.CREDENTIAL: "a password or credential assignment",
    SecretRule.HIGH_ENTROPY: "a high-entropy credential",
}


class SecretFinding(NamedTuple):
    """Where a rule matched. Deliberately holds no matched text."""

    rule: SecretRule
    line: int  #: 1-based, LF-separated


_T = r"(?<![A-Za-z0-9_-])"  # do not start inside a token
_E = r"(?![A-Za-z0-9_-])"  # and do not stop inside one
# A token whose own characters leave out '_' or '-' ends (and starts) where they do: a name such as
# ``ghp_<36>-2`` or ``old_ghp_<36>`` (a copy's suffix, a prefix) still holds the whole token.
_ALNUM_T, _ALNUM_E = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
#: (rule, the token, what must not follow it): a token ends where its own characters do.
_TOKEN_SPECS: Final[tuple[tuple[SecretRule, str, str], ...]] = (
    (SecretRule.PRIVATE_KEY, r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----", ""),
    (SecretRule.AWS_ACCESS_KEY_ID, r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}", r"(?![A-Za-z0-9])"),
    (
        SecretRule.AWS_SECRET_KEY,
        r"(?i)(?<![a-z0-9])aws[a-z0-9_.-]{0,20}secret[a-z0-9_.-]{0,20}[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?[A-Za-z0-9/+]{40}",
        r"(?![A-Za-z0-9/+])",
    ),
    (SecretRule.GITHUB_TOKEN, _ALNUM_T + r"gh[pousr]_[A-Za-z0-9]{36,255}", _ALNUM_E),
    (SecretRule.GITHUB_TOKEN, r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,255}", r"(?![A-Za-z0-9_])"),
    (SecretRule.GITLAB_TOKEN, _T + r"glpat-[A-Za-z0-9_-]{20,255}", _E),
    (SecretRule.SLACK_TOKEN, r"(?<![A-Za-z0-9-])xox[abprs]-[A-Za-z0-9-]{10,255}", r"(?![A-Za-z0-9-])"),
    (SecretRule.STRIPE_KEY, _ALNUM_T + r"[sr]k_live_[A-Za-z0-9]{20,255}", _ALNUM_E),
    (SecretRule.GOOGLE_API_KEY, _T + r"AIza[0-9A-Za-z_-]{35}", _E),
    (SecretRule.ANTHROPIC_KEY, _T + r"sk-ant-[A-Za-z0-9_-]{20,255}", _E),
    (SecretRule.OPENAI_KEY, _T + r"sk-(?!ant-)([A-Za-z0-9_-]{32,255})", _E),
    (SecretRule.JWT, _T + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", _E),
)
_Rules = tuple[tuple[SecretRule, re.Pattern[str]], ...]
_TOKEN_RULES: Final[_Rules] = tuple((rule, re.compile(token + end)) for rule, token, end in _TOKEN_SPECS)
#: In a file name, whatever follows a token is the name's own: a slug's ``-copy`` after a Google
#: key (whose characters include '-') does not make the key a longer word, so nothing must not follow.
_NAME_TOKEN_RULES: Final[_Rules] = tuple((rule, re.compile(token)) for rule, token, _ in _TOKEN_SPECS)

_KEY_WORD = r"pass(?:word|wd|phrase)?|secret|token|api[_.-]?key|apikey|access[_.-]?key|auth|credentials?|private[_.-]?key"
_PASSWORD_KEY = re.compile(r"(?i)pass(?:word|wd|phrase)")
_ASSIGN = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})[*_\"'`]{0,3}[ \t]{0,8}[:=][ \t]{0,8}")
# The key word must end the key or be followed by a separator: ``db_password``, ``token_value``
# and ``API_KEY`` count, ``tokenizer``, ``author`` and ``secretary`` do not.
_KEY_IN_NAME = re.compile(r"(?i)(?:" + _KEY_WORD + r")(?:$|[_.-])")
_PLACEHOLDER_PARTS: Final = (
    "changeme",
    "change-me",
    "change_me",
    "example",
    "placeholder",
    "redacted",
    "your-",
    "your_",
    "yourpass",
    "yoursecret",
    "yourtoken",
    "dummy",
    "notreal",
    "not-real",
    "not_real",
)
_PLACEHOLDER_WORDS: Final = frozenset({"password", "secret", "sample", "todo", "fixme", "none", "null", "undefined", "true", "false"})
_BLOB = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{32,512}(?![A-Za-z0-9+/=_-])")
_NEAR_KEY = re.compile(r"(?i)(?:" + _KEY_WORD + r"|bearer|key)")
_HASH_WORD = re.compile(r"(?i)sha|hash|digest|checksum|commit|md5")
_HEX = re.compile(r"[0-9a-fA-F]+")
_NEWLINE = re.compile("\n")


def _placeholder(value: str) -> bool:
    low = value.lower()
    if value[0] in "<$%{[(" or low.startswith(("os.environ", "process.env", "env.")):
        return True
    if len(set(value)) == 1:
        return True
    return low in _PLACEHOLDER_WORDS or any(part in low for part in _PLACEHOLDER_PARTS)


def _value_after(text: str, start: int) -> str:
    window = text[start : start + _VALUE_WINDOW]
    if window[:1] in ("'", '"', "`"):
        end = window.find(window[0], 1)
        inner = window[1:end] if end > 0 else window[1:]
        return inner.split("\n", 1)[0]
    return re.split(r"\s", window, maxsplit=1)[0]


def _credential(text: str, m: re.Match[str]) -> bool:
    key = m.group(1)
    if not _KEY_IN_NAME.search(key):
        return False
    value = _value_after(text, m.end()).rstrip(",;")
    if len(value) < MIN_CREDENTIAL_LEN or _placeholder(value):
        return False
    if _PASSWORD_KEY.search(key):
        return True
    return any(c.isalpha() for c in value) and any(not c.isalpha() for c in value)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _high_entropy(text: str, m: re.Match[str]) -> bool:
    line_start = text.rfind("\n", 0, m.start()) + 1
    before = text[max(line_start, m.start() - 40) : m.start()]
    if not _NEAR_KEY.search(before):
        return False
    blob = m.group(0)
    if _HEX.fullmatch(blob):
        line_end = text.find("\n", m.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        return not _HASH_WORD.search(line) and _entropy(blob) >= HEX_ENTROPY
    has_digit = any(c.isdigit() for c in blob)
    return has_digit and _entropy(blob) >= BASE64_ENTROPY


def _mixed(token: str) -> bool:
    return any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)


def _raw_findings(text: str, rules: _Rules = _TOKEN_RULES) -> Iterator[tuple[SecretRule, int]]:
    """(rule, character offset) for every match in ``text``."""
    for rule, pattern in rules:
        for m in pattern.finditer(text):
            if rule is SecretRule.OPENAI_KEY and not _mixed(m.group(1)):
                continue
            yield rule, m.start()
    # One finding per line is all that is reported, so skip the rest of a line once it is found.
    done = -1
    for m in _ASSIGN.finditer(text):
        if m.start() > done and _credential(text, m):
            yield SecretRule.CREDENTIAL, m.start()
            done = _line_end(text, m.start())
    done = -1
    for m in _BLOB.finditer(text):
        if m.start() > done and _high_entropy(text, m):
            yield SecretRule.HIGH_ENTROPY, m.start()
            done = _line_end(text, m.start())


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


_GENERIC: Final = frozenset({SecretRule.CREDENTIAL, SecretRule.HIGH_ENTROPY})


def _scan_one(text: str, first_line: int, found: set[tuple[SecretRule, int]], rules: _Rules) -> None:
    starts = [m.start() for m in _NEWLINE.finditer(text)]
    for rule, offset in _raw_findings(text, rules):
        found.add((rule, first_line + bisect_right(starts, offset - 1)))


def _scan_lines(numbered: Iterable[tuple[int, str]], rules: _Rules = _TOKEN_RULES) -> list[SecretFinding]:
    found: set[tuple[SecretRule, int]] = set()
    pairs = list(numbered)
    joined = "\n".join(line for _, line in pairs)
    index_to_number = [number for number, _ in pairs]
    raw: set[tuple[SecretRule, int]] = set()
    _scan_one(joined, 1, raw, rules)
    for number, line in pairs:
        if not line.isascii():
            nfkc = unicodedata.normalize("NFKC", line)
            if nfkc != line:
                for rule, _ in _raw_findings(nfkc, rules):
                    found.add((rule, number))
    found |= {(rule, index_to_number[i - 1]) for rule, i in raw}
    # A specific rule says more than the generic ones, and a credential assignment more than a
    # high-entropy string: report only the most specific finding of a line.
    specific = {line for rule, line in found if rule not in _GENERIC}
    assigned = {line for rule, line in found if rule is SecretRule.CREDENTIAL}
    kept = {(r, n) for r, n in found if r not in _GENERIC or (n not in specific and (r is SecretRule.CREDENTIAL or n not in assigned))}
    return [SecretFinding(r, n) for r, n in sorted(kept, key=lambda f: (f[1], list(SecretRule).index(f[0])))]


def scan_secrets(text: str) -> list[SecretFinding]:
    """Every (rule, line) that looks like a secret in ``text`` or its NFKC form, each once, by line."""
    return _scan_lines(enumerate(text.split("\n"), start=1))


def scan_name_secrets(text: str) -> list[SecretFinding]:
    """Like :func:`scan_secrets` for a file name: a token is one whatever the name adds after it."""
    return _scan_lines(enumerate(text.split("\n"), start=1), _NAME_TOKEN_RULES)


def scan_secret_lines(lines: Iterable[tuple[int, str]]) -> list[SecretFinding]:
    """Like :func:`scan_secrets` over chosen lines, such as :func:`~vaultd.policy.added.added_lines`."""
    return _scan_lines(lines)


def _issues(findings: list[SecretFinding], path: str | None) -> list[Issue]:
    return [
        Issue(
            code=IssueCode.V06,
            message=(f"line {f.line}: looks like {f.rule.description} (rule {f.rule.value}); remove it — secrets are never stored"),
            path=path,
            line=f.line,
        )
        for f in findings
    ]


def secret_issues(text: str, path: str | None = None) -> list[Issue]:
    """V06 errors for every secret in ``text``; messages name the rule and line, never the value."""
    return _issues(scan_secrets(text), path)


def secret_line_issues(lines: Iterable[tuple[int, str]], path: str | None = None) -> list[Issue]:
    """V06 errors for the given ``(line number, text)`` pairs only."""
    return _issues(scan_secret_lines(lines), path)


def _credential_value_span(text: str, m: re.Match[str]) -> tuple[int, int]:
    start = m.end()
    if text[start : start + 1] in ("'", '"', "`"):
        start += 1
    return start, start + len(_value_after(text, m.end()))


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets of ``text`` sit (character offsets, merged, in order), for a redaction:
    a token's own characters, a credential assignment's value, a high-entropy blob. A secret only
    the NFKC form shows has no span here; :func:`scan_secrets` still finds it, and a redaction
    that leaves a finding behind must then redact more (the whole line)."""
    spans: list[tuple[int, int]] = []
    for _rule, pattern in _TOKEN_RULES:
        for m in pattern.finditer(text):
            if _rule is SecretRule.OPENAI_KEY and not _mixed(m.group(1)):
                continue
            spans.append(m.span())
    for m in _ASSIGN.finditer(text):
        if _credential(text, m):
            spans.append(_credential_value_span(text, m))
    for m in _BLOB.finditer(text):
        if _high_entropy(text, m):
            spans.append(m.span())
    merged: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
