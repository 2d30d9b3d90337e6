"""The daemon's method handlers, one module per area; importing them registers them."""


def load_handlers() -> None:
    from vaultd.api import (  # noqa: F401
        base_methods,
        console_methods,
        daily_methods,
        file_methods,
        git_methods,
        graph_methods,
        guard_methods,
        index_methods,
        link_methods,
        lint_methods,
        name_methods,
        operation_methods,
        property_methods,
        proposal_methods,
        read_methods,
        report_methods,
        retrieve_methods,
        search_methods,
        service_methods,
        source_methods,
        stats_methods,
        subscription_methods,
        task_methods,
        vault_methods,
        write_methods,
    )
