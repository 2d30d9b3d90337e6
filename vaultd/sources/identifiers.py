"""Bibliographic identifiers of reference notes: DOI, arXiv id and citekey, validated and normalized.

A DOI is case-insensitive (the DOI Handbook): it is stored lowercase and compared lowercase. An
arXiv id is looked up without its version (``2502.04321v2`` is found by ``2502.04321``). A
citekey is unique in the vault ignoring ASCII case, its stored case kept. Validation is syntax
only: nothing is looked up anywhere.
"""

from __future__ import annotations

import re
from typing import Final

CITEKEY: Final = re.compile(r"[A-Za-z0-9_:-]{1,64}")
DOI: Final = re.compile(r"10\.[0-9]{4,9}/[^\s\x00-\x1f\x7f-\x9f]+")
_ARXIV_NEW: Final = re.compile(r"([0-9]{2})([0-9]{2})\.([0-9]{4,5})(v[1-9][0-9]*)?")
_ARXIV_OLD: Final = re.compile(r"([a-z][a-z-]*(?:\.[A-Z]{2})?/[0-9]{2}([0-9]{2})[0-9]{3})(v[1-9][0-9]*)?")
#: How people paste a DOI: a resolver URL or a ``doi:`` prefix around the DOI itself.
_DOI_PREFIX: Final = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_ARXIV_PREFIX: Final = re.compile(r"^(?:arxiv:\s*|https?://arxiv\.org/abs/)", re.IGNORECASE)


def valid_doi(value: object) -> bool:
    return isinstance(value, str) and DOI.fullmatch(value) is not None


def valid_citekey(value: object) -> bool:
    return isinstance(value, str) and CITEKEY.fullmatch(value) is not None


def valid_arxiv(value: object) -> bool:
    """``YYMM.NNNN`` before 2015, ``YYMM.NNNNN`` from 2015, or ``archive/YYMMNNN``; ``vN`` optional."""
    if not isinstance(value, str):
        return False
    m = _ARXIV_NEW.fullmatch(value)
    if m:
        yy, mm, number = int(m.group(1)), int(m.group(2)), m.group(3)
        return 1 <= mm <= 12 and len(number) == (4 if yy < 15 else 5)
    old = _ARXIV_OLD.fullmatch(value)
    return old is not None and 1 <= int(old.group(2)) <= 12


def doi_key(value: str) -> str:
    """The form a DOI is stored and compared in: prefixes dropped, lowercase."""
    return _DOI_PREFIX.sub("", value.strip()).lower()


def arxiv_key(value: str) -> str:
    """The form an arXiv id is looked up by: prefixes and the version dropped."""
    bare = _ARXIV_PREFIX.sub("", value.strip())
    m = _ARXIV_NEW.fullmatch(bare)
    if m:
        return f"{m.group(1)}{m.group(2)}.{m.group(3)}"
    old = _ARXIV_OLD.fullmatch(bare)
    return old.group(1) if old else bare


def citekey_key(value: str) -> str:
    """Citekeys collide ignoring ASCII case (the stored case is kept)."""
    return value.strip().lower()
