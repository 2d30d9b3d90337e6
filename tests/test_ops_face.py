"""vaultd.ops shows other packages one face: its planners' helpers (the modules named with a
leading underscore) are reached through ``vaultd.ops`` only, so they can change without their
callers knowing."""

from __future__ import annotations

from tests.test_architecture import EDGES, REPO, _imports

PACKAGES = ("vaultd", "vaultctl", "reliability", "benchmarks", "scripts")


def _private(name: str) -> bool:
    parts = name.split(".")
    return len(parts) > 2 and parts[:2] == ["vaultd", "ops"] and parts[2].startswith("_") and parts[2] != "__init__"


def test_no_module_outside_vaultd_ops_imports_its_private_helpers() -> None:
    # A module the helpers themselves import cannot import the face without a circle (the face
    # imports the helpers); it may name the one helper it needs, and only for that reason.
    below = {target for module, edges in EDGES.items() if _private(module) for _, target in edges}
    found = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path.relative_to(REPO).parts[:2] != ("vaultd", "ops")
        for line, name in _imports(path)
        if _private(name) and ".".join(path.relative_to(REPO).with_suffix("").parts) not in below
    ]
    assert found == [], "import these from vaultd.ops (add the name to its face):\n" + "\n".join(found)


def test_no_handler_builds_what_a_planner_sees() -> None:
    """An OpContext is made where an operation runs (the runner, promotion's own runner); a handler
    that made one by hand would hold the index its own way (op.list reads through live_view)."""
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "vaultd" / "api").rglob("*.py"))
        for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "OpContext" in text
    ]
    assert found == []
