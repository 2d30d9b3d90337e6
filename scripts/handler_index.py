"""Render ``vaultd/api/handler_index.py``: which module of the daemon answers each method.

The daemon imports a handler's module at the method's first call instead of every module at its
start (most of its resident size and start time were handlers no call had asked for yet). It
finds the module in this index, which is derived from the handlers themselves: every module
loaded, then each registered handler's module read. ``python -m scripts.docs`` writes it with the
reference docs, and ``--check`` (``tests/test_cli_docs.py``) fails when a handler moved or a
method was added without it.
"""

from __future__ import annotations

HEADER = '''"""Which module of ``vaultd.api`` answers each method, so that the daemon imports a handler's
module at the method's first call (:func:`vaultd.api.handler`), not at its start.

Generated from the handlers themselves by ``python -m scripts.docs`` (``scripts/handler_index.py``);
do not edit by hand.
"""

WHERE: dict[str, str] = {
'''


def render() -> str:
    """The index's source text: every method of the handler table and its handler's module."""
    from vaultd.api import load_handlers
    from vaultd.api.handlers import HANDLERS

    load_handlers()
    lines = [f'    "{name}": "{HANDLERS[name].__module__}",\n' for name in sorted(HANDLERS)]
    return HEADER + "".join(lines) + "}\n"
