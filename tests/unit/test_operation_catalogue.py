"""Each write operation is declared once, in the catalogue; its handler, its MCP tool and its schema
are made from that declaration, and every other write the protocol offers is named here with why
it is not an operation."""

from __future__ import annotations

import ast
import re
import sys
import typing
from pathlib import Path

import pytest
import typer
import typer.main

from protocol.methods.receipts import detail_of
from protocol.methods.spec import Effect
from protocol.schema import all_schemas
from protocol.table import METHODS
from vaultctl.mcp.tools import ToolCatalogue
from vaultd.api import load_handlers
from vaultd.api.handlers import HANDLERS, check_complete
from vaultd.ops import operations
from vaultd.ops.catalog import OPERATIONS, discover

REPO = Path(__file__).resolve().parents[2]

#: The protocol's writes that are not operations on notes, and why: none of them plans a change
#: of the vault's notes that the runner validates, journals and makes undoable.
NOT_OPERATIONS = {
    "daemon.stop": "stops the daemon; no vault changes",
    "vault.add": "registers a vault: the registry, not the vault's notes",
    "vault.remove": "unregisters a vault; its files are left as they are",
    "vault.set": "changes a vault's settings in the registry",
    "vault.git": "changes how a vault records history: the registry and the repository's settings",
    "vault.rebuild": "rebuilds the derived index; no note changes",
    "vault.snapshot": "commits what the user edited by hand; vaultd writes no note",
    "vault.sync": "integrates the remote's commits, each as its own journaled step of the integration",
    "log.append": "appends a line to vaultd's own log file, screened like an operation's log line",
    "proposal.apply": "applies a stored proposal by running the catalogue's operation it names",
    "proposal.reject": "decides a proposal; no note changes",
    "proposal.withdraw": "withdraws a proposal; no note changes",
    "console.open": "starts the console's process",
    "console.stop": "stops the console's process",
    "spec.add": "registers a spec source on a vault's entry: the registry, not the vault's notes",
    "spec.remove": "unregisters a spec source; its files are left as they are",
    "session.hook": "records a host's hook event in the session's record, vaultd's own state",
    "work.start": "opens a work document in vaultd's own state; the work's writes are operations",
    "work.progress": "adds a line to a work document's progress",
    "work.finish": "closes a work document; its writes stay as applied",
    "checkout.make": "copies notes out of the vault into a scratch folder; no note changes",
    "checkout.return": "stores a returned checkout's merge as a proposal (checkout.merge) a person applies; no note changes",
    "checkout.cancel": "drops an open checkout's copies; no note changes",
    "wikify.propose": "stores suggested links as a proposal (wikify.link) a person applies; no note changes",
    "edition.configure": "sets where a vault keeps its journal volumes, in the registry",
    "wikify.accept": "applies the chosen links of a proposal by running its operation (wikify.link), as proposal.apply does",
    "graph.build": "keeps the graph's summary in vaultd's state folder; a report it writes goes through report.write",
}


def test_every_write_method_is_an_operation_or_named_as_none() -> None:
    catalogue = operations()
    writes = {name for name, spec in METHODS.items() if spec.effect is not Effect.READ}
    assert not set(NOT_OPERATIONS) & set(catalogue), "an operation is listed as not one"
    assert sorted(writes - set(catalogue)) == sorted(NOT_OPERATIONS), "a write is neither catalogued nor named as no operation"
    answers_a_receipt = {name for name, spec in METHODS.items() if detail_of(spec.result) is not None}
    assert answers_a_receipt - set(catalogue) == {"proposal.apply"}, "a method answering a WriteReceipt must be an operation"


def test_every_operation_is_answered_by_the_handler_made_from_it() -> None:
    load_handlers()
    check_complete()
    for name, op in operations().items():
        if op.proposal_only:
            assert name not in METHODS, f"{name} is proposal-only yet callable"
            continue
        assert op.spec is METHODS[name], name
        handler = HANDLERS[name]
        assert handler.__module__ == "vaultd.api.operation_methods", f"{name} has a hand-written handler"
        hints = typing.get_type_hints(handler)
        assert hints["params"] is op.spec.params and hints["return"] == op.spec.result, name


def test_an_operation_declared_twice_is_refused() -> None:
    from protocol.methods import writes
    from vaultd.ops import no_detail, operation
    from vaultd.ops.create import plan_create

    operations()
    with pytest.raises(KeyError, match="declared twice"):
        operation(writes.CREATE, detail=no_detail)(plan_create)
    assert OPERATIONS[writes.CREATE.name].planner is plan_create


def _calls(path: Path, name: str) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Name | ast.Attribute) and (getattr(n, "id", None) or getattr(n, "attr", None)) == name
    ]


def test_no_handler_module_runs_an_operation_by_hand() -> None:
    """The runner is reached through the catalogue only: a handler module naming it again would be
    the second declaration of an operation."""
    found = [f"{p.relative_to(REPO)}:{line}" for p in sorted((REPO / "vaultd" / "api").glob("*.py")) for line in _calls(p, "run_operation")]
    assert found == []


def _example(info: str) -> str:
    """The fenced block of docs/adding-an-operation.md whose info string is ``python <info>``."""
    text = (REPO / "docs" / "adding-an-operation.md").read_text(encoding="utf-8")
    found = re.findall(rf"^```python {info}\n(.*?)^```$", text, re.S | re.M)
    assert len(found) == 1, info
    return str(found[0])


def test_the_worked_example_of_the_docs_gets_its_handler_tool_schema_and_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/adding-an-operation.md's three edits, built as written: the spec beside the other
    writes, the planner as a module of an operations package, the command beside the others; the
    daemon's handler, the MCP tool and the schema follow with no other edit."""
    from protocol.methods import writes
    from vaultctl.commands import write_command as write_commands
    from vaultctl.commands import writes as write_cli
    from vaultd.api import operation_methods

    protocol_side = dict(vars(writes))
    exec(compile(_example("spec"), "adding-an-operation.md:spec", "exec"), protocol_side)
    spec, params = protocol_side["TAG"], protocol_side["TagParams"]
    monkeypatch.setattr(writes, "TAG", spec, raising=False)
    monkeypatch.setattr(writes, "TagParams", params, raising=False)
    monkeypatch.setitem(METHODS, spec.name, spec)
    package = tmp_path / "example_ops"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tag.py").write_text(_example("planner"))
    monkeypatch.syspath_prepend(str(tmp_path))
    cli_side = {**vars(write_cli), "TagParams": params}
    try:
        discover(("example_ops",))
        op = OPERATIONS[spec.name]
        assert op.spec is spec and op.planner is not None and op.planner.__module__ == "example_ops.tag"
        operation_methods.register(op)
        hints = typing.get_type_hints(HANDLERS[spec.name])
        assert hints["params"] is params and hints["return"] == spec.result
        assert "note_tag" in ToolCatalogue().names
        assert spec.name in [s["method"] for s in all_schemas()]
        exec(compile(_example("cli"), "adding-an-operation.md:cli", "exec"), cli_side)
        app = typer.Typer()
        app.command("tag")(cli_side["tag"])
        options = {p.name for p in typer.main.get_command(app).params}
        assert {"target", "tag", "vault", "dry_run", "expected_sha", "log", "as_json"} <= options, options
    finally:
        OPERATIONS.pop(spec.name, None)
        HANDLERS.pop(spec.name, None)
        write_commands.WRITE_SPECS.pop(cli_side.get("tag"), None)  # type: ignore[arg-type]
        for name in ("example_ops.tag", "example_ops"):
            sys.modules.pop(name, None)
