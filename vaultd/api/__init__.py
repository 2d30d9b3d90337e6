"""The daemon's method handlers, one module per area; importing them registers them."""


def load_handlers() -> None:
    from vaultd.api import graph_methods, lint_methods, proposal_methods, read_methods, service_methods, vault_methods, write_methods  # noqa: F401  # noqa: F401
