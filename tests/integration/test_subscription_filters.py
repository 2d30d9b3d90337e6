"""Path filters at their bound against a real daemon: 64 subscriptions of 64 globs each (the
daemon's whole MAX_FILTER_GLOBS) each get exactly the notes their globs name; one distinct glob
more is refused LIMIT, and a subscription naming globs another already has shares them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.methods.subscriptions import MAX_FILTER_GLOBS, MAX_SUBSCRIPTIONS
from tests.support.events import Subscriber, of_kind

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.support.harness import Daemon, Home

GLOBS_EACH = 64
CONNECTIONS = MAX_FILTER_GLOBS // (GLOBS_EACH * MAX_SUBSCRIPTIONS)


def _globs(k: int) -> list[str]:
    """Subscription k's globs: 63 that name nothing, and one for the notes made for it."""
    return [f"elsewhere/{k}/{j}/*.md" for j in range(GLOBS_EACH - 1)] + [f"inbox/**/T{k:02d}-*.md"]


def test_64_subscriptions_of_64_globs_get_exactly_their_notes_and_one_glob_more_is_refused(home: Home, daemon: Daemon, cli: Any) -> None:
    root = home.root / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    assert cli("vault", "add", "v", str(root), "--json").code == 0
    assert CONNECTIONS * MAX_SUBSCRIPTIONS * GLOBS_EACH == MAX_FILTER_GLOBS

    conns = [Subscriber(home.socket) for _ in range(CONNECTIONS)]
    extra = Subscriber(home.socket)
    try:
        subs: dict[int, tuple[Subscriber, int]] = {}
        for k in range(CONNECTIONS * MAX_SUBSCRIPTIONS):
            conn = conns[k // MAX_SUBSCRIPTIONS]
            subs[k] = (conn, conn.subscribe(vaults=["v"], paths=_globs(k))["subscription"])

        # At the bound: a glob no subscription has yet is refused, with nothing else lost.
        refused = extra.request("subscribe", {"vaults": ["v"], "paths": ["inbox/**"]})
        assert refused["error"]["data"]["code"] == "LIMIT", refused
        assert "4,096" in refused["error"]["message"]
        # The same globs as subscription 5, in another order and case: shared, so accepted.
        shared = extra.subscribe(vaults=["v"], paths=[g.upper() for g in reversed(_globs(5))])["subscription"]

        made = {5: ["inbox/T05-first", "inbox/deep/er/T05-second"], 17: ["inbox/T17-one"], 63: ["inbox/x/T63-last"]}
        for paths in made.values():
            for rel in paths:
                assert cli("new", rel, "--json").code == 0
        assert cli("new", "elsewhere/T05-nobody", "--json").code == 0  # matches no subscription
        # index.ready names no path, so every subscription gets it, after every note event before it.
        assert cli("vault", "rebuild", "v", "--json").code == 0

        def rebuilt(count: int) -> Callable[[list[dict[str, Any]]], bool]:
            return lambda events: len([e for e in of_kind(events, "index.ready") if e.get("rebuild")]) >= count

        for conn in [*conns, extra]:
            conn.read_until(rebuilt(1 if conn is extra else MAX_SUBSCRIPTIONS), 60, "index.ready on every subscription")

        def created(conn: Subscriber, sub: int) -> list[str]:
            return sorted(e["path"] for e in of_kind(conn.by_subscription.get(sub, []), "note.created"))

        got = {k: created(conn, sub_id) for k, (conn, sub_id) in subs.items()}
        assert got == {k: sorted(f"{p}.md" for p in made.get(k, [])) for k in subs}
        assert created(extra, shared) == sorted(f"{p}.md" for p in made[5])
    finally:
        for conn in [*conns, extra]:
            conn.close()
