"""The sources room's write operations: ``source.capture`` (:mod:`capture`, reading its input
through :mod:`intake` and placing attachments per :mod:`attachments`), ``claim.add`` and
``claim.update`` (:mod:`claims`), registered in the operation catalogue by :mod:`operations`; the
ledger checks that validation runs on every write's plan (:mod:`checks`); and the raw copies'
hashes that drift is judged by (:mod:`rawfiles`).

They sit in the ops layer because they plan through an operation's context and read the vault
through the transaction engine's descriptors and the policy; each writes only through the runner.
The pure rules they apply (ledger fields, identifiers, origins, evidence, media) are in
:mod:`vaultd.sources`, below the policy and the validation that use them.
"""
