"""An agent's own memory, read as entries a person may bring into a vault (:mod:`.entries`).

Read only: the memory files are the agent's, and vaultd never writes them. The import itself is
an operation (:mod:`vaultd.ops.memory_import`).
"""
