"""The migration rules of ``vault.tidy``: pure functions from a note's text to its tidied text.

Each rule changes only the bytes it concerns: a frontmatter rule goes through the lossless header
editor (:mod:`vaultd.vault.frontmatter_emit`), so every other key keeps its bytes; a body rule
rewrites only the sections it names. Each change and each finding left for a person is a
:class:`~vaultd.tidy.model.Record` naming the rule's code, the note and the line, never a secret.
The operation that applies them is :mod:`vaultd.ops.tidy`.
"""
