"""Textual edits of a TOML host file (Codex): the ``[mcp_servers.vaultd]`` table, nothing else.

Why textual rather than tomlkit's document model: tomlkit prints back the bytes it parsed, but
adding and deleting tables moves the blank lines around them, so undo would not restore the
same bytes. Instead a new table is appended at the end of the file (always a valid place for
one) and an existing table keeps its header line while its body is replaced in place; tomllib
then re-reads every result to prove that only the entry changed, and anything it cannot prove
(an inline ``vaultd = {...}``, dotted keys, sub-tables) is refused. tomlkit only renders the
values, so strings are escaped the way TOML requires. Both are imported when a TOML file is met.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl.setup.edits import Found, Put, Splice, expected_data
from vaultctl.setup.errors import CannotEditFaithfully, EntryChanged, MalformedConfig

if TYPE_CHECKING:
    from pathlib import Path

_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\r\n]|\\.)*"|'[^'\r\n]*')"""
_TABLE_HEADER = re.compile(
    rf"^(?P<line>[ \t]*\[[ \t]*(?P<a>{_KEY})[ \t]*\.[ \t]*(?P<b>{_KEY})[ \t]*\][ \t]*(?:#[^\r\n]*)?)\r?$",
    re.MULTILINE,
)
_ANY_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_POSITION = re.compile(r"at line (\d+), column (\d+)")


@dataclass(frozen=True, slots=True)
class _Block:
    header_start: int  #: start of the ``[mcp_servers.vaultd]`` line
    body_start: int  #: end of the header line's text (before its newline)
    content_end: int  #: end of the last key line's text; trailing blanks and comments stay out


@dataclass(frozen=True, slots=True)
class TomlFormat:
    """TOML host files keyed ``[mcp_servers.<name>]``."""

    container: str  #: the table holding every server's entry (``mcpServers``, ``mcp_servers``)
    name: str  #: vaultd's entry in it

    def parse(self, text: str, path: Path) -> TomlDocument:
        """Validate and index the table setup may touch.

        Raises:
            MalformedConfig: VALIDATION, not TOML, or ``mcp_servers`` is not a table.
        """
        return TomlDocument(text, path, self.container, self.name)

    def fresh(self, entry: dict[str, Any]) -> str:
        return f"[{self.container}.{self.name}]" + _body(entry, "\n") + "\n"

    def manual(self, entry: dict[str, Any], text: str | None) -> str:
        """A ``[mcp_servers.vaultd]`` table, unless the file writes ``mcp_servers`` inline: TOML
        then allows no such table, and the hint says where in that line the entry goes, proven by
        re-reading the whole file with the entry put there. The user's line is never echoed (it
        may hold another server's secrets)."""
        hint = None if text is None else _inline_hint(text, self.container, self.name, entry)
        return hint if hint is not None else self.fresh(entry)

    def value_of(self, text: str) -> Any:
        return tomllib.loads(text)


class TomlDocument:
    """One parsed TOML host file and the two edits setup makes to it."""

    def __init__(self, text: str, path: Path, container: str, name: str) -> None:
        self.text = text
        self.path = path
        self.container = container
        self.name = name
        self.newline = "\r\n" if "\r\n" in text else "\n"
        try:
            self.data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # tomllib's messages may quote a key or a character; give only the position.
            where = _POSITION.search(str(exc))
            at = f" at line {where[1]}, column {where[2]}" if where else ""
            raise MalformedConfig(f"{path} is not valid TOML{at}; fix it and run setup again.", path=path) from exc
        servers = self.data.get(container)
        if servers is not None and not isinstance(servers, dict):
            raise MalformedConfig(
                f"In {path}, {container} is not a table; fix it (or remove it) and run setup again.",
                path=path,
            )
        self.servers: dict[str, Any] | None = servers

    def entry(self) -> Found | None:
        if self.servers is None or self.name not in self.servers:
            return None
        return Found(self.servers[self.name])

    def put(self, entry: dict[str, Any]) -> Put:
        text, nl = self.text, self.newline
        if self.entry() is not None:
            block = self._block()
            splice = Splice(block.body_start, block.content_end, _body(entry, nl))
            prior = text[block.body_start : block.content_end]
            put = Put(splice, prior_text=prior, container_existed=True, spacing=None)
        else:
            if not text or text.endswith(("\n\n", "\r\n\r\n")):
                lead = ""
            elif text.endswith("\n"):
                lead = nl
            else:
                lead = nl + nl
            table = f"{lead}[{self.container}.{self.name}]" + _body(entry, nl) + nl
            splice = Splice(len(text), len(text), table)
            put = Put(splice, prior_text=None, container_existed=self.servers is not None, spacing=lead)
        self._verify(splice, present=True, value=entry, drop_empty=False)
        return put

    def revert(self, prior_text: str | None, container_existed: bool, spacing: str | None) -> Splice:
        if self.entry() is None:
            raise EntryChanged(f"{self.path} has no vaultd entry to undo.", path=self.path)
        text = self.text
        block = self._block()
        if prior_text is not None:
            splice = Splice(block.body_start, block.content_end, prior_text)
            self._verify(splice, present=True, value=tomllib.loads(prior_text), drop_empty=False)
            return splice
        start = block.header_start
        if spacing and text[max(0, start - len(spacing)) : start] == spacing:
            start -= len(spacing)
        end = block.content_end
        end += 2 if text.startswith("\r\n", end) else 1 if text.startswith("\n", end) else 0
        splice = Splice(start, end, "")
        self._verify(splice, present=False, value=None, drop_empty=not container_existed)
        return splice

    def _block(self) -> _Block:
        """Find the ``[mcp_servers.vaultd]`` table's text, or refuse if it is written otherwise."""
        text = self.text
        header = next(
            (
                m
                for m in _TABLE_HEADER.finditer(text)
                if (_key(m["a"]), _key(m["b"])) == (self.container, self.name) and _at_top(text, m.start())
            ),
            None,
        )
        if header is None:
            raise CannotEditFaithfully(
                f"The vaultd entry in {self.path} is not written as a [{self.container}.{self.name}] "
                "table, so setup cannot change it without reformatting; nothing was written. "
                "Edit it by hand.",
                path=self.path,
            )
        body_start = header.end("line")
        after_header = header.end() + 1
        block_end = next(
            (m.start() for m in _ANY_HEADER.finditer(text, after_header) if _at_top(text, m.start())),
            len(text),
        )
        content_end = body_start
        pos = after_header
        while pos < block_end:
            stop = text.find("\n", pos, block_end)
            stop = block_end if stop < 0 else stop
            line = text[pos:stop].rstrip("\r")
            stripped = line.strip(" \t")
            if stripped and not stripped.startswith("#"):
                content_end = pos + len(line)
            pos = stop + 1
        return _Block(header.start(), body_start, content_end)

    def _verify(self, splice: Splice, *, present: bool, value: Any, drop_empty: bool) -> None:
        """Refuse unless the edited text parses to exactly the intended data."""
        try:
            after = tomllib.loads(splice.apply(self.text))
        except tomllib.TOMLDecodeError as exc:
            raise self._unfaithful() from exc
        if after != expected_data(self.data, self.container, self.name, value, present=present, drop_empty=drop_empty):
            raise self._unfaithful()

    def _unfaithful(self) -> CannotEditFaithfully:
        return CannotEditFaithfully(
            f"setup cannot change the vaultd entry in {self.path} without disturbing the rest of "
            f"the file (is {self.container} written inline, or does the entry have sub-tables?); "
            "nothing was written. Edit the entry by hand.",
            path=self.path,
        )


