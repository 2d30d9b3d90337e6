"""The daemon's method handlers, one module per area; importing them registers them.

The daemon imports a module at the first call of one of its methods (:func:`handler`), so a
start loads only the server and what the calls made so far needed; :func:`load_handlers` loads
every module at once (the tests, the handler index's generator).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultd.api.handlers import Handler


def handler(method: str) -> Handler | None:
    """The handler of ``method``, its module imported at the first call; None for a method no
    module answers. An import that fails raises, for the caller to answer as an internal error."""
    from vaultd.api.handler_index import WHERE
    from vaultd.api.handlers import HANDLERS

    found = HANDLERS.get(method)
    if found is None and (module := WHERE.get(method)) is not None:
        importlib.import_module(module)
        found = HANDLERS.get(method)
    return found


def check_indexed() -> None:
    """Every method of the protocol table has a handler's module in the index: a method
    declared but not answered is a start-up failure, without importing any handler.

    Raises:
        RuntimeError: a method of the table that no handler module answers.
    """
    from protocol.table import METHODS
    from vaultd.api.handler_index import WHERE

    missing = sorted(set(METHODS) - set(WHERE))
    if missing:
        raise RuntimeError(f"methods without a handler: {', '.join(missing)}")


def load_handlers() -> None:
    from vaultd.api import (  # noqa: F401
        base_methods,
        checkout_methods,
        console_methods,
        daily_methods,
        edition_methods,
        file_methods,
        git_methods,
        graph_methods,
        guard_methods,
        index_methods,
        link_methods,
        lint_methods,
        memory_methods,
        name_methods,
        operation_methods,
        property_methods,
        proposal_methods,
        read_methods,
        report_methods,
        retrieve_methods,
        search_methods,
        service_methods,
        session_methods,
        source_methods,
        spec_methods,
        stats_methods,
        subscription_methods,
        task_methods,
        vault_methods,
        wikify_methods,
        work_methods,
        write_methods,
    )
