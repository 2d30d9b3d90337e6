"""The host's own sandbox settings in its settings file: plan merging vaultd's rules in, and plan
taking them out again, byte for byte.

The rules are :mod:`sandbox`'s. They are merged, never swapped in: a value setup needs is set
(``sandbox.enabled``), a path it needs is appended to the person's own array (``denyWrite``,
``permissions.deny``), and everything else of theirs stays where it is. Each edit is one splice,
proven by re-parsing the result, and recorded as a step of the receipt; undo reverses the steps
in the opposite order, each only while it still holds what setup wrote, so the file gets back the
bytes it had. A value the person had set otherwise (``sandbox.enabled: false``) is replaced, the
plan says so, and undo puts their text back.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from vaultctl.setup.commit import Change, FileState, sha
from vaultctl.setup.edits import Splice
from vaultctl.setup.entry import MANUAL
from vaultctl.setup.errors import CannotEditFaithfully, EntryChanged, MalformedConfig
from vaultctl.setup.homes import home_of
from vaultctl.setup.hosts import HOSTS, Host
from vaultctl.setup.jsontext import JsonText, Obj, remove_element, remove_member
from vaultctl.setup.plan import Action, Mode, SetupPlan, make_plan
from vaultctl.setup.receipts import ReceiptStore, SandboxReceipt, SandboxStep
from vaultctl.setup.sandbox import claude_settings, protected

if TYPE_CHECKING:
    from collections.abc import Mapping

_EMPTY = "{}\n"
CODEX_MODE = "workspace-write"
#: What each host enforces once its sandbox is on, and what it cannot; said in every plan.
LIMITS = {
    "claude": (
        "Claude Code's sandbox runs every Bash command under the operating system's rules (bubblewrap and socat on Linux, "
        "Seatbelt on macOS); its hooks and MCP servers, and a command a person lets out, run outside it."
    ),
    "codex": (
        "Codex's sandbox lets its shell write only the session's folder, the temp folders and writable_roots; it has no "
        "per-path deny inside them, so a session started inside a vault can still write it."
    ),
    "gemini": "Gemini CLI's sandbox runs its tools in a container that mounts the project folder only.",
}


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


def _at(data: Any, path: tuple[str, ...] | list[str]) -> tuple[bool, Any]:
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


def _runtime(env: Mapping[str, str]) -> str | None:
    """Gemini CLI's container runtime on this machine's PATH (docker or podman), if any."""
    path = env.get("PATH", os.defpath)
    return next((name for name in ("docker", "podman") if shutil.which(name, path=path)), None)


@dataclass(frozen=True, slots=True)
class SandboxTarget:
    """One host's sandbox settings file, and where its receipt lives."""

    host: Host
    path: Path
    store: ReceiptStore
    env: Mapping[str, str]

    ours: ClassVar[bool] = True  #: its plans show the rules setup writes (paths, no secrets) as they are

    @classmethod
    def resolve(cls, name: str, env: Mapping[str, str]) -> SandboxTarget | None:
        """The host's settings file for its sandbox (a person's own, never a project's), or None
        for a host without a sandbox setup can turn on."""
        home = str(home_of(env))
        if name == "claude":
            folder = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
            path = os.path.join(folder, "settings.json")
        elif name == "codex":
            path = os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "config.toml")
        elif name == "gemini":
            path = os.path.join(home, ".gemini", "settings.json")
        else:
            return None
        return cls(HOSTS[name], Path(os.path.abspath(path)), ReceiptStore.for_env(env), env)

    @property
    def receipt_path(self) -> Path:
        return self.store.path_for(self.host.name, self.path, SandboxReceipt)

    def has_receipt(self) -> bool:
        return self.store.load_sandbox(self.host.name, self.path) is not None

    def _wants(self) -> list[Want]:
        rules = claude_settings(self.env)
        fs = rules["sandbox"]["filesystem"]
        return [
            Want(("sandbox", "enabled"), True),
            Want(("sandbox", "allowUnsandboxedCommands"), False),
            Want(("sandbox", "filesystem", "denyWrite"), items=tuple(fs["denyWrite"])),
            Want(("sandbox", "filesystem", "denyRead"), items=tuple(fs["denyRead"])),
            Want(("permissions", "deny"), items=tuple(rules["permissions"]["deny"])),
        ]

    def manual(self) -> str:
        """What to merge by hand when setup refuses to edit the file."""
        if self.host.name == "codex":
            return f'sandbox_mode = "{CODEX_MODE}"\n'
        if self.host.name == "gemini":
            return json.dumps({"tools": {"sandbox": True}}, indent=2) + "\n"
        return json.dumps(claude_settings(self.env), indent=2) + "\n"

    def setup(self, mode: Mode, state: FileState | None = None) -> Change | SetupPlan:
        """Plan merging the rules in on ``state`` (read from disk when None); a plan alone (no
        change) when this host has no sandbox on this machine."""
        try:
            return self._setup(mode, state or FileState.read(self.path))
        except MANUAL as exc:
            exc.manual = self.manual()
            raise

    def _setup(self, mode: Mode, state: FileState) -> Change | SetupPlan:
        name, notes = self.host.name, [LIMITS[self.host.name]]
        old = state.text
        text = old if old is not None else _EMPTY
        steps: list[SandboxStep] = []
        after: Any
        if name == "codex":
            toml = SandboxToml(old or "", self.path)
            mode_was = toml.data.get("sandbox_mode")
            if mode_was not in (None, CODEX_MODE, "read-only"):
                notes.append(f"{self.path} sets sandbox_mode = {mode_was!r}; setup sets {CODEX_MODE!r} (undo puts yours back).")
            toml, steps = toml.want()
            text = toml.text if steps else (old or "")
            notes += self._codex_roots(toml.data)
            before, after = {"sandbox_mode": mode_was}, {"sandbox_mode": toml.data.get("sandbox_mode")}
        else:
            doc = SandboxJson(text, self.path)
            if name == "gemini":
                tools = doc.data.get("tools")
                current = tools.get("sandbox") if isinstance(tools, dict) else None
                before = {"tools.sandbox": current}
                runtime = _runtime(self.env)
                if current or doc.data.get("sandbox"):
                    wants: list[Want] = []
                elif runtime is None:
                    note = (
                        "Gemini CLI's sandbox needs docker or podman, and neither is on PATH: it is left off, so Gemini CLI's "
                        "shell is kept off the vaults only by the guard's reading of each line."
                    )
                    plan = make_plan(self, mode, Action.NONE, old=old, new=old, before=before, after=None, notes=(note,))
                    return plan
                else:
                    wants = [Want(("tools", "sandbox"), True)]
                    notes.append(f"Gemini CLI will run its tools in a {runtime} container.")
            else:
                sandbox = doc.data.get("sandbox")
                if isinstance(sandbox, dict) and sandbox.get("enabled") is False:
                    notes.append(f"{self.path} sets sandbox.enabled to false; setup turns it on (undo puts false back).")
                wants = self._wants()
                before = {".".join(w.path): _at(doc.data, w.path)[1] for w in wants}
            for want in wants:
                doc, done = doc.want(want)
                steps += done
            text = doc.text
            after = {".".join(w.path): w.value if w.items is None else list(w.items) for w in wants} or before
        if not steps:
            plan = make_plan(self, mode, Action.NONE, old=old, new=old, before=before, after=after, notes=tuple(notes))
            return Change(state, plan, old)
        previous = self.store.load_sandbox(name, self.path)
        receipt = self._receipt(previous, state, text, steps)
        action = Action.CREATE_FILE if old is None else Action.ADD if any(s.kind != "replace" for s in steps) else Action.REPLACE
        notes.append(f"{self.host.title} reads its sandbox settings when a session starts: restart open sessions.")
        plan = make_plan(self, mode, action, old=old, new=text, before=before, after=after, notes=tuple(notes))
        return Change(state, plan, text, saves=(receipt,), receipt=self.receipt_path)

    def _codex_roots(self, data: dict[str, Any]) -> list[str]:
        table = data.get("sandbox_workspace_write")
        roots = table.get("writable_roots") if isinstance(table, dict) else None
        write, _ = protected(self.env)
        exposed = [r for r in roots or [] if isinstance(r, str) and any(p == r or p.startswith(r.rstrip("/") + "/") for p in write)]
        if not exposed:
            return []
        return [
            f"[sandbox_workspace_write] writable_roots {', '.join(exposed)} hold a vault or vaultd's home, so Codex's shell can "
            "write there; setup leaves your roots alone: take those out by hand."
        ]

    def _receipt(self, previous: SandboxReceipt | None, state: FileState, new: str, steps: list[SandboxStep]) -> SandboxReceipt:
        """A fresh receipt, or the earlier one carried on (undo still goes back to before setup)."""
        if previous is None:
            created = sha(new.encode("utf-8")) if state.text is None else None
            return SandboxReceipt(
                host=self.host.name, path=str(self.path), file_existed=state.text is not None, created_sha256=created, steps=steps
            )
        created = previous.created_sha256
        if not previous.file_existed and created == state.sha():
            created = sha(new.encode("utf-8"))
        return msgspec.structs.replace(previous, steps=[*previous.steps, *steps], created_sha256=created)

    def undo(self, state: FileState | None = None) -> Change | None:
        """Plan reversing the receipt's steps, or None when there is no receipt.

        Raises:
            EntryChanged: CONFLICT, a part setup added was changed since; nothing is planned.
        """
        receipt = self.store.load_sandbox(self.host.name, self.path)
        if receipt is None:
            return None
        state = state or FileState.read(self.path)
        text, drops = state.text, (self.receipt_path,)
        if text is None:
            note = "The sandbox settings file is gone; the receipt was dropped."
            plan = make_plan(self, Mode.UNDO, Action.NONE, old=None, new=None, before=None, after=None, notes=(note,))
            return Change(state, plan, None, drops=drops, receipt=self.receipt_path)
        if not receipt.file_existed and receipt.created_sha256 == state.sha():
            plan = make_plan(self, Mode.UNDO, Action.DELETE_FILE, old=text, new=None, before=None, after=None)
            return Change(state, plan, None, drops=drops, receipt=self.receipt_path)
        doc: SandboxJson | SandboxToml = SandboxToml(text, self.path) if self.host.name == "codex" else SandboxJson(text, self.path)
        for step in reversed(receipt.steps):
            doc = doc.revert(step)
        new: str | None = doc.text
        if not receipt.file_existed and new == _EMPTY:
            new = None
        action = Action.NONE if new == text else Action.DELETE_FILE if new is None else Action.REMOVE
        notes = ("The sandbox settings setup wrote are already gone; the receipt was dropped.",) if action is Action.NONE else ()
        plan = make_plan(self, Mode.UNDO, action, old=text, new=new, before=None, after=None, notes=notes)
        return Change(state, plan, new, drops=drops, receipt=self.receipt_path)
