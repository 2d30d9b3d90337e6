"""Canonical tables through a real daemon and the real vaultctl: a vault names the notes whose
table lists the canonical names of things (vault set --canon-table), and a memory import (or a
promotion) is told the rows its new note mentions (V19), and why a table told nothing (V26). The
rows are advice outside the fingerprint; the reads are bounded, each note by the note bound and all
of them by 8 MiB."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from protocol.limits import MAX_NOTE_BYTES, MiB
from tests.support.agent import agent, ok

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

GLOSSARY = """# Glossary

| Name | Meaning |
|------|---------|
| **PostgreSQL** (Postgres, PG) | the database |
| [[Redis]] | the cache |
| `k8s` / Kubernetes | the cluster |
"""


def _ok(cli: Any, *args: str) -> Any:
    done = cli(*args, "--json")
    assert done.code == 0, (args, done.out, done.err)
    return done.json()


def _set(cli: Any, *flags: str) -> None:
    preview = _ok(cli, "vault", "set", "v", *flags)
    _ok(cli, "vault", "set", "v", *flags, "--confirm", "--fingerprint", preview["fingerprint"])


def _setup(home: Home, cli: Any, notes: dict[str, str | bytes]) -> tuple[Path, Path]:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in {"Home.md": "# Home\n", **notes}.items():
        (root / rel).write_bytes(text if isinstance(text, bytes) else text.encode())
    assert cli("vault", "add", "v", str(root)).code == 0
    memory = home.root / "lessons.md"
    memory.write_text("- Deploys need postgres and K8S nodes\n- Nothing canonical here\n")
    return root, memory


def _entries(cli: Any, memory: Path) -> list[str]:
    return [e["id"] for e in _ok(cli, "memory", "candidates", "--from", str(memory))["entries"]]


def _warnings(cli: Any, memory: Path, entry: str) -> list[dict[str, Any]]:
    preview = _ok(cli, "memory", "import", entry, "--from", str(memory))
    return [w for w in preview.get("warnings", []) if w["code"] in ("V19", "V26")]


def test_a_memory_import_is_told_the_canonical_rows_it_mentions(home: Home, daemon: Daemon, cli: Any) -> None:
    root, memory = _setup(home, cli, {"Glossary.md": GLOSSARY, "Plain.md": "# Plain\n\nNo table | here.\n"})
    deploys, nothing = _entries(cli, memory)
    assert _warnings(cli, memory, deploys) == []  # no tables named: the answer keeps its shape

    _set(cli, "--canon-table", "Glossary.md#Name")
    assert _ok(cli, "vault", "list")["vaults"][0]["entry"]["canon_tables"] == [{"note": "Glossary.md", "column": "Name"}]
    preview = _ok(cli, "memory", "import", deploys, "--from", str(memory))
    rows = [w for w in preview["warnings"] if w["code"] == "V19"]
    assert [(w["path"], w["line"], w["severity"]) for w in rows] == [("Glossary.md", 5, "warning"), ("Glossary.md", 7, "warning")]
    assert "'Postgres'" in rows[0]["message"] and "| **PostgreSQL** (Postgres, PG) | the database |" in rows[0]["message"]
    assert "'k8s'" in rows[1]["message"]
    text = cli("memory", "import", deploys, "--from", str(memory))
    assert text.code == 0 and "V19" in text.out + text.err, (text.out, text.err)
    assert _warnings(cli, memory, nothing) == []

    # Advice, outside the fingerprint: the tables change after the preview, the confirm still goes.
    _set(cli, "--canon-table", "Gone.md", "--canon-table", "Plain.md", "--canon-table", "Glossary.md#Owner")
    done = cli("memory", "import", deploys, "--from", str(memory), "--confirm", "--fingerprint", preview["fingerprint"], "--json")
    assert done.code == 0, done.err
    causes = [w["message"] for w in done.json()["warnings"] if w["code"] == "V26"]
    assert causes == [
        "canonical tables: Gone.md not read (no such note); fix or drop it with 'vaultctl vault set --canon-table'",
        "canonical tables: Plain.md has no recognizable Markdown table (a header row, then a delimiter row of hyphens such as "
        "|---|---|, then the rows)",
        "canonical tables: Glossary.md has no recognizable Markdown table with a 'Owner' column (a header row, then a delimiter "
        "row of hyphens such as |---|---|, then the rows)",
    ], causes
    assert (root / "Deploys need postgres and K8S nodes.md").exists()

    _set(cli, "--no-canon-tables")
    assert _ok(cli, "vault", "list")["vaults"][0]["entry"].get("canon_tables", []) == []


def _filled(size: int, row: str) -> bytes:
    """A note of exactly ``size`` bytes whose table's one row is ``row``."""
    head = f"# T\n\n| Name |\n|---|\n| {row} |\n\n".encode()
    return head + b"p" * (size - len(head) - 1) + b"\n"


