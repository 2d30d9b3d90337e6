"""Obsidian Bases, evaluated headless: a ``.base`` file (or a ```` ```base ```` block) read within
the YAML bounds, its expressions parsed within the expression bounds, and a view's rows computed
from the index as Obsidian's table shows them.

- :mod:`.model`: the file's shape (filters, formulas, display names, summaries, views);
- :mod:`.expr`: the expression language's parser and printer;
- :mod:`.values`, :mod:`.functions`: the value types and their documented functions;
- :mod:`.query`: one view's rows, groups and summaries;
- :mod:`.engine`: the expression evaluator, bounded by its step and time budget (and :mod:`.regex_guard`);
- :mod:`.files`: the file fields and methods, read from the index;
- :mod:`.dates`, :mod:`.summaries`: date formats and fields; the summaries under a column.
"""

from vaultd.obsidian.bases.engine import BaseFailed
from vaultd.obsidian.bases.files import Universe
from vaultd.obsidian.bases.model import Base, BaseInvalid, base_blocks, read_base
from vaultd.obsidian.bases.query import QueryResult, Row, run_view

__all__ = ["Base", "BaseFailed", "BaseInvalid", "QueryResult", "Row", "Universe", "base_blocks", "read_base", "run_view"]
