"""Textual edits of a host's sandbox settings: set a value or append to an array in a JSON
settings file, set Codex's top-level ``sandbox_mode`` in TOML, and reverse either one step at a
time.

Every edit is one splice of the file's text, proven by re-parsing the result and comparing it with
the intended data, so nothing else of the person's can change unnoticed; each returns the steps a
record keeps for undo.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultctl.setup.edits import Splice
from vaultctl.setup.errors import CannotEditFaithfully, EntryChanged, MalformedConfig
from vaultctl.setup.jsontext import JsonText, Obj, remove_element, remove_member
from vaultctl.setup.records import SandboxStep

if TYPE_CHECKING:
    from pathlib import Path

CODEX_MODE = "workspace-write"


@dataclass(frozen=True, slots=True)
class Want:
    """One thing the rules need: a value at ``path`` (``items`` None), or these items in its array."""

    path: tuple[str, ...]
    value: Any = None
    items: tuple[Any, ...] | None = None


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (``True`` is not ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _nest(path: tuple[str, ...] | list[str], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def value_at(data: Any, path: tuple[str, ...] | list[str]) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False, None
        data = data[key]
    return True, data


def _changed(data: dict[str, Any], path: list[str], fn: Any) -> dict[str, Any]:
    """``data`` with the value at ``path`` replaced by ``fn(found, value)`` (a copy along the path)."""
    out = dict(data)
    node = out
    for key in path[:-1]:
        child = node.get(key)
        node[key] = dict(child) if isinstance(child, dict) else {}
        node = node[key]
    found = path[-1] in node
    result = fn(found, node.get(path[-1]))
    if result is _DROP:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = result
    return out


_DROP = object()


class SandboxJson:
    """A JSON settings file (Claude Code, Gemini CLI), edited one member or element at a time."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path
        self.doc = JsonText(text, path)

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.data

    def _parent(self, path: list[str] | tuple[str, ...]) -> tuple[Obj | None, int]:
        """The object holding ``path[-1]``, or (the deepest object there is, how many keys it took)."""
        obj = self.doc.top
        for depth, key in enumerate(path[:-1]):
            member = self.doc.only(obj, key)
            if member is None:
                return obj, depth
            if not isinstance(member.value, dict):
                raise MalformedConfig(
                    f'In {self.path}, "{".".join(path[: depth + 1])}" is not an object; fix it and run setup again.', path=self.path
                )
            obj = self.doc.object_at(member.value_start)
        return obj, len(path) - 1

    def _edit(self, splice: Splice, expected: dict[str, Any]) -> SandboxJson:
        try:
            after = self.doc.reparse(splice)
        except ValueError as exc:
            raise self._unfaithful() from exc
        if not _same(after, expected):
            raise self._unfaithful()
        return SandboxJson(splice.apply(self.text), self.path)

    def _unfaithful(self) -> CannotEditFaithfully:
        return CannotEditFaithfully(
            f"setup cannot change the sandbox settings in {self.path} without disturbing the rest of the file; "
            "nothing was written. Merge them by hand.",
            path=self.path,
        )

    def want(self, want: Want) -> tuple[SandboxJson, list[SandboxStep]]:
        """Make ``want`` hold; the steps that did it (none when it held already)."""
        path = list(want.path)
        obj, depth = self._parent(path)
        assert obj is not None
        target = want.value if want.items is None else list(dict.fromkeys(want.items))
        if depth < len(path) - 1 or self.doc.only(obj, path[-1]) is None:
            key, rest = path[depth], path[depth + 1 :]
            value = _nest(rest, target)
            splice, spacing = self.doc.insert_member(obj, key, value)
            expected = _changed(self.data, path[: depth + 1], lambda _f, _v: value)
            step = SandboxStep(kind="member", path=path[: depth + 1], value=value, spacing=spacing)
            return self._edit(splice, expected), [step]
        member = self.doc.only(obj, path[-1])
        assert member is not None
        if want.items is None:
            if _same(member.value, want.value):
                return self, []
            rendered = self.doc.render_member_value(member, obj, want.value)
            expected = _changed(self.data, path, lambda _f, _v: want.value)
            step = SandboxStep(kind="replace", path=path, value=want.value, prior_text=self.text[member.value_start : member.value_end])
            return self._edit(Splice(member.value_start, member.value_end, rendered), expected), [step]
        if not isinstance(member.value, list):
            raise MalformedConfig(f'In {self.path}, "{".".join(path)}" is not an array; fix it and run setup again.', path=self.path)
        doc, steps = self, []
        for item in target:
            arr = doc.doc.array_at(doc._member(path).value_start)
            if any(_same(el.value, item) for el in arr.elements):
                continue
            splice, spacing = doc.doc.append_element(arr, item)
            expected = _changed(doc.data, path, lambda _f, v, item=item: [*v, item])
            doc = doc._edit(splice, expected)
            steps.append(SandboxStep(kind="element", path=path, value=item, spacing=spacing))
        return doc, steps

    def _member(self, path: list[str]) -> Any:
        obj, depth = self._parent(path)
        member = None if obj is None or depth < len(path) - 1 else self.doc.only(obj, path[-1])
        if member is None:
            raise self._unfaithful()
        return member

    def revert(self, step: SandboxStep) -> SandboxJson:
        """Undo one step while it still holds what setup wrote; a part the person took out is
        left out. Raises EntryChanged when a member setup added was changed since."""
        path = step.path
        obj, depth = self._parent(path)
        member = None if obj is None or depth < len(path) - 1 else self.doc.only(obj, path[-1])
        if member is None or obj is None:
            return self
        if step.kind == "replace":
            if not _same(member.value, step.value) or step.prior_text is None:
                return self  # the person set it since: theirs stays
            prior = json.loads(step.prior_text)
            return self._edit(
                Splice(member.value_start, member.value_end, step.prior_text), _changed(self.data, path, lambda _f, _v: prior)
            )
        if step.kind == "member":
            if not _same(member.value, step.value):
                raise EntryChanged(
                    f'"{".".join(path)}" in {self.path} was changed since setup wrote it; undo would remove your change, '
                    "so nothing was written. Remove it by hand if you no longer want it.",
                    path=self.path,
                )
            return self._edit(remove_member(obj, member, step.spacing), _changed(self.data, path, lambda _f, _v: _DROP))
        if not isinstance(member.value, list):
            return self
        arr = self.doc.array_at(member.value_start)
        found = [el for el in arr.elements if _same(el.value, step.value)]
        if not found:
            return self
        el = found[-1]
        index = max(i for i, each in enumerate(arr.elements) if each.start == el.start)
        expected = _changed(self.data, path, lambda _f, v: [x for i, x in enumerate(v) if i != index])
        return self._edit(remove_element(arr, el, step.spacing), expected)


