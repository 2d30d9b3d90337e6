"""A large vault's lint runs in a worker process and answers exactly what it answers in the daemon.

The worker (``python -m vaultd.lint.worker``, started for real here) gets the copy of the index in
its compact form and rebuilds it: the same findings, hints, fixes and counts, for every view of
the vault, whatever order the index's resolver and suggester grew in. A worker past its deadline
is LIMIT (stopped by itself, or killed), and one that dies or answers garbage is UNAVAILABLE.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.methods.common import Channel
from protocol.methods.lint import MAX_LINT_SECONDS, LintCode, LintResult
from protocol.methods.vaults import VaultEntry
from vaultd.errors import LimitExceeded, Unavailable
from vaultd.lint import worker
from vaultd.lint.model import Deadline
from vaultd.lint.report import report
from vaultd.policy.visibility import Visibility
from vaultd.vault.index import VaultIndex
from vaultd.vault.link_targets import LinkResolver, Suggester
from vaultd.vault.reading import compute_updates

if TYPE_CHECKING:
    from pathlib import Path

AS_OF = dt.date(2026, 1, 1)
VAULT = {
    "Home MOC.md": "---\ntype: moc\n---\n# Home\n\n- [[Topic]]\n- [[Alpha]]\n- [[Secret Plan]]\n",
    "Topic.md": "---\ntags: [Project]\n---\n# Topic\n\nAbout [[Nowhere Note]] and [[Alpha#No Such Heading]] and [[Alphaa]].\n",
    "Alpha.md": "---\nup: '[[Topic]]'\naliases: [Al, First]\ntags: [project]\n---\n# Alpha\n\nSee [[Al]] and ![[missing.png]].\n",
    "Beta.md": "---\naliases: [First]\n---\n# Beta\n\nText about beta and [[Alpha]] and [[Twin]] and [[First]].\n",
    "a/Twin.md": "# Twin\n\nIn a, see [[Twin]] and [[Topic]].\n",
    "b/Twin.md": "# Twin\n\nIn b, see [[Twin]].\n",
    "Orphan.md": "# Orphan\n\nNobody links here.\n",
    "private/Secret Plan.md": "# Secret Plan\n\nSee [[Alpha]] and [[Gone]].\n",
    "Map.canvas": '{"nodes": [{"id": "a", "type": "file", "file": "Beta.md"}, {"id": "b", "type": "file", "file": "Nope.md"}], "edges": []}',
    "Broken.base": "views: [\n",
    "unused.png": "png",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _grown(root: Path) -> VaultIndex:
    """The vault's index, grown the way a live one is: built, then files gone and back, so the
    resolver's and suggester's order is not the order of a fresh build."""
    _write(root, VAULT)
    index = VaultIndex(root, None)
    index.build()
    for rel in ("a/Twin.md", "Alpha.md", "unused.png"):
        text = (root / rel).read_text()
        (root / rel).unlink()
        found, gone = index.stat_paths({rel})
        index.apply(compute_updates(root, found, index.notes, gone), write_cache=False)
        (root / rel).write_text(text)
        found, gone = index.stat_paths({rel})
        index.apply(compute_updates(root, found, index.notes, gone), write_cache=False)
    return index


def _plain(result: LintResult) -> object:
    return msgspec.to_builtins(result)


@pytest.mark.parametrize("channel", [Channel.CLI, Channel.MCP])
@pytest.mark.parametrize(("code", "note", "limit"), [(None, None, 200), (None, None, 3), (LintCode.L02, None, 200), (None, "Beta.md", 200)])
def test_a_lint_in_a_worker_answers_what_it_answers_in_the_daemon(
    tmp_path: Path, channel: Channel, code: LintCode | None, note: str | None, limit: int
) -> None:
    root = tmp_path / "v"
    index = _grown(root)
    entry = VaultEntry(id="v", path=str(root), private_paths=["private/**"])
    view = Visibility.of(entry, channel)
    copy = index.copy()
    until = time.monotonic() + MAX_LINT_SECONDS
    here = report(copy, entry, view, AS_OF, code=code, note=note, limit=limit, deadline=Deadline.at(until, MAX_LINT_SECONDS))
    elsewhere = worker.lint_elsewhere(worker.job_of(copy, entry, view, AS_OF, code=code, note=note, limit=limit, until=until))
    assert _plain(elsewhere) == _plain(here)
    if code is None and note is None and limit == 200:  # the comparison covers every part of an answer
        assert here.findings and any(f.fix for f in here.findings) and here.counts
        assert any("did you mean" in f.finding for f in here.findings)
        assert (channel is Channel.MCP) == all("Secret" not in f.note for f in here.findings)


def test_the_copy_a_worker_rebuilds_is_the_copy_sent(tmp_path: Path) -> None:
    index = _grown(tmp_path / "v")
    copy = index.copy()
    entry = VaultEntry(id="v", path=str(tmp_path / "v"))
    job = worker.job_of(copy, entry, Visibility(()), AS_OF, code=None, note=None, limit=10, until=0.0)
    rebuilt = worker.copy_of(msgspec.msgpack.decode(msgspec.msgpack.encode(job), type=worker.LintJob))
    assert list(rebuilt.notes) == list(copy.notes) and list(rebuilt.notes.values()) == list(copy.notes.values())
    assert rebuilt.attachments == copy.attachments and rebuilt.skipped == copy.skipped
    assert rebuilt.resolver.paths() == copy.resolver.paths() and rebuilt.suggester.titles() == copy.suggester.titles()
    assert copy.resolver.paths() != sorted(copy.resolver.paths()), "the index grew out of order"


PATHS = ["a.md", "A.md", "x/a.md", "y/a.md", "b.png", "x/b.png", "b.md", "x/c.md", "c.pdf", "Ä.md", "x/ä.md"]
TARGETS = ["a", "A.md", "x/a", "y/a.md", "b.png", "x/b.png", "b", "c", "x/c", "c.pdf", "ä", "x/Ä", "/a", "./a", "b.PNG"]


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.booleans(), st.sampled_from(PATHS)), max_size=30))
def test_a_resolver_and_suggester_rebuilt_from_their_order_answer_alike(steps: list[tuple[bool, str]]) -> None:
    resolver, titles = LinkResolver(), Suggester()
    for adding, path in steps:
        (resolver.add if adding else resolver.remove)(path)
        (titles.add if adding else titles.remove)(path)
    again, titles_again = LinkResolver(resolver.paths()), Suggester(titles.titles())
    assert {(t, s): again.resolve(t, s) for t in TARGETS for s in ("", "x/n.md")} == {
        (t, s): resolver.resolve(t, s) for t in TARGETS for s in ("", "x/n.md")
    }
    assert {t: titles_again.suggest(t) for t in TARGETS} == {t: titles.suggest(t) for t in TARGETS}


def _job(tmp_path: Path, until: float) -> worker.LintJob:
    index = _grown(tmp_path / "v")
    entry = VaultEntry(id="v", path=str(tmp_path / "v"))
    return worker.job_of(index.copy(), entry, Visibility(()), AS_OF, code=None, note=None, limit=10, until=until)


def test_a_worker_past_its_deadline_stops_itself_with_limit(tmp_path: Path) -> None:
    with pytest.raises(LimitExceeded, match=f"past its {MAX_LINT_SECONDS:g} s bound"):
        worker.lint_elsewhere(_job(tmp_path, time.monotonic() - 1.0))


def test_a_worker_stuck_past_its_deadline_is_killed_with_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "pid"
    stuck = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    monkeypatch.setattr(worker, "WORKER_ARGS", ("-c", stuck))
    monkeypatch.setattr(worker, "WORKER_GRACE_S", 0.5)
    with pytest.raises(LimitExceeded, match=f"past its {MAX_LINT_SECONDS:g} s bound"):
        worker.lint_elsewhere(_job(tmp_path, time.monotonic() + 1.0))
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("program", "said"),
    [
        ("import sys; sys.stderr.write('boom\\n'); sys.exit(3)", "status 3: boom"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "status -9"),
        ("import sys; sys.stdout.write('not msgpack')", "unreadable"),
        ("import sys; sys.stdin.read()", "unreadable"),
    ],
)
def test_a_worker_that_dies_or_answers_garbage_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str, said: str
) -> None:
    monkeypatch.setattr(worker, "WORKER_ARGS", ("-c", program))
    with pytest.raises(Unavailable, match=said):
        worker.lint_elsewhere(_job(tmp_path, time.monotonic() + MAX_LINT_SECONDS))
