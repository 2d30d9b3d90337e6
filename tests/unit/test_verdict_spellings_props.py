"""The verdict gate reads a header as parsed: every YAML spelling of ``ledger: claim`` and
``state: accepted`` (plain, quoted, escaped, tagged, block scalars, flow style, explicit keys) that
vaultd reads as an accepted claim is a ``verdict`` for the agent gate; one it does not read as a
mapping (anchors, aliases) carries the issue that makes validation refuse the write."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.methods.gate import OpClass
from vaultd.ops.agent_gate import content_classes
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter

PROPOSED = b"---\nledger: claim\nclaim: Journals recover writes\nstate: proposed\nsupport: ['[[sources/a]]']\n---\n# C\n"


def _escaped(text: str, draw: st.DrawFn) -> str:
    out = []
    for ch in text:
        form = draw(st.sampled_from(["as is", "x", "u", "U"]))
        if form == "x" and ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif form == "u":
            out.append(f"\\u{ord(ch):04x}")
        elif form == "U":
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@st.composite
def scalar(draw: st.DrawFn, text: str, *, value: bool, flow: bool) -> str:
    """One YAML spelling of the string ``text``."""
    forms = ["plain", "single", "double", "escaped", "tagged"]
    if value and not flow:
        forms += ["literal", "folded"]
    form = draw(st.sampled_from(forms))
    if form == "single":
        return f"'{text}'"
    if form == "double":
        return f'"{text}"'
    if form == "escaped":
        return _escaped(text, draw)
    if form == "tagged":
        return f"!!str {text}"
    if form == "literal":
        return f"|-\n  {text}"
    if form == "folded":
        return f">-\n  {text}"
    return text


@st.composite
def header(draw: st.DrawFn) -> tuple[str, bool]:
    """A header that says ``ledger: claim`` and ``state: accepted``; whether it uses an anchor."""
    flow = draw(st.booleans())
    pairs = [("ledger", "claim"), ("state", "accepted"), ("claim", "Journals recover writes")]
    pairs = draw(st.permutations(pairs))
    anchored = draw(st.booleans()) and draw(st.booleans())  # about one in four
    spelled = []
    for key, val in pairs:
        k = draw(scalar(key, value=False, flow=flow))
        v = draw(scalar(val, value=True, flow=flow))
        if anchored and key == "state":
            v = f"&s {v}"
        explicit = not flow and draw(st.booleans()) and not v.startswith(("|", ">"))
        spelled.append((k, v, explicit))
    if flow:
        body = "{" + ", ".join(f"{k}: {v}" for k, v, _ in spelled) + "}\n"
    else:
        body = "".join(f"? {k}\n: {v}\n" if explicit else f"{k}: {v}\n" for k, v, explicit in spelled)
    return f"---\n{body}support: ['[[sources/a]]']\n---\n# C\n" if not flow else f"---\n{body}---\n# C\n", anchored


@settings(max_examples=400, deadline=None)
@given(header(), st.booleans())
def test_every_spelling_of_an_accepted_claim_is_a_verdict(drawn: tuple[str, bool], edit: bool) -> None:
    text, anchored = drawn
    parsed = frontmatter.parse(text)
    plan = Plan(op="note.patch", changes=[Change(path="Claims/c.md", before=PROPOSED if edit else None, after=text.encode())], summary="")
    if anchored:
        # Never read as a claim (anchors are refused, not expanded): the header issue refuses the write.
        assert parsed.data is None and [i.code for i in parsed.issues] == ["N04"], (text, parsed)
        return
    assert parsed.data is not None, (text, parsed.issues)
    assert parsed.data.get("ledger") == "claim" and parsed.data.get("state") == "accepted", (text, parsed.data)
    assert content_classes(plan) == (OpClass.VERDICT,), text


def test_the_escaped_key_of_the_report_is_a_verdict() -> None:
    text = '---\n"\\x6cedger": claim\nclaim: Journals recover writes\nstate: accepted\n---\n# C\n'
    assert b"ledger" not in text.encode()
    plan = Plan(op="note.create", changes=[Change(path="c.md", before=None, after=text.encode())], summary="")
    assert content_classes(plan) == (OpClass.VERDICT,)


def test_a_claim_left_proposed_is_no_verdict() -> None:
    after = PROPOSED.replace(b"# C\n", b"# C\n\nMore text.\n")
    plan = Plan(op="note.patch", changes=[Change(path="c.md", before=PROPOSED, after=after)], summary="")
    assert content_classes(plan) == ()
