"""The extras table the daemon and vaultctl read (protocol/extras.py) is pyproject.toml's
``[project.optional-dependencies]``: the same extras, the same distributions, none of them in
the core dependencies, and every one in what ``make venv`` installs (``test``)."""

from __future__ import annotations

import re
import tomllib

from protocol.extras import CONSOLE, EXTRAS, GRAPH
from tests.support.harness import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    """The distribution a requirement names, normalised (PEP 503)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group()).lower()


def test_the_table_is_pyprojects_extras() -> None:
    optional = PROJECT["optional-dependencies"]
    declared = {name: sorted(_name(r) for r in reqs) for name, reqs in optional.items() if name != "test"}
    assert declared == {e.name: sorted(_name(d) for d, _ in e.libraries) for e in EXTRAS}


def test_the_core_install_carries_no_extra() -> None:
    core = {_name(r) for r in PROJECT["dependencies"]}
    for extra in EXTRAS:
        assert not core & {_name(d) for d, _ in extra.libraries}, extra.name


def test_the_test_install_brings_every_extra() -> None:
    """``make venv`` (behind ``make demo`` and ``make test``) installs ``.[test]``: every feature works there."""
    (own,) = [r for r in PROJECT["optional-dependencies"]["test"] if _name(r) == "vaultd"]
    brought = re.search(r"\[(.*)\]", own)
    assert brought is not None, own
    assert set(brought.group(1).split(",")) == {e.name for e in EXTRAS}


def test_an_installed_extra_has_no_absence() -> None:
    """In this venv both are installed, so neither refuses; the message form is tested with them hidden
    (tests/integration/test_extras.py)."""
    assert CONSOLE.missing() == [] and CONSOLE.absence() is None
    assert GRAPH.absence("graph.communities") is None
