"""ruff may move an import used only in annotations under ``TYPE_CHECKING``, except where a
Struct's field needs it: msgspec resolves field annotations at run time. ruff knows a class is a
Struct only by a base named in ``runtime-evaluated-base-classes``, and follows bases within one
module only. So every protocol Struct that a class in another module subclasses must be named
there, or ruff asks to move an import that msgspec needs (and a blind fix breaks decoding).
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import msgspec

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("protocol", "vaultd", "vaultctl", "tests", "scripts", "reliability", "benchmarks")


def _named_bases() -> set[str]:
    lint = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    return set(lint["flake8-type-checking"]["runtime-evaluated-base-classes"])


def _imported_struct_bases(path: Path) -> set[str]:
    """``module.Name`` of each protocol Struct that ``path`` imports and subclasses."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "protocol":
            imported.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            name = base.value if isinstance(base, ast.Subscript) else base  # Generic[...] bases too
            if isinstance(name, ast.Name) and name.id in imported:
                module, _, attr = imported[name.id].rpartition(".")
                value = getattr(importlib.import_module(module), attr)
                if isinstance(value, type) and issubclass(value, msgspec.Struct):
                    found.add(imported[name.id])
    return found


def test_every_struct_subclassed_across_modules_is_a_runtime_evaluated_base() -> None:
    used: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for base in _imported_struct_bases(path):
                used.setdefault(base, []).append(str(path.relative_to(REPO)))
    assert used, "no protocol Struct is subclassed in another module: the scan itself is broken"
    missing = {base: paths for base, paths in used.items() if base not in _named_bases()}
    assert not missing, f"add to [tool.ruff.lint.flake8-type-checking] runtime-evaluated-base-classes: {missing}"
