"""Retrieval: heading-aware chunks of every note, BM25 over them, and the optional local rerank.

:mod:`chunks` cuts a note into passages, :mod:`store` is the chunk index beside the FTS cache,
:mod:`live` keeps it following the live index, :mod:`rerank` reorders BM25's best candidates
when the ``vaultd[rerank]`` extra is installed and falls back to BM25 order when it is not.
"""
