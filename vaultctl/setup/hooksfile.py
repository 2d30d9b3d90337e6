"""Textual edits of a host's ``hooks`` object: append one matcher group to an event's array, or
take it out again, and keep every other byte.

Hosts run every group of an event (Claude Code, Codex and Gemini CLI all merge them), so the
guard's group is appended after the user's own: nothing of theirs is replaced or moved, and a
host that keys its hooks by position (Codex keys a hook's trust by its index) keeps every key of
theirs. Where ``hooks`` or the event's array is missing it is created around the group, and the
record says so, so that undo takes out exactly what setup put in. Each splice is proven by
re-parsing the result and comparing it with the intended data.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl.setup.edits import Splice
from vaultctl.setup.errors import CannotEditFaithfully, MalformedConfig
from vaultctl.setup.jsontext import Arr, Element, JsonText, Member, Obj, remove_element, remove_member

if TYPE_CHECKING:
    from pathlib import Path

HOOKS_KEY = "hooks"


class Created(enum.StrEnum):
    """What setup had to create to hold a group, which is what undo takes out."""

    HOOKS = "hooks"  #: the whole ``hooks`` object (the file had none)
    EVENT = "event"  #: the event's array inside ``hooks``
    ELEMENT = "element"  #: only the group, appended to the user's own array


@dataclass(frozen=True, slots=True)
class Added:
    """One group put in: the splice, and what undo needs to take it out byte for byte."""

    splice: Splice
    created: Created
    spacing: str | None  #: inner whitespace of the empty object or array the group filled


class HooksDocument:
    """One parsed JSON host file, seen through its ``hooks`` object.

    Raises:
        MalformedConfig: VALIDATION, not strict JSON, ``hooks`` is not an object, an event is
            not an array, or a key is written twice where setup looks.
    """

    def __init__(self, text: str, path: Path) -> None:
        self.json = JsonText(text, path)
        self.text = text
        self.path = path
        self.data = self.json.data
        self.hooks_member = self.json.only(self.json.top, HOOKS_KEY)
        self.hooks: Obj | None = None
        if self.hooks_member is not None:
            if not isinstance(self.hooks_member.value, dict):
                raise MalformedConfig(
                    f'In {path}, "{HOOKS_KEY}" is not an object; fix it (or remove it) and run setup again.',
                    path=path,
                )
            self.hooks = self.json.object_at(self.hooks_member.value_start)

    def groups(self, event: str) -> list[Any]:
        """The event's groups as data ([] when it has none)."""
        found = self._event(event)
        return [] if found is None else [el.value for el in found[1].elements]

    def add(self, event: str, group: dict[str, Any]) -> Added:
        """Append ``group`` to the event's array, creating the array or ``hooks`` when missing."""
        if self.hooks is None:
            splice, spacing = self.json.insert_member(self.json.top, HOOKS_KEY, {event: [group]})
            added = Added(splice, Created.HOOKS, spacing)
        elif (found := self._event(event)) is None:
            splice, spacing = self.json.insert_member(self.hooks, event, [group])
            added = Added(splice, Created.EVENT, spacing)
        else:
            splice, spacing = self.json.append_element(found[1], group)
            added = Added(splice, Created.ELEMENT, spacing)
        self._verify(splice, _with_group(self.data, event, group))
        return added

    def replace(self, event: str, old: dict[str, Any], new: dict[str, Any]) -> Splice:
        """Give the last group equal to ``old`` the value ``new``, in place (the command moved)."""
        found = self._event(event)
        el = None if found is None else _last_equal(found[1], old)
        if found is None or el is None:
            raise self._unfaithful()
        splice = Splice(el.start, el.end, self.json.render_element(el, found[1], new))
        groups = [el.value for el in found[1].elements]
        at = max(i for i, g in enumerate(groups) if g == old)
        groups[at] = new
        self._verify(splice, _with_groups(self.data, event, groups))
        return splice

    def remove(self, event: str, group: dict[str, Any], created: Created, spacing: str | None) -> Splice:
        """Take out the last group equal to ``group`` and what setup created around it, if that
        holds nothing else now; the inverse of :meth:`add`."""
        found = self._event(event)
        el = None if found is None else _last_equal(found[1], group)
        if found is None or el is None or self.hooks is None or self.hooks_member is None:
            raise self._unfaithful()
        member, arr = found
        alone = len(arr.elements) == 1
        data = dict(self.data)
        hooks = dict(data[HOOKS_KEY])
        if alone and created is Created.HOOKS and len(self.hooks.members) == 1:
            splice = remove_member(self.json.top, self.hooks_member, spacing)
            del data[HOOKS_KEY]
        elif alone and created is not Created.ELEMENT:
            splice = remove_member(self.hooks, member, spacing if created is Created.EVENT else None)
            del hooks[event]
            data[HOOKS_KEY] = hooks
        else:
            splice = remove_element(arr, el, spacing if created is Created.ELEMENT else None)
            groups = [each.value for each in arr.elements]
            del groups[max(i for i, g in enumerate(groups) if g == group)]
            hooks[event] = groups
            data[HOOKS_KEY] = hooks
        self._verify(splice, data)
        return splice

    def _event(self, event: str) -> tuple[Member, Arr] | None:
        if self.hooks is None:
            return None
        member = self.json.only(self.hooks, event)
        if member is None:
            return None
        if not isinstance(member.value, list):
            raise MalformedConfig(
                f'In {self.path}, "{HOOKS_KEY}"."{event}" is not an array; fix it (or remove it) and run setup again.',
                path=self.path,
            )
        return member, self.json.array_at(member.value_start)

    def _verify(self, splice: Splice, expected: dict[str, Any]) -> None:
        """Refuse unless the edited text parses to exactly the intended data."""
        try:
            after = self.json.reparse(splice)
        except ValueError as exc:
            raise self._unfaithful() from exc
        if after != expected:
            raise self._unfaithful()

    def _unfaithful(self) -> CannotEditFaithfully:
        return CannotEditFaithfully(
            f"setup cannot change the hooks in {self.path} without disturbing the rest of the file; "
            "nothing was written. Add vaultd's hook groups by hand.",
            path=self.path,
        )


def _last_equal(arr: Arr, group: dict[str, Any]) -> Element | None:
    return next((el for el in reversed(arr.elements) if el.value == group), None)


def _with_group(data: dict[str, Any], event: str, group: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get(HOOKS_KEY) or {}
    return _with_groups(data, event, [*(hooks.get(event) or []), group])


def _with_groups(data: dict[str, Any], event: str, groups: list[Any]) -> dict[str, Any]:
    hooks = dict(data.get(HOOKS_KEY) or {})
    hooks[event] = groups
    return {**data, HOOKS_KEY: hooks}
