"""The guard's adversarial round, the fast slice: drawn shell lines and file-tool payloads through
the real hook entry point against a real daemon; every line the guard lets through is run, and no
vault byte may change. The long run is ``python -m reliability.guard_round`` (docs/reliability.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reliability.guard_round import Layout, run_round

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home


def test_no_drawn_line_reaches_a_vault_and_reads_go_through(daemon: Daemon, home: Home, cli: Any, tmp_path: Path) -> None:
    layout = Layout(home.root / "user", home.home, tmp_path / "outside")
    layout.make()
    assert cli("vault", "add", "v", str(layout.vault)).code == 0
    tally = run_round({**home.env, "VAULTD_NO_AUTOSTART": "1"}, layout, draws=150, seed=7)
    assert tally.lines == 150 and tally.reads > 100 and tally.vaultctl >= 15 and tally.payloads == 28
    assert tally.reached == [], "a line the guard let through changed a vault byte"
    assert tally.vaultctl_through == []
    assert tally.payloads_through == []
    assert tally.false_refusals == []
