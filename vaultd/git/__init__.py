"""Git as a vault's history and its engine beyond one machine.

Checkpoints (a commit per operation) and quiet snapshots (hand edits) are made with git plumbing
through an index file of vaultd's own, never the person's staging area; history is read from the
repository; ``vault.sync`` integrates a remote's commits as operations and pushes fast-forward
only; ``note.promote`` copies a note into an org vault through a screen. The real ``git`` binary
does every git step (see docs/git.md and docs/dependencies.md).
"""
