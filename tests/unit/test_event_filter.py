"""A subscription's filter: kinds (with what they imply), path globs, and what a channel may see."""

from __future__ import annotations

import anyio
import pytest

from protocol.methods.common import Channel
from protocol.methods.events import EventKind
from protocol.methods.vaults import VaultEntry
from vaultd.api.event_filter import EventFilter, PathFilters
from vaultd.errors import LimitExceeded
from vaultd.events.log import Record

ENTRY = VaultEntry(id="v", path="/vault", private_paths=["private", "**/*.secret.md"])


def rec(kind: EventKind, *paths: str) -> Record:
    return Record(seq=1, kind=kind, paths=paths, data=b"{}")


def test_no_filter_passes_everything_a_person_may_see() -> None:
    f = EventFilter(None, [], Channel.CLI)
    assert all(f.passes(ENTRY, rec(kind, "private/a.md")) for kind in EventKind)


def test_kinds_bring_the_state_markers_with_note_kinds_and_always_the_clock_resets() -> None:
    notes = EventFilter([EventKind.NOTE_CHANGED], [], Channel.CLI)
    assert notes.passes(ENTRY, rec(EventKind.NOTE_CHANGED, "a.md"))
    assert not notes.passes(ENTRY, rec(EventKind.NOTE_CREATED, "a.md"))
    assert notes.passes(ENTRY, rec(EventKind.STATE_ENTER)) and notes.passes(ENTRY, rec(EventKind.STATE_LEAVE))
    health = EventFilter([EventKind.VAULT_HEALTH], [], Channel.CLI)
    assert not health.passes(ENTRY, rec(EventKind.STATE_ENTER))
    assert health.passes(ENTRY, rec(EventKind.FRESH_INSTANCE)) and health.passes(ENTRY, rec(EventKind.VAULT_REMOVED))


def test_globs_match_any_path_an_event_names_and_spare_vault_level_events() -> None:
    f = EventFilter(None, ["projects", "*.canvas.md"], Channel.CLI)
    assert f.passes(ENTRY, rec(EventKind.NOTE_CREATED, "projects/deep/a.md"))
    assert f.passes(ENTRY, rec(EventKind.NOTE_CREATED, "Projects/A.md")), "case-insensitive, like deny_paths"
    assert f.passes(ENTRY, rec(EventKind.NOTE_RENAMED, "elsewhere/a.md", "projects/a.md")), "a rename out of the folder"
    assert f.passes(ENTRY, rec(EventKind.OPERATION_APPLIED, "x.md", "board.canvas.md"))
    assert not f.passes(ENTRY, rec(EventKind.NOTE_CHANGED, "notes/a.md"))
    assert f.passes(ENTRY, rec(EventKind.INDEX_PROGRESS)) and f.passes(ENTRY, rec(EventKind.VAULT_HEALTH))


def test_an_agent_never_gets_an_event_naming_a_private_path() -> None:
    agent = EventFilter(None, [], Channel.MCP)
    assert not agent.passes(ENTRY, rec(EventKind.NOTE_CREATED, "private/plan.md"))
    assert not agent.passes(ENTRY, rec(EventKind.NOTE_RENAMED, "public.md", "private/plan.md")), "not even as where it came from"
    assert not agent.passes(ENTRY, rec(EventKind.OPERATION_APPLIED, "a.md", "notes/x.secret.md"))
    assert not agent.passes(ENTRY, rec(EventKind.PROPOSAL_CREATED, "private/b.md"))
    assert agent.passes(ENTRY, rec(EventKind.NOTE_CREATED, "public.md"))
    assert agent.passes(ENTRY, rec(EventKind.INDEX_READY))
    person = EventFilter(None, [], Channel.EDITOR)
    assert person.passes(ENTRY, rec(EventKind.NOTE_CREATED, "private/plan.md"))


def test_subscriptions_with_the_same_globs_share_one_filter_and_the_daemons_globs_are_bounded() -> None:
    filters = PathFilters(max_globs=128)
    first = EventFilter(None, [f"a/{i}/**" for i in range(64)], Channel.CLI, filters)
    same = EventFilter(None, [f"A/{i}/**" for i in reversed(range(64))], Channel.CLI, filters)  # same keys, any order
    assert len(filters) == 1 and filters.globs == 64
    at_bound = EventFilter(None, [f"b/{i}" for i in range(64)], Channel.CLI, filters)
    assert filters.globs == 128
    with pytest.raises(LimitExceeded):
        EventFilter(None, ["c"], Channel.CLI, filters)  # one past the bound
    assert filters.globs == 128
    again = EventFilter(None, [f"b/{i}" for i in range(64)], Channel.CLI, filters)  # shared: no new glob
    assert filters.globs == 128
    assert first.passes(ENTRY, rec(EventKind.NOTE_CREATED, "a/7/x.md")) and same.passes(ENTRY, rec(EventKind.NOTE_CREATED, "a/7/x.md"))
    assert not first.passes(ENTRY, rec(EventKind.NOTE_CREATED, "b/7/x.md")) and at_bound.passes(
        ENTRY, rec(EventKind.NOTE_CREATED, "b/7/x.md")
    )
    at_bound.close()
    at_bound.close()  # closing twice gives back once
    assert filters.globs == 128, "another subscription still uses the b globs"
    again.close()
    assert filters.globs == 64
    assert not again.passes(ENTRY, rec(EventKind.NOTE_CREATED, "b/7/x.md")), "a closed filter sends nothing"
    EventFilter(None, ["c"], Channel.CLI, filters)
    assert filters.globs == 65


def test_globs_compiled_off_the_loop_are_the_ones_a_subscription_then_holds() -> None:
    filters = PathFilters(max_globs=64)
    globs = [f"a/{i}/**" for i in range(64)]
    anyio.run(filters.prepare, globs)
    assert filters.globs == 0, "preparing holds nothing: only a subscription does"
    held = EventFilter(None, globs, Channel.CLI, filters)
    assert held.passes(ENTRY, rec(EventKind.NOTE_CREATED, "A/7/x.md")) and not held.passes(ENTRY, rec(EventKind.NOTE_CREATED, "b/7.md"))
    anyio.run(filters.prepare, globs)  # held already: nothing to compile, and no refusal
    with pytest.raises(LimitExceeded):
        anyio.run(filters.prepare, ["c"])  # refused before any compiling
