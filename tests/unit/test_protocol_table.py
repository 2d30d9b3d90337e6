"""The method table is the single source: every entry is complete and its schemas generate."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import msgspec
import pytest

from protocol.errors import ErrorCode, ExitStatus
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_NOTE_BYTES, MiB
from protocol.methods.reads import LinkKind, SearchParams
from protocol.methods.receipts import ChangeAction, MoveDetail, Preview
from protocol.methods.writes import CreateParams
from protocol.reference import render
from protocol.schema import all_schemas, field_help
from protocol.table import METHODS, Effect


def _structs(tp: object) -> list[type]:
    """A result type's Structs: itself, or each variant of a tagged union (generic ones unparametrized)."""
    members = typing.get_args(tp) if typing.get_origin(tp) is typing.Union else (tp,)
    return [typing.get_origin(m) or m for m in members]


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_has_summary_structs_and_valid_tool_name(name: str) -> None:
    spec = METHODS[name]
    assert spec.name == name
    assert spec.summary and spec.summary.endswith(".")
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", spec.tool_name)
    assert issubclass(spec.params, msgspec.Struct) and all(issubclass(t, msgspec.Struct) for t in _structs(spec.result))
    if spec.two_step:
        assert "confirm" in spec.params.__struct_fields__ and "fingerprint" in spec.params.__struct_fields__


@pytest.mark.parametrize("name", sorted(METHODS))
def test_params_refuse_unknown_keys(name: str) -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.json.decode(b'{"surely_not_a_field": 1}', type=METHODS[name].params)


def test_schemas_generate_for_every_method() -> None:
    schemas = all_schemas()
    assert [s["method"] for s in schemas] == list(METHODS)
    for s in schemas:
        assert s["params"] and s["result"]


def test_vault_codes_stay_out_of_the_range_mcp_reserves() -> None:
    codes = [c.rpc_code for c in ErrorCode]
    assert len(set(codes)) == len(codes)
    assert not [c for c in codes if -32099 <= c <= -32000]
    assert ErrorCode.CONFLICT.exit_status == ExitStatus.CONFLICT and int(ExitStatus.CONFLICT) == 75
    assert ErrorCode.UNAVAILABLE.exit_status == 69
    assert ErrorCode.INTERNAL.exit_status == 70


def _handler_table() -> dict[str, object]:
    from vaultd.api import load_handlers
    from vaultd.api.handlers import HANDLERS

    load_handlers()
    return dict(HANDLERS)


def test_every_spec_has_exactly_one_handler_typed_as_the_spec() -> None:
    handlers = _handler_table()
    assert sorted(handlers) == sorted(METHODS)
    for name, spec in METHODS.items():
        hints = typing.get_type_hints(handlers[name])
        params = [v for k, v in hints.items() if k not in ("ctx", "return")]
        assert params == [spec.params], name
        assert hints["return"] == spec.result, name


def test_a_second_handler_for_a_spec_is_refused() -> None:
    from vaultd.api.handlers import handles

    _handler_table()
    spec = METHODS["note.search"]
    with pytest.raises(KeyError, match="two handlers"):
        handles(spec)(_handler_table)  # type: ignore[arg-type]


def test_effect_and_traits_keep_every_combination_in_use() -> None:
    """The enum and flags say what six booleans said: two-step is only ever destructive, a read
    is always idempotent, and only hello opens a session."""
    for spec in METHODS.values():
        assert not (spec.read_only and spec.destructive)
        assert spec.idempotent or not spec.read_only
        assert not spec.two_step or spec.destructive
        assert spec.session == (spec.name == "hello")
    assert {s.effect for s in METHODS.values()} == set(Effect)


REPO = Path(__file__).resolve().parents[2]
SOURCES = [p for pkg in ("protocol", "vaultd", "vaultctl") for p in sorted((REPO / pkg).rglob("*.py"))]
#: spellings of 2 MiB (the note bound) a module would use to declare the bound again
_NOTE_BOUND_SPELLINGS = re.compile(
    r"(?<![\d_.])(?:2\s*\*\s*1024\s*\*\s*1024|2_097_152|2097152|2\s*<<\s*20|1\s*<<\s*21|2\s*\*\s*MiB)(?![\d_])"
)


def test_the_note_bound_is_declared_once_in_bytes() -> None:
    declared = [
        f"{p.relative_to(REPO)}:{n}"
        for p in SOURCES
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if _NOTE_BOUND_SPELLINGS.search(line) and p.name != "limits.py"
    ]
    assert declared == [], "use protocol.limits.MAX_NOTE_BYTES: " + ", ".join(declared)
    from vaultd.txn import plan
    from vaultd.vault import note

    assert plan.MAX_NOTE_BYTES == note.MAX_NOTE_BYTES == MAX_NOTE_BYTES == 2 * MiB


