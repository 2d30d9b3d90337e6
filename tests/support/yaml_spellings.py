"""YAML spellings of one mapping: plain, quoted, escaped (``\\x``, ``\\u``, ``\\U``), tagged and block
scalars, block or flow style, explicit ``?`` keys, and anchors. Every spelling but an anchored one
parses to the same data, so a check that judges a header must give one answer for all of them.

A spelling is drawn through ``choose`` (one of the options given), so hypothesis (``data.draw``)
and a seeded ``random.Random`` (the reliability round) draw from the same catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Choose = Callable[[Sequence[Any]], Any]


def _escaped(text: str, choose: Choose) -> str:
    out = []
    for ch in text:
        form = choose(["as is", "x", "u", "U"])
        if form == "x" and ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif form == "u":
            out.append(f"\\u{ord(ch):04x}")
        elif form == "U":
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def scalar(text: str, choose: Choose, *, value: bool, flow: bool) -> str:
    """One spelling of the string ``text`` (a plain-safe word or phrase)."""
    forms = ["plain", "single", "double", "escaped", "tagged"]
    if value and not flow:
        forms += ["literal", "folded"]
    form = choose(forms)
    if form == "single":
        return f"'{text}'"
    if form == "double":
        return f'"{text}"'
    if form == "escaped":
        return _escaped(text, choose)
    if form == "tagged":
        return f"!!str {text}"
    if form == "literal":
        return f"|-\n  {text}"
    if form == "folded":
        return f">-\n  {text}"
    return text


def mapping(
    pairs: Sequence[tuple[str, str]],
    choose: Choose,
    *,
    flow: bool | None = None,
    anchor: str | None = None,
    extra: Sequence[str] = (),
) -> str:
    """The YAML text (without the ``---`` fences) of ``pairs``, in a drawn order and spelling;
    ``anchor``: the key whose value carries an anchor (vaultd refuses anchors: N04); ``extra``:
    entries written as given (``key: [a, b]``), last."""
    if flow is None:
        flow = choose([False, True])
    order = list(pairs)
    for i in range(len(order) - 1, 0, -1):  # a drawn permutation
        j = choose(range(i + 1))
        order[i], order[j] = order[j], order[i]
    spelled = []
    for key, val in order:
        k = scalar(key, choose, value=False, flow=flow)
        v = scalar(val, choose, value=True, flow=flow)
        if key == anchor:
            v = f"&a {v}"
        explicit = not flow and not v.startswith(("|", ">")) and choose([False, True])
        spelled.append((k, v, explicit))
    if flow:
        return "{" + ", ".join([*(f"{k}: {v}" for k, v, _ in spelled), *extra]) + "}\n"
    return "".join(f"? {k}\n: {v}\n" if explicit else f"{k}: {v}\n" for k, v, explicit in spelled) + "".join(f"{e}\n" for e in extra)
