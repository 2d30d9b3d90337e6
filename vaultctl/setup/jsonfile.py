"""Textual edits of an ``mcpServers`` JSON file: splice one member, keep every other byte.

The splicing itself (and why it is textual) is :mod:`vaultctl.setup.jsontext`; this module walks
only the top-level object and the ``mcpServers`` object, and proves each edit by re-parsing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl.setup.edits import Found, Put, Splice, expected_data
from vaultctl.setup.errors import CannotEditFaithfully, EntryChanged, MalformedConfig
from vaultctl.setup.jsontext import JsonText, Member, Obj, remove_member

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class JsonFormat:
    """JSON host files keyed ``mcpServers`` -> name -> entry."""

    container: str  #: the table holding every server's entry (``mcpServers``, ``mcp_servers``)
    name: str  #: vaultd's entry in it

    def parse(self, text: str, path: Path) -> JsonDocument:
        """Validate strictly and index the members setup may touch.

        Raises:
            MalformedConfig: VALIDATION, not strict JSON, or not the shape hosts expect.
        """
        return JsonDocument(text, path, self.container, self.name)

    def fresh(self, entry: dict[str, Any]) -> str:
        return json.dumps({self.container: {self.name: entry}}, indent=2, ensure_ascii=False) + "\n"

    def manual(self, entry: dict[str, Any], text: str | None) -> str:
        return self.fresh(entry)

    def value_of(self, text: str) -> Any:
        return json.loads(text)


class JsonDocument:
    """One parsed JSON host file and the two edits setup makes to it."""

    def __init__(self, text: str, path: Path, container: str, name: str) -> None:
        self.json = JsonText(text, path)
        self.text = text
        self.path = path
        self.container = container
        self.name = name
        self.data = self.json.data
        self.servers_member = self.json.only(self.json.top, container)
        self.servers: Obj | None = None
        self.entry_member: Member | None = None
        if self.servers_member is not None:
            if not isinstance(self.servers_member.value, dict):
                raise MalformedConfig(
                    f'In {path}, "{container}" is not an object; fix it (or remove it) and run setup again.',
                    path=path,
                )
            self.servers = self.json.object_at(self.servers_member.value_start)
            self.entry_member = self.json.only(self.servers, name)

    def entry(self) -> Found | None:
        m = self.entry_member
        return None if m is None else Found(m.value)

    def put(self, entry: dict[str, Any]) -> Put:
        if self.entry_member is not None:
            assert self.servers is not None
            m = self.entry_member
            splice = Splice(m.value_start, m.value_end, self.json.render_member_value(m, self.servers, entry))
            prior = self.text[m.value_start : m.value_end]
            put = Put(splice, prior_text=prior, container_existed=True, spacing=None)
        elif self.servers is not None:
            splice, spacing = self.json.insert_member(self.servers, self.name, entry)
            put = Put(splice, prior_text=None, container_existed=True, spacing=spacing)
        else:
            splice, spacing = self.json.insert_member(self.json.top, self.container, {self.name: entry})
            put = Put(splice, prior_text=None, container_existed=False, spacing=spacing)
        self._verify(splice, present=True, value=entry, drop_empty=False)
        return put

    def revert(self, prior_text: str | None, container_existed: bool, spacing: str | None) -> Splice:
        m = self.entry_member
        if m is None or self.servers is None or self.servers_member is None:
            raise EntryChanged(f"{self.path} has no vaultd entry to undo.", path=self.path)
        if prior_text is not None:
            splice = Splice(m.value_start, m.value_end, prior_text)
            self._verify(splice, present=True, value=json.loads(prior_text), drop_empty=False)
            return splice
        if not container_existed and len(self.servers.members) == 1:
            splice = remove_member(self.json.top, self.servers_member, spacing)
        else:
            splice = remove_member(self.servers, m, spacing if container_existed else None)
        self._verify(splice, present=False, value=None, drop_empty=not container_existed)
        return splice

    def _verify(self, splice: Splice, *, present: bool, value: Any, drop_empty: bool) -> None:
        """Refuse unless the edited text parses to exactly the intended data."""
        try:
            after = self.json.reparse(splice)
        except ValueError as exc:
            raise self._unfaithful() from exc
        if after != expected_data(self.data, self.container, self.name, value, present=present, drop_empty=drop_empty):
            raise self._unfaithful()

    def _unfaithful(self) -> CannotEditFaithfully:
        return CannotEditFaithfully(
            f"setup cannot change the vaultd entry in {self.path} without disturbing the rest of "
            "the file; nothing was written. Edit the entry by hand.",
            path=self.path,
        )
