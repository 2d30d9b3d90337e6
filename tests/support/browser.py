"""A real browser for the console's tests: Debian's Chromium, driven by Playwright's Python client.

No browser is ever downloaded: Playwright launches the system's ``chromium`` (``$VAULTD_CHROMIUM``,
else ``/usr/bin/chromium``; ``.ci/run`` installs Debian's package when it is missing). Without it,
or without Playwright, the browser tests skip with a message, and fail under CI (``CI=true``),
where the browser is part of the machine.

Screenshots of each view go to ``artifacts/console/`` (``$VAULTD_ARTIFACTS/console`` when set): a
git-ignored folder that CI keeps as the run's artifacts and nobody commits.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import REPO

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import BrowserContext

CHROMIUM_ENV = "VAULTD_CHROMIUM"
ARTIFACTS_ENV = "VAULTD_ARTIFACTS"
#: What works on these machines: no sandbox (root, containers), nothing that phones home.
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def _missing(why: str) -> None:
    if _under_ci():
        pytest.fail(f"{why}; CI must have it (.ci/run installs Debian's chromium)")
    pytest.skip(f"{why}; install Debian's chromium (apt-get install chromium) to run the console's browser tests")


def chromium_path() -> str:
    """The system Chromium's path, or a skip (a failure under CI)."""
    named = os.environ.get(CHROMIUM_ENV, "/usr/bin/chromium")
    found = shutil.which(named)
    if found is None:
        _missing(f"no Chromium at {named}")
    assert found is not None
    return found


def screenshots_dir() -> Path:
    """Where the views' screenshots go (created; git-ignored)."""
    base = Path(os.environ[ARTIFACTS_ENV]) if os.environ.get(ARTIFACTS_ENV) else REPO / "artifacts"
    folder = base / "console"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """A headless Chromium with a fresh profile (its own --user-data-dir), closed and removed afterwards."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright's Python package is not installed (pip install -e '.[test]')")
        raise
    profile = tempfile.mkdtemp(prefix="vd-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=executable,
                headless=True,
                args=list(CHROMIUM_FLAGS),
                viewport={"width": 1280, "height": 860},
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
