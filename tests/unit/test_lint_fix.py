"""The lint fix's link rewrite and its application: the target changes, nothing else a reader sees.

For any wiki-link the scanner reads, the rewrite names the new target and keeps the anchor, the
label (an unlabelled link gains the text it showed as its label) and the embed mark; inside a
table row an added label uses ``\\|``. Applying fixes splices exactly their spans and refuses a
text that no longer holds what the index saw.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.errors import Conflict
from vaultd.lint.links import _rewrite_wiki
from vaultd.lint.model import Fix
from vaultd.ops.lint_fix import apply_fixes
from vaultd.vault.markdown import parse_wiki_inner, scan

name = st.text(
    alphabet=st.characters(blacklist_characters="[]|#^\\\n\r", blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20
).filter(lambda s: s.strip() == s and s)
anchor = st.one_of(st.none(), name.map(lambda s: "#" + s), name.map(lambda s: "#^" + "".join(c for c in s if c.isalnum()) or "#^b1"))
label = st.one_of(st.none(), name)


@settings(max_examples=300, deadline=None)
@given(name, anchor, label, st.booleans(), st.booleans(), name)
def test_the_rewrite_keeps_all_but_the_target(target: str, anc: str | None, lab: str | None, embed: bool, table: bool, new: str) -> None:
    raw = ("!" if embed else "") + "[[" + target + (anc or "") + (("\\|" if table else "|") + lab if lab else "") + "]]"
    found = scan(("| x | " if table else "") + raw + "\n").links
    if len(found) != 1 or found[0].target != target:
        return  # not a link the scanner reads as one (such a link gets no fix)
    out = _rewrite_wiki(raw, new, keep_shown=True, in_table=table)
    assert out is not None
    reread = scan(("| x | " if table else "") + out + "\n").links
    assert len(reread) == 1
    link = reread[0]
    assert link.target == new and link.kind == found[0].kind and link.anchor == found[0].anchor
    if lab is not None:
        assert link.label == found[0].label
    elif not embed and anc is None:
        assert link.label == target
        assert ("\\|" in out) == table
    parsed = parse_wiki_inner(out[(3 if embed else 2) : -2])
    assert parsed is not None and parsed[0] == new


@pytest.mark.parametrize(
    ("raw", "new", "table", "want"),
    [
        ("[[Ada]]", "Ada Lovelace", False, "[[Ada Lovelace|Ada]]"),
        ("[[Meeting Notes#2024|minutes]]", "b/Meeting Notes", False, "[[b/Meeting Notes#2024|minutes]]"),
        ("[[Meeting Notes#2024]]", "b/Meeting Notes", False, "[[b/Meeting Notes#2024]]"),
        ("![[diagram.png|300]]", "img/diagram.png", False, "![[img/diagram.png|300]]"),
        ("![[Note]]", "a/Note", False, "![[a/Note]]"),
        ("[[Grace\\|Grace H]]", "people/Grace", True, "[[people/Grace\\|Grace H]]"),
        ("[[Grace]]", "people/Grace", True, "[[people/Grace\\|Grace]]"),
    ],
)
def test_rewrites(raw: str, new: str, table: bool, want: str) -> None:
    assert _rewrite_wiki(raw, new, keep_shown=True, in_table=table) == want


def test_fixes_splice_their_spans_and_refuse_a_changed_text() -> None:
    text = "See [[Ada]] and [[Ada]] and [[Meeting Notes]].\n"
    first, second = text.index("[[Ada]]"), text.index("[[Ada]]", text.index("[[Ada]]") + 1)
    third = text.index("[[Meeting Notes]]")
    fixes = [
        Fix("n.md", 1, second, second + 7, "[[Ada]]", "[[Ada Lovelace|Ada]]"),
        Fix("n.md", 1, first, first + 7, "[[Ada]]", "[[Ada Lovelace|Ada]]"),
        Fix("n.md", 1, third, third + 17, "[[Meeting Notes]]", "[[b/Meeting Notes|Meeting Notes]]"),
    ]
    assert apply_fixes(text, fixes) == "See [[Ada Lovelace|Ada]] and [[Ada Lovelace|Ada]] and [[b/Meeting Notes|Meeting Notes]].\n"
    with pytest.raises(Conflict, match="no longer holds"):
        apply_fixes(text.replace("[[Meeting Notes]]", "[[Meeting notes]]"), fixes)
    assert apply_fixes(text, []) == text
