"""Vault-wide lint as pure functions over one resolved snapshot of the index.

Each rule module yields :class:`~vaultd.lint.model.Finding` values for its codes; the engine runs
them all, filters and orders the findings. The rules read no file: :mod:`~vaultd.lint.gather`
reads what they need first (the ``.canvas`` and ``.base`` texts the index does not hold), and
``lint.fix`` (an ordinary operation in ``vaultd.ops``) applies the fixes the findings carry.
Nothing here writes.
"""
