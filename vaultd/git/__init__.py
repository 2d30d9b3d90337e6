"""Git as a vault's history and its engine beyond one machine.

Checkpoints (a commit per operation) and quiet snapshots (hand edits) are made with git plumbing
through an index file of vaultd's own, never the person's staging area; history is read from the
repository; remotes are fetched and verified, and a remote's commits are staged and merged here.
The real ``git`` binary does every git step (see docs/git.md and docs/dependencies.md).

The room's write operations (``vault.sync``, which integrates a remote's commits as operations and
pushes fast-forward only; ``git.resolve``; ``op.revert``; ``note.promote``, which copies a note
into an org vault through a screen) are in :mod:`vaultd.ops.git`: they run on a vault's runtime
through the runner, as every operation does.
"""