def test_canonical_table_reads_are_bounded_at_their_edges(home: Home, daemon: Daemon, cli: Any) -> None:
    notes: dict[str, str | bytes] = {f"T{i}.md": _filled(MAX_NOTE_BYTES, f"name{i}") for i in range(4)}  # 8 MiB together
    notes["Over.md"] = _filled(MAX_NOTE_BYTES + 1, "overname")  # one byte past the note bound
    notes["Last.md"] = _filled(100, "lastname")
    assert sum(len(v) for k, v in notes.items() if k.startswith("T")) == 8 * MiB
    _, memory = _setup(home, cli, notes)
    memory.write_text("- name0 name3 overname lastname\n")
    (entry,) = _entries(cli, memory)

    _set(cli, "--canon-table", "Over.md", "--canon-table", "Last.md")
    found = _warnings(cli, memory, entry)
    assert [w["code"] for w in found] == ["V19", "V26"], found
    assert "'lastname'" in found[0]["message"]
    assert found[1]["message"].startswith("canonical tables: Over.md not read (over the 2 MiB note bound)"), found[1]

    flags = [a for i in range(4) for a in ("--canon-table", f"T{i}.md")] + ["--canon-table", "Last.md"]
    _set(cli, *flags)
    found = _warnings(cli, memory, entry)
    assert [(w["code"], w["path"]) for w in found] == [("V19", "T0.md"), ("V19", "T3.md"), ("V26", "Last.md")], json.dumps(found)
    assert "the 8 MiB read for every canonical table is spent" in found[2]["message"]


def test_a_promotion_is_told_the_org_vaults_own_rows_only(home: Home, daemon: Daemon, cli: Any) -> None:
    for vid, kind, table in (("me", "personal", "| Name |\n|---|\n| Method |\n"), ("team", "org", "| Name |\n|---|\n| Code review |\n")):
        root = home.root / vid
        root.mkdir()
        (root / "Terms.md").write_text(f"# Terms\n\n{table}")
        added = _ok(cli, "vault", "add", vid, str(root), "--kind", kind, "--canon-table", "Terms.md")
        assert added["entry"]["canon_tables"] == [{"note": "Terms.md"}]
    (home.root / "me" / "Method.md").write_text("# Method\n\nOur code review method.\n")
    preview = _ok(cli, "promote", "Method", "--to", "team", "--vault", "me")
    rows = [(w["code"], w["path"], w["line"]) for w in preview["warnings"] if w["code"] in ("V19", "V26")]
    assert rows == [("V19", "Terms.md", 5)], preview["warnings"]
    assert "'Code review'" in next(w["message"] for w in preview["warnings"] if w["code"] == "V19")
    drop = _ok(cli, "vault", "set", "team", "--no-canon-tables")  # advice: the preview stays valid
    _ok(cli, "vault", "set", "team", "--no-canon-tables", "--confirm", "--fingerprint", drop["fingerprint"])
    done = _ok(cli, "promote", "Method", "--to", "team", "--vault", "me", "--confirm", "--fingerprint", preview["fingerprint"])
    assert not [w for w in done.get("warnings", []) if w["code"] == "V19"]
    assert (home.root / "team" / "Method.md").exists()


async def test_an_agent_is_never_told_a_private_table(home: Home, daemon: Daemon, cli: Any) -> None:
    memory = home.root / "user" / ".claude" / "projects" / "-work-app" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Memory\n\n- Deploys need postgres and the Zephyr board\n")
    root = home.root / "vault"
    (root / "Hidden").mkdir(parents=True)
    (root / "Glossary.md").write_text(GLOSSARY)
    (root / "Hidden" / "People.md").write_text("| Name |\n|---|\n| Zephyr board |\n")
    tables = ["--canon-table", "Hidden/People.md", "--canon-table", "Glossary.md"]
    assert cli("vault", "add", "v", str(root), "--private", "Hidden/**", *tables).code == 0
    async with agent(home) as client:
        (entry,) = ok(await client.call_tool("memory_candidates", {"vault": "v"}))["entries"]
        preview = ok(await client.call_tool("memory_import", {"vault": "v", "entry": entry["id"]}))
    found = [(w["code"], w.get("path"), w["message"]) for w in preview["warnings"] if w["code"] in ("V19", "V26")]
    assert [f[:2] for f in found] == [("V19", "Glossary.md"), ("V26", None)], found
    assert "private to this channel" in found[1][2]
    assert "Hidden" not in json.dumps(preview) and "Zephyr board |" not in json.dumps(preview)
    person = _ok(cli, "memory", "import", entry["id"])  # a person sees every table
    assert [w["path"] for w in person["warnings"] if w["code"] == "V19"] == ["Hidden/People.md", "Glossary.md"]
