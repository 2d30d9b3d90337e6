"""Errors are documented where they are raised: every function of vaultd that raises a
``VaultError`` subclass (itself, or one a helper built and returned) names it in a ``Raises:``
section, and every such class says who raises it.

Read from the source with ``ast`` (nothing is imported), so a module that moves or an error class
added beside its raiser is covered without a list to keep.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = "VaultError"
ERRORS_MODULE = "vaultd.errors"


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    #: local name -> (module, name) for ``from m import name [as local]``
    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: local name -> module for ``import m as local`` and ``from package import module``
    modules: dict[str, str] = field(default_factory=dict)


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted((REPO / "vaultd").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    for module in found.values():
        package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *([base] if base else [])])
                for alias in node.names:
                    local = alias.asname or alias.name
                    if f"{base}.{alias.name}" in found:
                        module.modules[local] = f"{base}.{alias.name}"
                    else:
                        module.names[local] = (base, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.modules[alias.asname] = alias.name
    return found


def _resolve(module: Module, expr: ast.expr) -> tuple[str, str] | None:
    """The (module, class name) an expression names in ``module``'s namespace, if it can tell."""
    if isinstance(expr, ast.Name):
        if expr.id in module.names:
            return module.names[expr.id]
        return module.name, expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in module.modules:
        return module.modules[expr.value.id], expr.attr
    return None


def _error_classes(modules: dict[str, Module]) -> dict[tuple[str, str], ast.ClassDef]:
    """Every ``VaultError`` subclass defined in vaultd, by (module, name), found to a fixed point."""
    classes = {(m.name, n.name): (m, n) for m in modules.values() for n in m.tree.body if isinstance(n, ast.ClassDef)}
    errors = {(ERRORS_MODULE, ROOT)}
    grew = True
    while grew:
        grew = False
        for key, (module, node) in classes.items():
            if key not in errors and any(_resolve(module, base) in errors for base in node.bases):
                errors.add(key)
                grew = True
    return {key: classes[key][1] for key in errors}


def _factories(modules: dict[str, Module], errors: dict[tuple[str, str], ast.ClassDef]) -> dict[tuple[str, str], tuple[str, str]]:
    """Module-level functions that build a refusal for their caller to raise (``raise _issue(...)``),
    by their return annotation: raising what one returns raises that class."""
    found = {}
    for module in modules.values():
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef) and node.returns is not None:
                returns = node.returns
                if isinstance(returns, ast.Constant) and isinstance(returns.value, str):
                    returns = ast.parse(returns.value, mode="eval").body
                if (target := _resolve(module, returns)) in errors:
                    found[(module.name, node.name)] = target
    return found


def _own_raises(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Raise]:
    """The raise statements of the function's own body, not of functions or classes nested in it."""
    found: list[ast.Raise] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Raise):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


_ENTRY = re.compile(r"^\s+(\w+)\s*:")


def raises_entries(docstring: str) -> set[str]:
    """The names a Google-style ``Raises:`` section lists (``Name: when``), empty without one."""
    lines = docstring.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "Raises:"]
    if not starts:
        return set()
    names: set[str] = set()
    indent: int | None = None  # an entry starts at the first line's indent; deeper lines continue it
    for line in lines[starts[0] + 1 :]:
        if not line.strip():
            break
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        if depth == indent and (m := _ENTRY.match(line)):
            names.add(m.group(1))
    return names


def test_the_section_reader_reads_google_style() -> None:
    doc = "Summary.\n\nRaises:\n    NotFound: NOT_FOUND, no such note.\n    Conflict: CONFLICT, it\n        changed: read again.\n\nMore."
    assert raises_entries(doc) == {"NotFound", "Conflict"}
    assert raises_entries("Raises NotFound when absent.") == set()


def test_every_function_that_raises_a_vault_error_names_it_under_raises() -> None:
    modules = _modules()
    errors = _error_classes(modules)
    assert len(errors) > 12, "the walk lost the error classes"
    factories = _factories(modules, errors)
    assert len(factories) >= 5, "the walk lost the functions that build refusals"
    missing: list[str] = []
    checked = 0
    for module in modules.values():
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            raised = set()
            for statement in _own_raises(node):
                exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
                target = _resolve(module, exc) if exc is not None else None
                if target in errors:
                    raised.add(target[1])
                elif isinstance(statement.exc, ast.Call) and target in factories:
                    raised.add(factories[target][1])
            if not raised:
                continue
            checked += 1
            listed = raises_entries(ast.get_docstring(node) or "")
            if lacking := sorted(raised - listed):
                missing.append(f"{module.path.relative_to(REPO)}:{node.lineno} {node.name}: {', '.join(lacking)}")
    assert checked > 100, "the walk found too few raising functions to be reading the source"
    assert missing == [], "add a 'Raises:' entry (Name: CODE, when) to:\n" + "\n".join(missing)


def test_every_error_class_says_who_raises_it_and_the_hierarchy_draws_them_all() -> None:
    modules = _modules()
    errors = _error_classes(modules)
    drawing = ast.get_docstring(modules[ERRORS_MODULE].tree) or ""
    undocumented = [f"{m}.{name}" for (m, name), node in errors.items() if not ast.get_docstring(node)]
    assert undocumented == [], "say who raises it and what the caller should do: " + ", ".join(undocumented)
    undrawn = sorted(name for _, name in errors if not re.search(rf"── {name}\b", drawing) and name != ROOT)
    assert undrawn == [], f"draw these in {ERRORS_MODULE}'s docstring: {undrawn}"
