"""Reports: report.write under reports/ (schema-exempt, on the write path), lint --write and
graph --write (a dated report note and a LINT/GRAPH event), the graph build's vault-graph.json in
vaultd's state with its trend. Real daemon, real vaultctl."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.limits import MAX_NOTE_BYTES, MAX_READ_PAGE_BYTES, MAX_REPORT_BYTES
from protocol.methods.vaults import SchemaProfile
from tests.support.harness import register

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home


def ok(cli: Any, *args: str, input: str | None = None) -> Any:
    result = cli(*args, "--json", input=input)
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def log_types(root: Path) -> list[str]:
    return [ln.split()[2] for ln in (root / "log.md").read_text().splitlines() if ln[:4].isdigit()]


@pytest.fixture
def typed_vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("---\ntype: insight\ndescription: A.\n---\n# Alpha\n\n[[Beta]] and [[Nowhere]]\n")
    (root / "Beta.md").write_text("---\ntype: insight\ndescription: B.\n---\n# Beta\n\nText.\n")
    register(home, root, schema=SchemaProfile.TYPED)
    return root


def test_a_report_is_schema_exempt_but_on_the_write_path(typed_vault: Path, cli: Any) -> None:
    body = "# Weekly\n\nNo frontmatter, a link to [[Someday]] not written yet.\n"
    receipt = ok(cli, "report", "weekly.md", input=body)
    assert (typed_vault / "reports" / "weekly.md").read_text() == body
    assert receipt["changes"][0]["path"] == "reports/weekly.md"
    assert log_types(typed_vault)[-1] == "EXTRACT"
    # The same text as a note of the typed vault is refused: the exemption is the folder's.
    assert cli("new", "Weekly.md", "--body", "-", input=body).code == 1
    again = cli("report", "weekly.md", input="# Other\n")
    assert again.code == 75, again.err  # CONFLICT: it exists
    replaced = ok(cli, "report", "weekly.md", "--replace", input="# Other\n")
    assert (typed_vault / "reports" / "weekly.md").read_text() == "# Other\n"
    ok(cli, "undo", replaced["op_id"])
    assert (typed_vault / "reports" / "weekly.md").read_text() == body
    secret = cli("report", "leak.md", input="token ghp_" + "a" * 36 + "\n")
    assert secret.code == 1 and not (typed_vault / "reports" / "leak.md").exists()


@pytest.mark.parametrize(
    ("name", "code"), [("../escape.md", 2), ("/abs.md", 2), ("x.txt", 2), ("a" * 197 + ".md", 0), ("a" * 198 + ".md", 2)]
)
def test_report_names_stay_inside_reports(typed_vault: Path, cli: Any, name: str, code: int) -> None:
    result = cli("report", name, "--json", input="# R\n")
    assert result.code == code, result.err
    written = [p.relative_to(typed_vault).as_posix() for p in typed_vault.rglob("*.md")]
    assert all(p.startswith("reports/") or p in ("Alpha.md", "Beta.md", "log.md") for p in written)


def test_lint_write_leaves_a_dated_report_and_a_lint_event(typed_vault: Path, cli: Any) -> None:
    result = cli("lint", "--write", "--as-of", "2026-05-01", "--json")
    assert result.code == 1  # the dead link is an error: the verdict and exit are lint's as always
    r = result.json()
    assert r["report"] == "reports/lint-2026-05-01.md" and r["report_op"]
    text = (typed_vault / r["report"]).read_text()
    assert "# Lint report 2026-05-01" in text and "L01" in text and "Nowhere" in text
    assert "[[Nowhere]]" not in text  # a finding's link text is quoted, never a new dead link
    assert log_types(typed_vault)[-1] == "LINT"
    again = cli("lint", "--write", "--as-of", "2026-05-01", "--json").json()
    assert again["report"] == r["report"]  # the day's report, rewritten
    assert sorted(p.name for p in (typed_vault / "reports").iterdir()) == ["lint-2026-05-01.md"]
    assert log_types(typed_vault)[-2:] == ["LINT", "LINT"]
    plain = cli("lint", "--json").json()
    assert plain["report"] is None  # without --write, lint writes nothing


def test_graph_build_keeps_its_state_outside_the_notes_with_a_trend(typed_vault: Path, cli: Any) -> None:
    first = ok(cli, "graph")
    state = typed_vault / ".vaultd" / "vault-graph.json"
    assert first["state"] == str(state) and state.exists()
    assert first["previous"] is None and first["trend"] == {}
    assert first["summary"]["notes"] == 2 and first["summary"]["edges"] == 1
    assert not (typed_vault / "reports").exists()  # no --write: no report
    assert "vault-graph.json" not in json.dumps(ok(cli, "list"))
    (typed_vault / "Gamma.md").write_text("---\ntype: insight\ndescription: G.\n---\n# Gamma\n\n[[Alpha]] [[Beta]]\n")
    second = ok(cli, "graph", "--write", "--fresh")
    assert second["previous"]["edges"] == 1
    assert second["trend"]["notes"] == 1 and second["trend"]["edges"] == 2 and second["trend"]["components"] == 0
    assert second["report"] and second["report"].startswith("reports/graph-")
    report = (typed_vault / second["report"]).read_text()
    assert "| edges | 3 | +2 |" in report
    assert log_types(typed_vault)[-1] == "GRAPH"
    state.write_text("not json")  # a damaged state file is no previous build, never an error
    third = ok(cli, "graph")
    assert third["previous"] is None and json.loads(state.read_text())["summary"]["edges"] == 3


def test_a_report_may_outgrow_a_note_up_to_its_own_bound(typed_vault: Path, cli: Any) -> None:
    """A report (under reports/) is bounded at 16 MiB through the whole write path, reading the one
    it replaces and putting it back on undo included; one byte past is refused and nothing is
    written. A note outside reports/ keeps the note bound."""
    reports = typed_vault / "reports"
    reports.mkdir()
    at = reports / "big.md"
    data = b"# Big\n\n" + b"a" * (MAX_REPORT_BYTES - 8) + b"\n"
    assert len(data) == MAX_REPORT_BYTES
    at.write_bytes(data)
    replaced = ok(cli, "report", "big.md", "--replace", input="# Small\n")
    assert at.read_bytes() == b"# Small\n"
    ok(cli, "undo", replaced["op_id"])
    assert at.read_bytes() == data
    # Read back a page at a time, never whole.
    page = ok(cli, "file", "read", "reports/big.md", "--max-bytes", "1024")
    assert page["encoding"] == "text" and page["content"] == data[:1024].decode(), page["content"][:80]
    assert page["size"] == MAX_REPORT_BYTES and page["sha256"] == hashlib.sha256(data).hexdigest()
    assert page["next_offset"] == 1024 and page["truncated"] is True
    assert cli("file", "read", "reports/big.md", "--max-bytes", str(MAX_READ_PAGE_BYTES + 1)).code == 2  # a page stays bounded

    past = reports / "past.md"
    past.write_bytes(data + b"b")
    refused = cli("report", "past.md", "--replace", input="# Small\n")
    assert refused.code == 1 and f"is {MAX_REPORT_BYTES + 1} bytes, over the {MAX_REPORT_BYTES}-byte limit" in refused.err, refused.err
    assert past.read_bytes() == data + b"b"

    # A note is still held to a note's bound: one at it is edited, one byte past it is refused.
    note = typed_vault / "Long.md"
    head = b"---\ntype: insight\ndescription: L.\n---\n# Long\n\n"
    note.write_bytes(head + b"l" * (MAX_NOTE_BYTES - len(head) - 1) + b"\n")
    grew = cli("append", "Long.md", "--section", "More", "--markdown", "x")
    assert grew.code == 1 and f"a note may be {MAX_NOTE_BYTES}" in grew.err, grew.err
    assert len(note.read_bytes()) == MAX_NOTE_BYTES
