"""tidy: the migration rules over the whole vault, previewed by rule and file, then confirmed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from protocol.methods import tidy as tidy_methods
from protocol.methods.tidy import TidyDetail, TidyParams, TidyRule
from protocol.schema import field_help as doc
from vaultctl.commands.receipts import receipt_text
from vaultctl.commands.write_command import WriteFlags, write_command

if TYPE_CHECKING:
    from protocol.methods.receipts import Outcome

_LONG = frozenset({"changes", "reported"})


def _text(r: Outcome, confirm: str | None) -> str:
    """The receipt, with each change and each finding left for a person on a line of its own."""
    text = receipt_text(r, confirm, omit=_LONG)
    detail = r.detail
    if not isinstance(detail, TidyDetail):
        return text
    lines = [f"  {line}" for line in detail.changes]
    left = [f"  {line}" for line in detail.reported]
    parts = [text]
    if lines:
        parts.append("changes by rule and file:\n" + "\n".join(lines))
    if left:
        parts.append("left for a person:\n" + "\n".join(left))
    return "\n".join(parts)


@write_command(tidy_methods.TIDY)
def tidy(
    rule: Annotated[list[TidyRule] | None, typer.Option("--rule", help=doc(TidyParams, "rules") + " Repeat for several.")] = None,
    *,
    flags: WriteFlags[TidyParams],
) -> None:
    """Tidy a vault an older writer kept (escapes, enums, keys, sources, topics, connections, secrets, log).

    The preview lists every change by rule and file, and what was left for a person; --confirm
    --fingerprint F applies it as one operation, and 'vaultctl undo' reverses it (a redacted secret
    stays redacted)."""
    words = ["tidy", *(w for r in rule or () for w in ("--rule", str(r)))]
    flags.run(lambda steering: TidyParams(rules=rule or None, **steering), *words, text=_text)