_CODEX_KEY = re.compile(r"^\ufeff?[ \t]*sandbox_mode[ \t]*=[ \t]*(\"[^\"\r\n]*\"|'[^'\r\n]*')[ \t]*(?=\r?\n|#|$)", re.MULTILINE)
_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)


class SandboxToml:
    """Codex's ``config.toml``, seen through its top-level ``sandbox_mode`` only."""

    def __init__(self, text: str, path: Path) -> None:
        import tomllib  # lazily: only a Codex setup pays for it

        self.text = text
        self.path = path
        try:
            self.data = tomllib.loads(text.removeprefix("\ufeff"))
        except tomllib.TOMLDecodeError as exc:
            raise MalformedConfig(f"{path} is not valid TOML ({exc}); fix it and run setup again.", path=path) from exc

    def _key(self) -> re.Match[str] | None:
        table = _TABLE.search(self.text)
        match = _CODEX_KEY.search(self.text, 0, table.start() if table else len(self.text))
        return match

    def _edit(self, new: str, expected: dict[str, Any]) -> SandboxToml:
        doc = SandboxToml(new, self.path)
        if not _same(doc.data, expected):
            raise CannotEditFaithfully(
                f"setup cannot set sandbox_mode in {self.path} without disturbing the rest of the file; nothing was written. "
                f'Set sandbox_mode = "{CODEX_MODE}" at its top by hand.',
                path=self.path,
            )
        return doc

    def want(self) -> tuple[SandboxToml, list[SandboxStep]]:
        mode = self.data.get("sandbox_mode")
        if mode in (CODEX_MODE, "read-only"):
            return self, []
        expected = {**self.data, "sandbox_mode": CODEX_MODE}
        quoted = json.dumps(CODEX_MODE)
        match = self._key() if "sandbox_mode" in self.data else None
        if match is not None:
            new = self.text[: match.start(1)] + quoted + self.text[match.end(1) :]
            step = SandboxStep(kind="replace", path=["sandbox_mode"], value=CODEX_MODE, prior_text=match.group(1))
            return self._edit(new, expected), [step]
        if "sandbox_mode" in self.data:
            raise CannotEditFaithfully(
                f"{self.path} sets sandbox_mode in a form setup does not edit; nothing was written. "
                f'Set sandbox_mode = "{CODEX_MODE}" by hand.',
                path=self.path,
            )
        newline = "\r\n" if "\r\n" in self.text else "\n"
        line = f"sandbox_mode = {quoted}{newline}"
        base = 1 if self.text.startswith("\ufeff") else 0
        new = self.text[:base] + line + self.text[base:]
        return self._edit(new, expected), [SandboxStep(kind="member", path=["sandbox_mode"], value=line)]

    def revert(self, step: SandboxStep) -> SandboxToml:
        if self.data.get("sandbox_mode") != CODEX_MODE:
            return self  # the person set it since: theirs stays
        match = self._key()
        if match is None:
            return self
        if step.kind == "replace" and step.prior_text is not None:
            import tomllib

            prior = tomllib.loads(f"v = {step.prior_text}")["v"]
            new = self.text[: match.start(1)] + step.prior_text + self.text[match.end(1) :]
            return self._edit(new, {**self.data, "sandbox_mode": prior})
        line = str(step.value)
        base = 1 if self.text.startswith("\ufeff") else 0
        at = self.text.find(line, base)
        if at < 0 or (at > base and self.text[at - 1] != "\n"):
            return self
        expected = {k: v for k, v in self.data.items() if k != "sandbox_mode"}
        return self._edit(self.text[:at] + self.text[at + len(line) :], expected)
