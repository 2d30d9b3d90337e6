"""The verdict gate reads a header as parsed: every YAML spelling of ``ledger: claim`` and
``state: accepted`` (plain, quoted, escaped, tagged, block scalars, flow style, explicit keys) that
vaultd reads as an accepted claim is a ``verdict`` for the agent gate; one it does not read as a
mapping (anchors, aliases) carries the issue that makes validation refuse the write."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.methods.gate import OpClass
from tests.support.yaml_spellings import mapping
from vaultd.ops._agent_gate import content_classes
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from collections.abc import Sequence

PROPOSED = b"---\nledger: claim\nclaim: Journals recover writes\nstate: proposed\nsupport: ['[[sources/a]]']\n---\n# C\n"


@st.composite
def header(draw: st.DrawFn) -> tuple[str, bool]:
    """A note whose header says ``ledger: claim`` and ``state: accepted``; whether it uses an anchor."""
    anchored = draw(st.booleans()) and draw(st.booleans())  # about one in four

    def choose(options: Sequence[Any]) -> Any:
        return draw(st.sampled_from(list(options)))

    pairs = [("ledger", "claim"), ("state", "accepted"), ("claim", "Journals recover writes")]
    return "---\n" + mapping(pairs, choose, anchor="state" if anchored else None) + "---\n# C\n", anchored


@settings(max_examples=200, deadline=None)
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
