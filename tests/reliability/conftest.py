"""What the hostile-input slices share: one daemon per module, and the check that it survived."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.harness import Daemon, Home

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[Home, Daemon]]:
    """A daemon many hostile cases run against in turn: each must leave it serving the next."""
    home = Home.create()
    daemon = Daemon(home)
    yield home, daemon
    daemon.stop()
    home.cleanup()
