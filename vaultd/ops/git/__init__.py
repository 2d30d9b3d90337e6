"""The git room's write operations: ``vault.sync`` (:mod:`sync`: fetch, verify, integrate a
remote's commits as one recorded operation, push), ``git.resolve`` (:mod:`resolve`: the operation
a sync conflict's proposal applies), ``op.revert`` (:mod:`revert`) and ``note.promote``
(:mod:`promote`: a note copied into an org vault through a screen).

They sit in the ops layer because each runs on a vault's runtime and plans, validates and applies
through the runner and the transaction engine, as every operation does. What they build on, the
repository through vaultd's own index, history, remotes, verification and merges, is in
:mod:`vaultd.git`, below them.
"""
