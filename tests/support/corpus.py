"""Where the tests find the vault generator (``gen_vault.py``), which lives outside the repository.

``$VAULTD_BENCH_GEN`` names it; without it the usual places are tried. A developer without the
generator sees those tests skip; under CI (``CI=true``) a missing generator fails them instead, so
a green run cannot hide that they never ran.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = "VAULTD_BENCH_GEN"
PLACES = (
    REPO / "benchmarks" / "gen_vault.py",
    REPO.parent / "shared" / "bench" / "gen_vault.py",
    Path("/work/shared/bench/gen_vault.py"),
)


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def generator() -> Path:
    """The generator's path, or a skip (a failure under CI, or when ``$VAULTD_BENCH_GEN`` is wrong)."""
    named = os.environ.get(ENV)
    if named:
        if Path(named).is_file():
            return Path(named)
        pytest.fail(f"${ENV} names {named}, which is not a file")
    for place in PLACES:
        if place.is_file():
            return place
    why = f"gen_vault.py not found: set ${ENV} (looked in {', '.join(map(str, PLACES))})"
    if under_ci():
        pytest.fail(why)
    pytest.skip(why)
