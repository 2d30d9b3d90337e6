"""Vault-wide lint as pure functions over one resolved snapshot of the index.

Each rule module yields :class:`~vaultd.lint.model.Finding` values for its codes; the engine runs
them all, filters and orders the findings. Nothing here reads or writes a file: the handler
hands in the ``.canvas`` and ``.base`` texts it read, and ``lint.fix`` (an ordinary operation in
``vaultd.ops``) applies the fixes the findings carry.
"""
