"""Sources, evidence and references: the pure rules of capture with provenance, the source and
claim ledgers, and reference identifiers.

The rules sit here (:mod:`identifiers`, :mod:`origins`, :mod:`ledger`, :mod:`rules`,
:mod:`references`, :mod:`evidence`, :mod:`media`), below the policy and the write path, so
validation applies them to every write. The room's operations (capture, the claims, the ledger
checks run on every plan) are in :mod:`vaultd.ops.sources` and write only through the runner and
the transaction engine.
"""
