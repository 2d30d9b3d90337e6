"""Sources, evidence and references: capture with provenance, the source and claim ledgers, and
reference identifiers.

The pure rules sit here (:mod:`identifiers`, :mod:`origins`, :mod:`ledger`, :mod:`rules`,
:mod:`references`, :mod:`evidence`, :mod:`media`), below the write path, so validation applies
them to every write. The operations (:mod:`intake`, :mod:`attachments`, :mod:`capture`,
:mod:`claims`, :mod:`checks`, :mod:`operations`) sit with the other operations and write only
through the runner and the transaction engine.
"""
