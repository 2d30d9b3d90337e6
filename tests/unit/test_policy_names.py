"""The policy package loads each rule's module at the first use of one of its names: every name
it offers is found, in the module its type-checking import names."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

import vaultd.policy


def _checked_imports() -> dict[str, str]:
    """name -> module, from the imports under ``if TYPE_CHECKING:`` in the package's source."""
    tree = ast.parse(inspect.getsource(vaultd.policy))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom) and item.module is not None
                for alias in item.names:
                    found[alias.name] = item.module.removeprefix("vaultd.policy.")
    return found


def test_the_lazy_names_are_the_checked_ones_and_the_exported_ones() -> None:
    assert vaultd.policy._WHERE == _checked_imports()
    assert set(vaultd.policy._WHERE) == set(vaultd.policy.__all__)


@pytest.mark.parametrize("name", sorted(vaultd.policy.__all__))
def test_each_name_is_its_modules_own(name: str) -> None:
    module = importlib.import_module(f"vaultd.policy.{vaultd.policy._WHERE[name]}")
    assert getattr(vaultd.policy, name) is getattr(module, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="surely_not_a_rule"):
        vaultd.policy.surely_not_a_rule  # noqa: B018