def _body(entry: dict[str, Any], nl: str) -> str:
    """The entry's key lines, each led by a newline (so the header line keeps its own ending).

    A table value (``env``) is written inline: as a sub-table it would need a header of its own
    after the keys, which this one-table edit does not make.
    """
    lines = _tomlkit().dumps(_inline_tables(entry)).rstrip("\n").split("\n")
    return "".join(nl + line for line in lines)


def _tomlkit() -> Any:
    import tomlkit  # lazily: only a TOML host pays for it

    return tomlkit


def _inline_tables(entry: dict[str, Any]) -> dict[str, Any]:
    tomlkit = _tomlkit()
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if isinstance(value, dict):
            table = tomlkit.inline_table()
            table.update(value)
            value = table
        out[key] = value
    return out


_INLINE_CONTAINER = r"^[ \t]*(?P<key>{key})[ \t]*=[ \t]*\{{"


def _inline_hint(text: str, container: str, name: str, entry: dict[str, Any]) -> str | None:
    """The hint for a file whose ``container`` is an inline table, or None if it is not one."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    if not isinstance(data.get(container), dict):
        return None
    lines = text.split("\n")
    pattern = re.compile(_INLINE_CONTAINER.format(key=_KEY))
    for number, line in enumerate(lines):
        match = pattern.match(line)
        if match is None or _key(match["key"]) != container or not _at_top(text, _offset(lines, number)):
            continue
        tomlkit = _tomlkit()
        try:
            doc = tomlkit.parse(line.rstrip("\r"))
            table = doc[container]
            entry_table = tomlkit.inline_table()
            entry_table.update(_inline_tables(entry))
            table[name] = entry_table
            rewritten = tomlkit.dumps(doc).rstrip("\n")
        except Exception:  # noqa: BLE001 - tomlkit's errors have no common base; no hint then
            return None
        trial = "\n".join([*lines[:number], rewritten + ("\r" if line.endswith("\r") else ""), *lines[number + 1 :]])
        try:
            after = tomllib.loads(trial)
        except tomllib.TOMLDecodeError:
            return None
        if after != expected_data(data, container, name, entry, present=True, drop_empty=False):
            return None
        pair = tomlkit.dumps({name: entry_table}).rstrip("\n")
        where = f"{container} is written inline on line {number + 1}, where TOML allows no [{container}.{name}] table"
        if name in data[container]:
            return f"# {where}; in its braces, replace the {name} entry with:\n{pair}\n"
        return f"# {where}; inside its braces, after the last entry and a comma, add:\n{pair}\n"
    return None


def _offset(lines: list[str], number: int) -> int:
    return sum(len(line) + 1 for line in lines[:number])


def _key(token: str) -> str:
    if token.startswith('"'):
        return str(tomllib.loads(f"k = {token}")["k"])
    if token.startswith("'"):
        return token[1:-1]
    return token


def _at_top(text: str, pos: int) -> bool:
    """Is ``pos`` (a line start) outside every multi-line string and array?

    A valid document cut at a line boundary parses only if the cut is at the top level, so
    tomllib answers without a tokenizer of our own.
    """
    try:
        tomllib.loads(text[:pos])
    except tomllib.TOMLDecodeError:
        return False
    return True
