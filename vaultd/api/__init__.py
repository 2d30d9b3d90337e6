"""The daemon's method handlers, one module per area; importing them registers them."""


def load_handlers() -> None:
    from vaultd.api import session_methods, vault_methods  # noqa: F401
