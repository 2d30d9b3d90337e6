"""Every tool result within a byte budget, saying what it left out and how to get the rest.

A host pastes a tool's result into the model's context (Claude Code refuses one over 25,000
tokens); a result that floods it helps nobody. So each result gets a budget: the default suits an
agent (:data:`DEFAULT_BUDGET`, ``$VAULTD_MCP_MAX_RESULT_BYTES`` changes it), and one call may ask
for another up to :data:`HARD_CAP` in ``params._meta["io.vaultd/maxResultBytes"]``.

A result over its budget is fitted, in this order:

1. A read with a ``limit`` or ``max_bytes`` argument is asked again with a smaller one, so the
   daemon itself answers a whole, consistent page (its cursor, offsets and counts right).
2. Otherwise (a write's receipt, a read without such an argument) the largest list or string in
   the result is cut to fit.

Either way the result carries ``fitted``: the budget, the size of the whole answer, what was
lowered or left out, and ``next`` (the arguments that continue) where the result says where to go
on. A result that cannot be fitted (nothing to cut) is the LIMIT error it always was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from vaultctl.mcp.settings import bounded_int

if TYPE_CHECKING:
    from protocol.methods.common import Params
    from protocol.methods.spec import AnySpec

DEFAULT_BUDGET = 40 * 1024  #: bytes of one result's JSON by default: about 10,000 tokens
HARD_CAP = 1 << 20  #: the most one call may ask for
MIN_BUDGET = 1024  #: the least: room for a truncation note and a page of one item
BUDGET_ENV = "VAULTD_MCP_MAX_RESULT_BYTES"  #: the default budget for this shim's calls
BUDGET_META_KEY = "io.vaultd/maxResultBytes"  #: one call's budget, in ``params._meta``
KNOBS = ("limit", "max_bytes")  #: arguments that make a read's answer smaller, in the order tried
_NOTE_RESERVE = 512  #: bytes kept for the ``fitted`` note itself
_ASKS = 4  #: at most this many smaller asks before cutting

_encoder = msgspec.json.Encoder()


def default_budget(environ: Mapping[str, str]) -> int:
    """``$VAULTD_MCP_MAX_RESULT_BYTES`` clamped to the allowed range, else :data:`DEFAULT_BUDGET`."""
    return bounded_int(environ, BUDGET_ENV, DEFAULT_BUDGET, MIN_BUDGET, HARD_CAP)


def call_budget(meta: Mapping[str, Any] | None, default: int) -> int:
    """The budget of one call: its ``_meta`` ask, clamped to the allowed range, else ``default``."""
    asked = (meta or {}).get(BUDGET_META_KEY)
    if isinstance(asked, int) and not isinstance(asked, bool):
        return min(max(asked, MIN_BUDGET), HARD_CAP)
    return default


@dataclass(frozen=True, slots=True)
class Fitted:
    """A result within its budget (``raw``), or None when nothing could be cut to fit."""

    raw: bytes | None
    full: int  #: bytes of the whole answer


Ask = Callable[["Params"], bytes]  #: calls the daemon again with other params


def fit(spec: AnySpec, params: Params, raw: bytes, budget: int, ask: Ask, carry: Mapping[str, Any] | None = None) -> Fitted:
    """``raw`` if it is within ``budget``; else the smaller answer described in the module doc.

    ``carry``: arguments the call had besides the method's own (a family tool's selector), which
    ``next`` must repeat for the continuing call to reach the same method."""
    full = len(raw)
    if full <= budget:
        return Fitted(raw, full)
    room = budget - _NOTE_RESERVE
    if spec.read_only:
        asked = _ask_smaller(spec, params, raw, room, ask)
        if asked is not None:
            knob, value, smaller = asked
            body = msgspec.json.decode(smaller)
            note: dict[str, Any] = {"budget": budget, "bytes": full, "lowered": {knob: value}}
            following = _next(spec, params, body, knob, value)
            if following:
                note["next"] = {**(carry or {}), **following}
            else:
                note["hint"] = _hint(spec)
            body["fitted"] = note
            return Fitted(_encoder.encode(body), full)
    body = msgspec.json.decode(raw)
    if not isinstance(body, dict):
        return Fitted(None, full)
    left_out = _cut(body, room)
    if left_out is None:
        return Fitted(None, full)
    body["fitted"] = {"budget": budget, "bytes": full, "left_out": left_out, "hint": _hint(spec)}
    encoded = _encoder.encode(body)
    return Fitted(encoded if len(encoded) <= budget else None, full)


def fit_error(body: dict[str, Any], budget: int) -> dict[str, Any]:
    """An error result within ``budget``: issues cut from the end (counted in ``issues_omitted``),
    then candidates, then the message; the keys an agent reads stay."""
    while len(_encoder.encode(body)) > budget and body.get("issues"):
        keep = len(body["issues"]) // 2
        body["issues_omitted"] = body.get("issues_omitted", 0) + len(body["issues"]) - keep
        body["issues"] = body["issues"][:keep]
    while len(_encoder.encode(body)) > budget and body.get("candidates"):
        body["candidates"] = body["candidates"][: len(body["candidates"]) // 2]
    over = len(_encoder.encode(body)) - budget
    if over > 0:
        message = body["message"].encode()
        body["message"] = message[: max(0, len(message) - over - 16)].decode("utf-8", "ignore") + " [cut]"
    return body


def _ask_smaller(spec: AnySpec, params: Params, raw: bytes, room: int, ask: Ask) -> tuple[str, int, bytes] | None:
    """Ask again with a smaller ``limit`` or ``max_bytes`` until the answer fits ``room``."""
    knob = next((k for k in KNOBS if k in spec.params.__struct_fields__), None)
    if knob is None or not isinstance(getattr(params, knob), int):
        return None
    value, size = getattr(params, knob), len(raw)
    for attempt in range(_ASKS):
        guess = _items_that_fit(raw, room) if attempt == 0 and knob == "limit" else None
        smaller = max(1, min(value - 1, guess if guess is not None else int(value * room * 0.9 / size)))
        if smaller >= value:
            return None
        value = smaller
        raw = ask(msgspec.structs.replace(params, **{knob: value}))
        size = len(raw)
        if size <= room:
            return knob, value, raw
        if value == 1:
            return None
    return None


def _items_that_fit(raw: bytes, room: int) -> int | None:
    """How many leading items of the answer's largest top-level list fit ``room`` with the rest
    of it: one smaller ask then answers (vault-wide work is not redone several times)."""
    body = msgspec.json.decode(raw)
    lists = [v for v in body.values() if isinstance(v, list) and v] if isinstance(body, dict) else []
    if not lists:
        return None
    items = max(lists, key=lambda v: len(_encoder.encode(v)))
    used = len(raw) - len(_encoder.encode(items))
    count = 0
    for item in items:
        used += len(_encoder.encode(item)) + 1
        if used > room * 0.95:
            break
        count += 1
    return count


def _next(spec: AnySpec, params: Params, body: Any, knob: str, value: int) -> dict[str, Any] | None:
    """The arguments that continue after this smaller page, when the result says where."""
    if not isinstance(body, dict):
        return None
    fields = spec.params.__struct_fields__
    if "cursor" in fields and isinstance(body.get("next_cursor"), str):
        return {"cursor": body["next_cursor"], knob: value}
    if "offset" in fields and isinstance(body.get("next_offset"), int):
        return {"offset": body["next_offset"], knob: value}
    return None


def _hint(spec: AnySpec) -> str:
    fields = spec.params.__struct_fields__
    ways = [f"a smaller {k}" for k in KNOBS if k in fields]
    ways += [f"{k} to page" for k in ("cursor", "offset") if k in fields]
    ways.append(f"a larger _meta[{BUDGET_META_KEY!r}] (up to {HARD_CAP})")
    return "the whole answer is over the budget; ask with " + ", or ".join(ways) + ", or narrow the request"


def _cut(body: dict[str, Any], room: int) -> dict[str, Any] | None:
    """Cut the largest lists and strings of ``body`` (at any depth) until it fits ``room``;
    what was left out by JSON path, or None when no cut makes it fit."""
    left_out: dict[str, Any] = {}
    for _ in range(8):
        size = len(_encoder.encode(body))
        if size <= room:
            return left_out
        found = _largest(body, "$")
        if found is None:
            return None
        path, holder, key, value = found
        over = size - room
        if isinstance(value, list):
            keep = _keep_items(value, over)
            holder[key] = value[:keep]
            left_out[path] = {"items": len(value) - keep, "of": len(value)}
        else:
            encoded = value.encode()
            keep_bytes = max(0, len(encoded) - over - 64)
            cut = encoded[:keep_bytes].decode("utf-8", "ignore")
            holder[key] = cut
            left_out[path] = {"bytes": len(encoded) - len(cut.encode()), "of": len(encoded)}
    return None


def _keep_items(items: list[Any], over: int) -> int:
    """How many leading items to keep so that at least ``over`` bytes go."""
    gone = 0
    keep = len(items)
    while keep > 0 and gone < over:
        keep -= 1
        gone += len(_encoder.encode(items[keep])) + 1
    return keep


def _largest(node: Any, path: str) -> tuple[str, Any, Any, Any] | None:
    """The largest non-empty list or string (over 64 bytes) under ``node``: (path, holder, key, value)."""
    best: tuple[int, tuple[str, Any, Any, Any]] | None = None
    stack: list[tuple[str, Any]] = [(path, node)]
    while stack:
        here, value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            child_path = f"{here}.{key}" if isinstance(value, dict) else f"{here}[{key}]"
            if isinstance(child, (list, str)) and child:
                size = len(_encoder.encode(child))
                if size > 64 and (best is None or size > best[0]):
                    best = (size, (child_path, value, key, child))
            if isinstance(child, (dict, list)):
                stack.append((child_path, child))
    return best[1] if best else None