def test_the_note_bound_reaches_the_schemas() -> None:
    body = msgspec.json.schema(CreateParams)["$defs"]["CreateParams"]["properties"]["body"]["anyOf"][0]
    assert body["maxLength"] == MAX_NOTE_BYTES and "2 MiB as UTF-8" in body["description"]


_ISSUE_LITERAL = re.compile(r"""["']([SNPV][0-9]{2}|PARAM)["']""")


def test_every_issue_code_in_the_source_is_catalogued_and_every_catalogued_code_is_used() -> None:
    used: dict[str, list[str]] = {}
    for p in SOURCES:
        if p.name == "issue_codes.py":
            continue
        text = p.read_text(encoding="utf-8")
        for m in _ISSUE_LITERAL.finditer(text):
            used.setdefault(m.group(1), []).append(str(p.relative_to(REPO)))
        for m in re.finditer(r"IssueCode\.([A-Z0-9_]+)", text):
            used.setdefault(m.group(1), []).append(str(p.relative_to(REPO)))
    unknown = {code: where for code, where in used.items() if code not in IssueCode.__members__}
    assert not unknown, f"issue codes missing from protocol.issue_codes.IssueCode: {unknown}"
    assert sorted(IssueCode.__members__) == sorted(used), "catalogued but never emitted"


def test_issue_codes_are_written_through_the_enum_never_as_string_literals() -> None:
    """A code spelled as a string (``code="V03"``, ``if code == "S01"``) escapes the catalogue's
    check that it exists and the reference that documents it; ``IssueCode.V03`` cannot be mistyped.
    The wire still carries the string: ``IssueCode`` is a ``StrEnum``."""
    values = {code.value for code in IssueCode}
    literal = [
        f"{p.relative_to(REPO)}:{node.lineno} {node.value!r}"
        for p in SOURCES
        if p.name != "issue_codes.py"
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"), str(p)))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in values
    ]
    assert literal == [], "write these as IssueCode members: " + ", ".join(literal)


def test_every_issue_code_is_documented() -> None:
    reference = render()
    for code in IssueCode:
        assert code.meaning.endswith(".") and code.action.endswith(".") and code == code.value, code
        assert f"| `{code}` | {code.meaning} | {code.action} |" in reference


def test_the_daemons_link_kinds_and_change_actions_are_the_protocols() -> None:
    """The index and the engine keep their own enums; each value must be one the protocol names."""
    from vaultd.txn.plan import Action
    from vaultd.vault.model import LinkKind as IndexLinkKind

    assert {k.value for k in IndexLinkKind} == {k.value for k in LinkKind}
    assert {a.value for a in Action} == {a.value for a in ChangeAction}


def test_a_receipt_says_its_outcome_once() -> None:
    """``outcome`` is the one discriminator: no legacy booleans beside it that could disagree."""
    detail = MoveDetail(from_="a.md", to="b.md", rewritten=[], links=[])
    preview = Preview(op="note.move", fingerprint="f" * 64, detail=detail)
    wire = msgspec.json.decode(msgspec.json.encode(preview))
    assert wire["outcome"] == "preview"
    assert not {"applied", "dry_run", "preview"} & set(wire), wire
    assert wire["detail"] == {"from": "a.md", "to": "b.md", "rewritten": [], "links": []}
    assert msgspec.json.decode(msgspec.json.encode(preview), type=METHODS["note.move"].result) == preview


def _described(prop: dict[str, object]) -> bool:
    options = [prop, *[p for p in prop.get("anyOf", []) if isinstance(p, dict)]]  # type: ignore[attr-defined]
    return any(isinstance(p.get("description"), str) and p["description"] for p in options)


def test_every_params_field_has_a_description() -> None:
    """What a model reads in a tool's inputSchema is what a person reads in the CLI's help."""
    missing = []
    for spec in METHODS.values():
        (ref,), defs = msgspec.json.schema_components([spec.params])
        props = defs[ref["$ref"].rsplit("/", 1)[-1]].get("properties", {})
        missing += [f"{spec.name}.{name}" for name, prop in props.items() if not _described(prop)]
    assert missing == []


def test_cli_help_is_the_field_description() -> None:
    import typer.main

    from vaultctl.cli import app

    group = typer.main.get_command(app)
    search = group.commands["search"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in search.params}
    assert helps["limit"] == field_help(SearchParams, "limit") == "At most this many hits, best first (1..500)."
    assert helps["query"] == field_help(SearchParams, "query")


def test_field_help_is_the_schema_description() -> None:
    for spec in METHODS.values():
        (ref,), defs = msgspec.json.schema_components([spec.params])
        for name, prop in defs[ref["$ref"].rsplit("/", 1)[-1]].get("properties", {}).items():
            options = [prop, *[p for p in prop.get("anyOf", []) if isinstance(p, dict)]]
            described = next(p["description"] for p in options if "description" in p)
            assert field_help(spec.params, name).startswith(described.rstrip(".")), (spec.name, name)
