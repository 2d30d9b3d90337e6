"""vault.set's account of a change: every setting that differs, and exactly the loosened ones marked."""

from __future__ import annotations

import re

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.methods import guard
from protocol.methods.gate import AgentPolicy, AgentPolicyChange, Gate, OpClass
from protocol.methods.vaults import DeadLinks, Kind, PiiPattern, PiiPolicy, SchemaProfile, VaultEntry, VaultSetParams, WritePolicy
from protocol.table import METHODS
from vaultd.registry.changes import changed_entry, setting_changes

BASE = VaultEntry(id="v", path="/v")


def _changes(**params: object) -> dict[str, bool]:
    after = changed_entry(BASE, VaultSetParams(id="v", **params))  # type: ignore[arg-type]
    return {c.setting: c.loosens for c in setting_changes(BASE, after)}


def test_each_setting_is_marked_by_its_direction() -> None:
    assert _changes(write=WritePolicy.CLI) == {"write": False}
    assert _changes(kind=Kind.ORG)["kind"] is False
    assert _changes(schema=SchemaProfile.TYPED) == {"schema": False, "dead_links": False}
    assert _changes(deny_paths=["secret/**"]) == {"deny_paths": False}
    assert _changes(private_paths=["diary/**"]) == {"private_paths": False}
    assert _changes(stamp_keys=[]) == {"stamp_keys": False}
    assert _changes(dead_links=DeadLinks.REFUSE) == {"dead_links": False}
    assert _changes(dead_links=DeadLinks.WARN) == {}, "warn is the open profile's default already"
    typed = changed_entry(BASE, VaultSetParams(id="v", schema=SchemaProfile.TYPED))
    assert {c.setting: c.loosens for c in setting_changes(BASE, typed)} == {"schema": False, "dead_links": False}
    assert _changes(agents=AgentPolicyChange(move=Gate.APPLY)) == {"agents.move": True}
    assert _changes(agents=AgentPolicyChange(create=Gate.PROPOSE, guard=False)) == {"agents.create": False, "agents.guard": True}
    assert _changes(agents=AgentPolicyChange(session_context=True, wide_files=5)) == {
        "agents.wide_files": False,
        "agents.session_context": True,
    }
    assert _changes(agents=AgentPolicyChange(move=Gate.PROPOSE)) == {}, "already so: no change"


def test_going_from_org_to_personal_loosens_the_kind_and_every_default_with_it() -> None:
    org = msgspec.structs.replace(BASE, kind=Kind.ORG)
    after = changed_entry(org, VaultSetParams(id="v", kind=Kind.PERSONAL))
    marked = {c.setting: c.loosens for c in setting_changes(org, after)}
    assert marked["kind"] is True
    assert marked["pii.notes.email"] is True and marked["pii.log.phone"] is True
    assert marked["agents.create"] is True and marked["agents.patch"] is True


def test_pii_is_compared_cell_by_cell() -> None:
    strict = msgspec.structs.replace(BASE, pii=PiiPolicy(email="deny", patterns=[PiiPattern(name="ssn", regex=r"\d{3}-\d{2}-\d{4}")]))
    same = changed_entry(
        strict, VaultSetParams(id="v", pii=PiiPolicy(email="deny", patterns=[PiiPattern(name="ssn", regex=r"\d{3}-\d{2}-\d{4}")]))
    )
    assert setting_changes(strict, same) == []
    dropped = changed_entry(strict, VaultSetParams(id="v", pii_default=True))
    marked = {c.setting: c.loosens for c in setting_changes(strict, dropped)}
    assert marked == {"pii.notes.email": True, "pii.log.email": True, "pii.notes.ssn": True, "pii.log.ssn": True}
    allowed = changed_entry(strict, VaultSetParams(id="v", pii=PiiPolicy(email="deny", patterns=strict.pii.patterns, allow=["@me.org"])))  # type: ignore[union-attr]
    assert {c.setting: c.loosens for c in setting_changes(strict, allowed)} == {"pii.allow": True}
    weaker = changed_entry(strict, VaultSetParams(id="v", pii=PiiPolicy(email="deny", patterns=[PiiPattern(name="ssn", regex="x")])))
    assert {c.setting: c.loosens for c in setting_changes(strict, weaker)} == {"pii.patterns.ssn": True}


def test_back_to_the_default_policy_keeps_it_following_the_kind() -> None:
    custom = msgspec.structs.replace(BASE, agents=AgentPolicy(move=Gate.APPLY))
    after = changed_entry(custom, VaultSetParams(id="v", agents_default=True))
    assert after.agents is None and after.agent_policy() == AgentPolicy()


GATES = st.sampled_from(list(Gate))


@settings(max_examples=200, deadline=None)
@given(cells=st.dictionaries(st.sampled_from([c.value for c in OpClass]), GATES, min_size=1))
def test_a_cell_loosens_exactly_when_it_moves_towards_apply(cells: dict[str, Gate]) -> None:
    change = msgspec.convert(cells, AgentPolicyChange)
    after = changed_entry(BASE, VaultSetParams(id="v", agents=change))
    before_policy = BASE.agent_policy()
    marked = {c.setting: c.loosens for c in setting_changes(BASE, after)}
    for name, gate in cells.items():
        old = before_policy.gate(OpClass(name))
        if gate is old:
            assert f"agents.{name}" not in marked
        else:
            assert marked[f"agents.{name}"] is (gate.rank < old.rank)
    # and undoing the change is the mirror image: what loosened now tightens
    back = changed_entry(
        after, VaultSetParams(id="v", agents=msgspec.convert({n: before_policy.gate(OpClass(n)) for n in cells}, AgentPolicyChange))
    )
    assert back.agent_policy() == before_policy
    mirrored = {c.setting: c.loosens for c in setting_changes(after, back)}
    assert {k for k, v in marked.items() if v} == {k for k, v in mirrored.items() if not v}


def test_the_guard_names_only_tools_that_exist() -> None:
    """The refusal tells an agent which MCP tools to use: each must be one."""
    tools = {spec.tool_name for spec in METHODS.values() if spec.mcp}
    reason = guard.verdict([BASE], "/v/a.md").reason
    named = set(re.findall(r"\b(?:note|vault|op|log|proposal)_[a-z_]+\b", reason))
    assert named and named <= tools


def test_every_policy_cell_can_be_changed() -> None:
    """A class added to the policy is a cell vault.set can change, and the CLI can describe."""
    from vaultctl.commands.vault_settings import _CLASS_HELP

    assert set(AgentPolicyChange.__struct_fields__) == set(AgentPolicy.__struct_fields__)
    assert set(_CLASS_HELP) == set(OpClass)
