"""Read-side privacy: which notes a channel may see (P04 for a write it may not make).

A vault's ``private_paths`` are globs, matched like ``deny_paths`` (on the normalized key of glob
and path, see :func:`~vaultd.policy.paths.matching_glob`). Notes and files there do not exist for
the channels in :data:`HIDDEN_FROM` (agents, over MCP): every read method filters through one
:class:`Visibility`, and a write there is refused before it is planned, so probing by writing
tells nothing either. People's channels (the CLI, editors) see everything.

A private note still resolves as a link target, so a visible note's link to it is not reported
dead; such a link shows as resolved with no path, and its anchor is not checked (that would tell
what headings the note has).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from vaultd.policy.paths import matching_glob
from vaultd.vault.link_targets import Resolution, ResolutionStatus

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from protocol.methods.vaults import VaultEntry
    from vaultd.vault.index import VaultIndex

#: Channels for which private paths do not exist.
HIDDEN_FROM: Final = frozenset({Channel.MCP})

#: Where a note path may end inside free text (a log line), and where one may begin.
_PATH_END: Final = re.compile(r"\.md(?![\w.])", re.IGNORECASE)
_PATH_START: Final = frozenset(" \t([{\"'`→—|,;:<>")
_FIELD_SEP: Final = re.compile("  | → ")
_WIKI_TARGET: Final = re.compile(r"\[\[([^\]|#^\n]{1,512})")
#: Candidate paths tried in one text at most; a text offering more is treated as naming a hidden note.
MAX_CANDIDATES: Final = 512

#: Said instead of the path, so a refusal does not name a note the caller may not see.
PRIVATE_WRITE: Final = "the vault's private_paths keep this path from agents; write it from the CLI"


#: Answers kept per glob set, so a listing of a large vault matches each path once, not per call.
MAX_REMEMBERED: Final = 1 << 18
_SHARED: dict[tuple[str, ...], dict[str, bool]] = {}


class Visibility:
    """What one caller sees of one vault. Answers are cached: read methods ask per note."""

    __slots__ = ("_globs", "_seen")

    def __init__(self, private_globs: Sequence[str]) -> None:
        self._globs = tuple(private_globs)
        # Whether a path is private depends on the path and the globs alone, so every caller
        # with the same globs shares one memo (dropped whole when it grows past its bound).
        if len(_SHARED) > 64:
            _SHARED.clear()
        self._seen = _SHARED.setdefault(self._globs, {}) if self._globs else {}

    @classmethod
    def of(cls, entry: VaultEntry, channel: Channel) -> Visibility:
        return cls(entry.private_paths if channel in HIDDEN_FROM else ())

    @property
    def hides_anything(self) -> bool:
        return bool(self._globs)

    def hidden(self, path: str) -> bool:
        """Whether ``path`` (vault-relative) is private to this caller."""
        if not self._globs:
            return False
        known = self._seen.get(path)
        if known is None:
            if len(self._seen) >= MAX_REMEMBERED:
                self._seen.clear()
            known = self._seen[path] = matching_glob(path, self._globs) is not None
        return known

    def visible(self, path: str) -> bool:
        return not self.hidden(path)

    def only_visible(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if not self.hidden(p)]

    def names_hidden(self, text: str) -> bool:
        """Whether free text (a log line) names a path private to this caller.

        The log's lines name the notes an operation wrote, by path and in their summaries; a
        path may hold spaces, so every span that ends in ``.md`` and starts at the text's start or
        after a separator is tried, with the wiki-link targets. Past :data:`MAX_CANDIDATES` the
        text is treated as naming one: hiding a line loses nothing, showing it might.
        """
        if not self._globs:
            return False
        for count, candidate in enumerate(mentioned_paths(text)):
            if count >= MAX_CANDIDATES:
                return True
            if self.hidden(candidate) or self.hidden(candidate.removeprefix(".trash/")):
                return True
        return False

    def names_hidden_in(self, text: str, index: VaultIndex | None) -> bool:
        """Like :meth:`names_hidden`, with link targets resolved as the vault resolves them.

        A person's ``[[Plan]]`` names ``private/Plan.md`` although neither ``Plan`` nor
        ``Plan.md`` matches the private globs; only the index knows where the name leads. A name
        two notes share is not the private one's to hide (the visible twin is what agents see).
        """
        if not self._globs:
            return False
        if self.names_hidden(text):
            return True
        if index is None:
            return False
        for count, match in enumerate(_WIKI_TARGET.finditer(text)):
            if count >= MAX_CANDIDATES:
                return True
            target = match.group(1).strip()
            if not target:
                continue
            res = index.resolver.resolve(target, "")
            if res.status == ResolutionStatus.RESOLVED and res.path is not None and self.hidden(res.path):
                return True
        return False

    def resolution(self, res: Resolution) -> Resolution:
        """A link's resolution as this caller sees it: a name a private note shares with one
        visible note names the visible one; shared only by private notes, it resolves to a note
        the caller may not see (which every reader then shows as private)."""
        if res.status != ResolutionStatus.AMBIGUOUS or not self._globs:
            return res
        kept = self.only_visible(res.candidates)
        if len(kept) == 1:
            return Resolution(ResolutionStatus.RESOLVED, kept[0])
        if not kept:
            return Resolution(ResolutionStatus.RESOLVED, res.candidates[0])
        return Resolution(ResolutionStatus.AMBIGUOUS, candidates=kept, reason=f"{len(kept)} notes share this name")

    def write_issue(self, path: str) -> Issue | None:
        """P04 for a write this caller may not make; the issue does not carry the path."""
        return Issue(code=IssueCode.P04, message=PRIVATE_WRITE) if self.hidden(path) else None


def mentioned_paths(text: str) -> Iterator[str]:
    """Every span of ``text`` that may be a vault-relative note path, nearest starts first."""
    floor = 0  # a path does not run through an earlier ".md"
    for match in _PATH_END.finditer(text):
        end = match.end()
        for start in range(match.start() - 1, floor - 1, -1):
            if start == floor or text[start - 1] in _PATH_START:
                candidate = text[start:end].strip()
                if len(candidate) > 3:
                    yield candidate
        floor = end
    for field in _FIELD_SEP.split(text):  # a log line's fields: its route names paths of any kind
        if field.strip():
            yield field.strip()
    for match in _WIKI_TARGET.finditer(text):
        target = match.group(1).strip()
        if target:
            yield target
            yield f"{target}.md"


#: Said in place of a string that names a path private to an agent, where a reply leaves the daemon.
REDACTED: Final = "[private]"
#: Fields holding a vault's registry entry: its settings, shown to agents as configured but for
#: the private globs and a private log path (see ``settings`` in :func:`screened`).
SETTINGS_FIELDS: Final = frozenset({"entry"})


def screened(
    value: Any,
    views: Sequence[tuple[Visibility, VaultIndex | None]],
    keep: frozenset[str] = frozenset(),
    given: Sequence[str] = (),
) -> tuple[Any, int]:
    """``value`` (JSON builtins) with every string naming a private path replaced, and how many.

    The last line of the read side's privacy: each read method already leaves private notes out,
    and this pass, run on every reply to an agent, catches any free-text field a method forgot (a
    summary, a commit subject, a candidate list, a message), so one missed filter cannot leak a
    private name. A dict entry whose key names one is dropped. ``keep`` names top-level fields that
    hold a visible note's own bytes (a note read's body), which must reach the agent unchanged: a
    body rewritten here would be written back changed. ``given`` are the caller's own words (its
    params): an answer may echo them, and they tell the caller nothing it did not know.
    """
    count = 0
    echoes = sorted({g for g in given if len(g) <= 4096}, key=len, reverse=True)

    def hides(text: str) -> bool:
        for echo in echoes:
            if echo in text:
                text = text.replace(echo, "\x00")
        return any(view.names_hidden_in(text, index) for view, index in views)

    def walk(node: Any) -> Any:
        nonlocal count
        if isinstance(node, str):
            if hides(node):
                count += 1
                return REDACTED
            return node
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, dict):
            out = {}
            for key, item in node.items():
                if key in SETTINGS_FIELDS and isinstance(item, dict):
                    out[key] = settings(item)
                    continue
                if isinstance(key, str) and hides(key):
                    count += 1
                    continue
                out[key] = walk(item)
            return out
        return node

    def settings(entry: dict[str, Any]) -> dict[str, Any]:
        """A registry entry as agents see it: the private globs are not theirs to know (to them,
        those notes do not exist), nor a log path that is private; the rest is as configured."""
        nonlocal count
        shown = dict(entry)
        if shown.get("private_paths"):
            shown["private_paths"] = []
            count += 1
        log_path = shown.get("log_path")
        if isinstance(log_path, str) and hides(log_path):
            shown["log_path"] = None
            count += 1
        return shown

    if isinstance(value, dict) and keep:
        top = {}
        for key, item in value.items():
            top[key] = item if key in keep else walk(item)
        return top, count
    return walk(value), count
