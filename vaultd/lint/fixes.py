"""The mechanical fixes a lint of a copy of the index finds, for ``lint.fix`` to plan from.

``lint.fix`` finds its fixes the way ``vault.lint`` finds its findings: on a copy of the index
taken in one step on the event loop, in a daemon thread (a small vault) or a lint worker process
(:mod:`vaultd.lint.worker`), with neither the vault's writer nor the index held. Only then does
the operation take the writer, and its planner reads just the notes to rewrite. Each fix is made
from a note's text as the copy indexed it (:func:`~vaultd.lint.gather.text_reader` makes none
from a file whose bytes differ), and :attr:`FixSet.shas` keeps those bytes' sha256, so the
planner refuses a note whose text moved since (CONFLICT) rather than rewrite bytes the lint
never read.

Only link rules have a mechanical fix (L01, L02), so only they run, over every note the caller
may see; canvases and bases are not read (none of their findings is fixable).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from protocol.methods.lint import LintCode
from vaultd import faults
from vaultd.lint.engine import with_fixes
from vaultd.lint.gather import gather, text_reader
from vaultd.lint.links import link_findings
from vaultd.lint.model import Fix
from vaultd.lint.roles import by_role
from vaultd.memory import collector_paused

if TYPE_CHECKING:
    import datetime as dt

    from protocol.methods.vaults import VaultEntry
    from vaultd.lint.model import Deadline
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import IndexCopy

FIXABLE = tuple(code for code in LintCode if code.fixable)


class FixSet(msgspec.Struct, array_like=True, frozen=True):
    """Every mechanical fix of one state of the vault, and the bytes each was made from."""

    fixes: list[Fix]  #: in note and offset order
    shas: dict[str, str]  #: note -> sha256 of the text its fixes were made from


def fixes_of(
    copy: IndexCopy, entry: VaultEntry, view: Visibility, when: dt.date, *, code: LintCode | None, note: str | None, deadline: Deadline
) -> FixSet:
    """The fixes of ``copy`` as ``view`` sees it (of one rule, of one note, when given).

    Raises:
        LimitExceeded: LIMIT, the walk ran past ``deadline``.
    """
    codes = FIXABLE if code is None else (code,)
    with collector_paused():
        inp = gather(copy, entry, view, when, read={}, deadline=deadline)
        faults.point("lint-rules")
        wanted = [f for f in by_role(link_findings(inp), inp.roles) if f.fixable and f.code in codes and (note is None or f.note == note)]
        found = with_fixes(wanted, text_reader(Path(entry.path), inp.snap))
    fixes = sorted((f.fix for f in found if f.fix is not None), key=lambda f: (f.path, f.start))
    return FixSet(fixes=fixes, shas={f.path: inp.snap.notes[f.path].sha256 for f in fixes})
