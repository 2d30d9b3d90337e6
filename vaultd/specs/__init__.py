"""Spec sources: specification files a vault registers beside its notes, read as a graph by id.

``documents`` finds and parses a source's specs (bounded, never following a link), ``graph``
their references and slices, ``checks`` what is wrong with them and whether the code they cover
moved on since they were verified. Nothing here writes: a spec inside the vault is written by the
operations in :mod:`vaultd.ops.spec_write`.
"""
