"""Obsidian Bases, evaluated headless: a ``.base`` file (or a ```` ```base ```` block) read within
the YAML bounds, its expressions parsed within the expression bounds, and a view's rows computed
from the index as Obsidian's table shows them.

- :mod:`.model`: the file's shape (filters, formulas, display names, summaries, views);
- :mod:`.expr`: the expression language's parser and printer;
- :mod:`.values`, :mod:`.functions`: the value types and their documented functions;
- :mod:`.engine`: the evaluator, bounded by its step and time budget (and :mod:`.regex_guard`);
- :mod:`.files`: the file fields and methods, read from the index;
- :mod:`.dates`, :mod:`.summaries`: date formats and fields; the summaries under a column.
"""

from vaultd.obsidian.bases.engine import BaseFailed, QueryResult, Row, Universe, run_view
from vaultd.obsidian.bases.model import Base, BaseInvalid, base_blocks, read_base

__all__ = ["Base", "BaseFailed", "BaseInvalid", "QueryResult", "Row", "Universe", "base_blocks", "read_base", "run_view"]
