"""What the vault's agent policy says of one planned operation: apply, propose or refuse.

An operation falls into one class by its method, and also into ``wide`` when it changes more
files than the policy's ``wide_files``; it takes the strictest gate of its classes, so a rename
that rewrites fifty backlinks waits for a person even where a plain rename would not.
Undo is split by whose operation it reverses: an agent session's own (``undo_own``) or anyone
else's (``undo_others``); an operation without a session is a person's, so it is never "own".
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.methods.gate import AgentPolicy, Gate, OpClass

#: The class of each write method; a method not listed here is gated as ``wide`` (the strictest
#: default a new operation can get without anyone deciding its class).
METHOD_CLASSES: dict[str, OpClass] = {
    "note.create": OpClass.CREATE,
    "note.append": OpClass.APPEND,
    "note.patch": OpClass.PATCH,
    "note.set_frontmatter": OpClass.SET_FRONTMATTER,
    "note.link": OpClass.LINK,
    "note.move": OpClass.MOVE,
    "note.delete": OpClass.DELETE,
    "note.merge": OpClass.MERGE,
    "note.supersede": OpClass.SUPERSEDE,
    "lint.fix": OpClass.PATCH,
    "task.set": OpClass.PATCH,  # one line of one note, as a patch
    "source.capture": OpClass.CAPTURE,
    "claim.add": OpClass.CLAIM,
    "claim.update": OpClass.CLAIM,
    "file.write": OpClass.FILE_WRITE,
    "file.move": OpClass.FILE_MOVE,
    "file.rename": OpClass.FILE_MOVE,
    "file.delete": OpClass.FILE_DELETE,
    "daily.append": OpClass.APPEND,  #: and a create when it makes the day's note (see content_classes)
    "daily.prepend": OpClass.APPEND,
    "template.insert": OpClass.APPEND,
    "vault.tidy": OpClass.WIDE,  #: every note of the vault: a person decides
    "work.cancel": OpClass.UNDO_OWN,  #: its own session's work only (the operation refuses any other)
    "report.write": OpClass.CREATE,  #: a report note: created, or replaced when asked
}


@dataclass(frozen=True, slots=True)
class Verdict:
    gate: Gate
    op_class: OpClass  #: the class that decided it (the strictest)
    classes: tuple[OpClass, ...]

    def explain(self, vault: str) -> str:
        return f"vault '{vault}' lets agents {self.gate.value} '{self.op_class.value}' operations"


def classes_of(op: str, files: int, policy: AgentPolicy, *, own_undo: bool = False, extra: tuple[OpClass, ...] = ()) -> tuple[OpClass, ...]:
    """The method's class, ``wide`` past the policy's bound, and ``extra``: classes found in what the
    plan does rather than in its method (a write that makes a claim accepted is a ``verdict``)."""
    if op == "op.undo":
        first = OpClass.UNDO_OWN if own_undo else OpClass.UNDO_OTHERS
    else:
        first = METHOD_CLASSES.get(op, OpClass.WIDE)
    found = (first, OpClass.WIDE) if files > policy.wide_files and first is not OpClass.WIDE else (first,)
    return found + tuple(c for c in extra if c not in found)


def verdict(op: str, files: int, policy: AgentPolicy, *, own_undo: bool = False, extra: tuple[OpClass, ...] = ()) -> Verdict:
    """The strictest gate among the operation's classes (the first of equals decides)."""
    classes = classes_of(op, files, policy, own_undo=own_undo, extra=extra)
    deciding = max(classes, key=lambda c: policy.gate(c).rank)
    return Verdict(gate=policy.gate(deciding), op_class=deciding, classes=classes)
