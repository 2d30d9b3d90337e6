"""Snapshot mode: a hand edit is committed by itself once the vault has been quiet for the quiet
period, and a file still being written is never committed half-written."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from protocol.methods.git import VAULT_SNAPSHOT, SnapshotParams
from protocol.methods.git_settings import GitMode
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import APPEND, AppendParams
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.typed import applied
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient

QUIET_S = 1


def _versions(repo: Path, path: str) -> list[str]:
    """Every committed version of ``path``, oldest first."""
    commits = git(repo, "log", "--reverse", "--format=%H", "--", path).splitlines()
    return [git(repo, "show", f"{c}:{path}", check=False) for c in commits]


def test_hand_edits_become_one_snapshot_after_the_quiet_period_and_never_half_written(
    home: Home, daemon: Daemon, typed: TypedClient
) -> None:
    repo = gitrepo.init(home.root / "vault", {"Alpha.md": "# Alpha\n\nfirst\n"})
    c = typed
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(repo), git=GitMode.SNAPSHOT, snapshot_quiet_s=QUIET_S))
    start = gitrepo.head(repo)

    # An editor saves one note and writes a new one slowly, in pieces, pausing less than the quiet period.
    (repo / "Alpha.md").write_text("# Alpha\n\nedited in Obsidian\n")
    parts = [f"part {i} of a long note\n" for i in range(6)]
    with open(repo / "Slow.md", "w", encoding="utf-8") as fh:
        for i, part in enumerate(parts):
            if i:
                time.sleep(QUIET_S * 0.4)
            fh.write(part)
            fh.flush()
            written = time.monotonic()

    snapped: str = wait_until(lambda: gitrepo.head(repo) if gitrepo.head(repo) != start else "", 20, "the snapshot commit")
    assert time.monotonic() - written >= QUIET_S * 0.9, "no commit before the vault was quiet"
    assert git(repo, "rev-parse", f"{snapped}~1") == start, "one snapshot commit for both hand edits"
    assert sorted(git(repo, "show", "--name-only", "--format=", snapped).splitlines()) == ["Alpha.md", "Slow.md"]
    message = git(repo, "log", "-1", "--format=%an%n%B", snapped)
    assert message.startswith("Ada Lovelace\nsnapshot: 2 hand edit(s)")
    assert "Vaultd-Snapshot: 2" in message
    assert _versions(repo, "Slow.md") == ["".join(parts).rstrip("\n")], "only the finished file was ever committed"
    # The branch moves first and the person's index follows it (the snapshot's last step): wait for
    # the whole snapshot, not for its first visible half.
    wait_until(lambda: git(repo, "status", "--porcelain", "--untracked-files=all") == "", 20, "the person's index to follow the snapshot")

    # An operation in snapshot mode is still one checkpoint commit of its own.
    done = applied(c.call(APPEND, AppendParams(vault="v", target="Alpha", section="More", markdown="- from vaultctl")))
    assert done.commit == gitrepo.head(repo)
    assert git(repo, "rev-parse", f"{done.commit}~1") == snapped
    time.sleep(QUIET_S * 1.5)
    assert gitrepo.head(repo) == done.commit, "vaultd's own write is no hand edit: no snapshot follows it"

    # An explicit snapshot commits at once; with nothing changed it says so.
    (repo / "Alpha.md").write_text("# Alpha\n\nedited again\n")
    now = c.call(VAULT_SNAPSHOT, SnapshotParams(vault="v"))
    assert now.commit == gitrepo.head(repo)
    assert now.paths == ["Alpha.md"]
    assert c.call(VAULT_SNAPSHOT, SnapshotParams(vault="v")).commit is None
