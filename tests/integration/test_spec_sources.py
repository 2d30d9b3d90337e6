"""Spec sources: a vault registers specification files beside its notes and reads them by id.

A source outside the vault (a repository of specs) is read-only to vaultd: registered, listed,
read (metadata, references both ways, a section, pages), walked as a graph with the notes that
name its specs, searched, validated (references to no spec, ranks, cycles, staleness against its
git history), never written, its links never followed. A source inside the vault is written on
the write path: create, update and delete are journaled and undone byte for byte, refused when
they would introduce an error, proposed when an agent asks. Through the real vaultctl, vaultctl's
socket client and the official MCP SDK client.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Any

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.receipts import Proposed
from protocol.methods.specs import (
    MAX_SPEC_DEPTH,
    MAX_SPEC_FILE_BYTES,
    MAX_SPEC_FILES,
    MAX_SPEC_FOLDER_DEPTH,
    MAX_SPEC_ROWS,
    MAX_SPEC_SOURCES,
    SPEC_ADD,
    SPEC_CREATE,
    SPEC_DELETE,
    SPEC_GET,
    SPEC_GRAPH,
    SPEC_GREP,
    SPEC_LIST,
    SPEC_UPDATE,
    SPEC_VALIDATE,
    Direction,
    SpecAddParams,
    SpecCreateParams,
    SpecDeleteParams,
    SpecGetParams,
    SpecGraphParams,
    SpecGrepParams,
    SpecListParams,
    SpecType,
    SpecUpdateParams,
    SpecValidateParams,
)
from protocol.methods.writes import UNDO, UndoParams
from tests.support.agent import agent, ok
from tests.support.harness import snapshot
from tests.support.mcp_results import tool_error
from tests.support.typed import applied, refused, two_step

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient, TypedClients

GOAL = "---\nid: goal\ntype: goal\ntitle: Keep notes safe\nstatus: active\n---\n# Keep notes safe\n\n## Scope\n\nEvery write journaled.\n\n## Decisions\n\nOne writer per vault.\n"
ARCH = "---\nid: arch\ntype: architecture\ntitle: Layers\nparent: goal\n---\n# Layers\n\nThe daemon owns the vault.\n"
STORE = (
    '---\nid: store\ntype: module\ntitle: Storage\nparent: "[[arch|the layers]]"\ndepends-on: [journal, nowhere]\ntags: [storage]\n---\n'
    "# Storage\n\n## Responsibility\n\nWrites through the zanzibar journal.\n"
)
JOURNAL = "---\nid: journal\ntype: module\ntitle: Journal\nparent: arch\ntags: [storage]\n---\n# Journal\n\nSealed records.\n"


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def _repo(home: Home) -> Path:
    """A repository of specs outside the vault, with the code its specs cover, committed."""
    repo = home.root / "design"
    (repo / "specs").mkdir(parents=True)
    (repo / "src").mkdir()
    for name, text in (("goal.md", GOAL), ("arch.md", ARCH), ("store.md", STORE), ("journal.md", JOURNAL)):
        (repo / "specs" / name).write_text(text)
    (repo / "specs" / "README.md").write_text("# Specs\n\nNot a spec: no id, no type.\n")
    (repo / "src" / "store.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "specs")
    return repo


def _vault(home: Home, cli: Any, notes: dict[str, str] | None = None, *extra: str) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in (notes or {"Home.md": "# Home\n"}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    added = cli("vault", "add", "v", str(root), *extra)
    assert added.code == 0, added.err
    return root


def test_an_outside_source_is_read_by_id_and_never_written(home: Home, daemon: Daemon, cli: Any) -> None:
    repo = _repo(home)
    outside = home.root / "secret.md"
    outside.write_text("---\nid: leaked\ntype: goal\ntitle: Leaked\n---\nnot in the source\n")
    os.symlink(outside, repo / "specs" / "linked.md")
    os.symlink(home.root, repo / "specs" / "loop")
    _vault(home, cli, {"Home.md": "# Home\n", "Design notes.md": "---\nspecs: [store, goal]\n---\n# Design notes\n"})
    before = snapshot(repo)
    added = cli("spec", "add", "design", str(repo / "specs"), "--json")
    assert added.code == 0, added.err
    info = added.json()
    assert info["specs"] == 4 and info["inside"] is False
    assert sorted(info["skipped"]) == ["linked.md: a symbolic link, not followed", "loop: a symbolic link, not followed"]
    listed = cli("spec", "list")
    assert listed.code == 0 and "design" in listed.out and "outside" in listed.out

    got = cli("spec", "get", "store", "--json")
    assert got.code == 0, got.err
    store = got.json()
    assert store["path"] == "store.md" and store["frontmatter"]["title"] == "Storage"
    assert {(e["kind"], e["target"], e["resolved"]) for e in store["outgoing"]} == {
        ("parent", "arch", True),
        ("depends-on", "journal", True),
        ("depends-on", "nowhere", False),
    }
    assert store["notes"] == ["Design notes.md"] and store["body"] is None
    assert store["sections"] == ["Storage", "Responsibility"]
    section = cli("spec", "get", "goal", "--section", "Decisions", "--json").json()
    assert section["body"] == "## Decisions\n\nOne writer per vault.\n"
    page = cli("spec", "get", "goal", "--body", "--max-bytes", "10", "--json").json()
    assert page["body"] == "# Keep not" and page["next_offset"] == 10
    assert cli("spec", "get", "leaked").code == 1  # the link's target is never read
    assert cli("spec", "get", "keep notes SAFE", "--json").json()["id"] == "goal"  # by its title, in any case
    assert cli("spec", "get", "goal", "--section", "Nowhere").code == 1

    tree = cli("spec", "graph", "goal", "--depth", "2", "--json").json()
    assert [(n["id"], n["depth"]) for n in tree["nodes"]] == [("goal", 0), ("arch", 1), ("journal", 2), ("store", 2)]
    assert {r["note"] for r in tree["notes"]} == {"Design notes.md"}
    up = cli("spec", "graph", "store", "--direction", "ancestors", "--depth", "3", "--json").json()
    assert [n["id"] for n in up["nodes"]] == ["store", "arch", "goal"]

    hits = cli("spec", "grep", "zanzibar journal", "--json").json()
    assert [(h["id"], h["line"]) for h in hits["hits"]] == [("store", 13)]
    tagged = cli("spec", "grep", "--tag", "storage", "--limit", "1", "--json").json()
    assert tagged["total"] == 2 and tagged["next_offset"] == 1 and [h["id"] for h in tagged["hits"]] == ["journal"]

    checked = cli("spec", "validate", "--json")
    assert checked.code == 1
    report = checked.json()
    assert [(f["code"], f["id"], f["target"]) for f in report["findings"]] == [("dangling", "store", "nowhere")]

    for named in ((), ("--source", "design")):  # outside the vault: read-only to vaultd
        refused_write = cli("spec", "update", "store", "--add", '{"tags": ["x"]}', *named)
        assert refused_write.code == 1 and "only reads" in refused_write.err
    assert snapshot(repo) == before
    assert cli("spec", "remove", "design").code == 0
    assert cli("spec", "get", "store").code == 1
    assert snapshot(repo) == before


def test_a_spec_whose_code_moved_on_is_stale(home: Home, daemon: Daemon, cli: Any) -> None:
    repo = _repo(home)
    head = _git(repo, "rev-parse", "HEAD")
    stamped = STORE.replace("tags: [storage]\n", f"tags: [storage]\npaths: [src]\nverified-against: {head}\n").replace(", nowhere", "")
    (repo / "specs" / "store.md").write_text(stamped)
    _git(repo, "commit", "-qam", "stamp")
    _vault(home, cli)
    assert cli("spec", "add", "design", str(repo / "specs")).code == 0
    fresh = cli("spec", "validate", "--require-fresh", "--json")
    assert fresh.code == 0, fresh.out
    assert fresh.json()["freshness"][0]["stale"] is False
    (repo / "src" / "store.py").write_text("x = 2\n")
    _git(repo, "commit", "-qam", "change the code")
    warned = cli("spec", "validate", "--json")
    assert warned.code == 0
    assert [(f["severity"], f["code"]) for f in warned.json()["findings"]] == [("warning", "stale")]
    assert warned.json()["freshness"][0]["commits_since"] == 1
    required = cli("spec", "validate", "--require-fresh")
    assert required.code == 1 and "stale" in required.out
    assert cli("spec", "get", "store", "--json").json()["freshness"]["stale"] is True


def test_specs_inside_the_vault_are_written_on_the_write_path(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli, {"Home.md": "# Home\n", "specs/goal.md": GOAL, "specs/arch.md": ARCH})
    assert cli("spec", "add", "own", str(root / "specs")).code == 0
    made = applied(
        typed.call(
            SPEC_CREATE,
            SpecCreateParams(
                vault="v", path="store.md", id="store", type=SpecType.MODULE, title="Storage", parent="arch", tags=["storage"]
            ),
        )
    )
    assert (root / "specs/store.md").read_text() == (
        "---\nid: store\ntype: module\ntitle: Storage\nstatus: draft\nparent: arch\ntags:\n  - storage\n---\n"
        "# Storage\n\n## Responsibility\n\n## Interfaces\n\n## Decisions\n"
    )
    got = typed.call(SPEC_GET, SpecGetParams(vault="v", id="store"))
    assert got.path == "store.md" and got.children == []
    assert typed.call(SPEC_GET, SpecGetParams(vault="v", id="arch")).children == ["store"]

    before = snapshot(root)
    with refused(ErrorCode.VALIDATION, IssueCode.V01) as refusal:  # a parent no spec has
        typed.call(SPEC_UPDATE, SpecUpdateParams(vault="v", id="store", set={"parent": "nowhere"}))
    assert "dangling" in refusal.data.message
    with refused(ErrorCode.VALIDATION, IssueCode.V01):  # a goal cannot sit under an architecture
        typed.call(
            SPEC_CREATE, SpecCreateParams(vault="v", path="sub/goal2.md", id="goal2", type=SpecType.GOAL, title="Two", parent="arch")
        )
    with refused(ErrorCode.VALIDATION, IssueCode.V08):
        typed.call(SPEC_CREATE, SpecCreateParams(vault="v", path="again.md", id="store", type=SpecType.MODULE, title="Again"))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(SPEC_UPDATE, SpecUpdateParams(vault="v", id="store", unset=["title"]))
    with refused(ErrorCode.VALIDATION):  # out of the source's folder, and out of the vault
        typed.call(SPEC_CREATE, SpecCreateParams(vault="v", path="../../escape.md", id="esc", type=SpecType.MODULE, title="Escape"))
    assert snapshot(root) == before

    edited = applied(
        typed.call(
            SPEC_UPDATE,
            SpecUpdateParams(vault="v", id="store", set={"status": "active"}, add={"tags": ["core"]}, remove={"tags": ["storage"]}),
        )
    )
    text = (root / "specs/store.md").read_text()
    assert "status: active\n" in text and "  - core\n" in text and "storage" not in text.split("---")[1]
    assert text.endswith("# Storage\n\n## Responsibility\n\n## Interfaces\n\n## Decisions\n")

    preview, done = two_step(typed, SPEC_DELETE, SpecDeleteParams(vault="v", id="arch"))
    assert [w.path for w in preview.warnings] == ["specs/store.md"]
    assert not (root / "specs/arch.md").exists() and (root / ".trash/specs/arch.md").read_text() == ARCH
    for op in (done, edited, made):
        assert op.op_id is not None
        applied(typed.call(UNDO, UndoParams(vault="v", op_id=op.op_id)))
    assert (root / "specs/arch.md").read_text() == ARCH and not (root / "specs/store.md").exists()


def test_reads_are_bounded_at_their_edges(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    repo = _repo(home)
    body = "x" * (MAX_SPEC_FILE_BYTES - len("---\nid: big\ntype: goal\ntitle: Big\n---\n"))
    (repo / "specs" / "big.md").write_text("---\nid: big\ntype: goal\ntitle: Big\n---\n" + body)
    (repo / "specs" / "bigger.md").write_text("---\nid: bigger\ntype: goal\ntitle: Bigger\n---\n" + body + "x")
    _vault(home, cli)
    added = cli("spec", "add", "design", str(repo / "specs"), "--json")
    assert added.code == 0, added.err
    assert added.json()["skipped"] == ["bigger.md: over the 2 MiB bound"]
    assert typed.call(SPEC_GET, SpecGetParams(vault="v", id="big")).id == "big"
    assert typed.call(SPEC_GREP, SpecGrepParams(vault="v", limit=MAX_SPEC_ROWS)).total == 5
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(SPEC_GREP, {"vault": "v", "limit": MAX_SPEC_ROWS + 1})
    assert typed.call(SPEC_GRAPH, SpecGraphParams(vault="v", id="goal", direction=Direction.NEIGHBORS, depth=MAX_SPEC_DEPTH)).nodes
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(SPEC_GRAPH, {"vault": "v", "id": "goal", "depth": MAX_SPEC_DEPTH + 1})
    assert typed.call(SPEC_VALIDATE, SpecValidateParams(vault="v", limit=1)).truncated is False
    with refused(ErrorCode.NOT_FOUND):
        typed.call(SPEC_GET, SpecGetParams(vault="v", id="goal", source="nope"))
    one = cli("spec", "add", "one", str(repo / "specs" / "goal.md"), "--json")
    assert one.code == 0 and one.json()["specs"] == 1
    assert typed.call(SPEC_GET, SpecGetParams(vault="v", source="one", id="goal")).path == "goal.md"
    around = cli("spec", "add", "around", str(home.root))  # it would read the vault's notes, private ones too
    assert around.code == 1 and "holds vault" in around.err


async def test_an_agent_reads_specs_and_proposes_spec_writes(home: Home, daemon: Daemon, cli: Any, typed_clients: TypedClients) -> None:
    root = _vault(home, cli, {"Home.md": "# Home\n", "specs/goal.md": GOAL, "private/arch.md": ARCH}, "--private", "private/**")
    assert cli("spec", "add", "own", str(root / "specs")).code == 0
    assert cli("spec", "add", "hidden", str(root / "private")).code == 0
    async with agent(home) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"spec_read", "memory_candidates"} <= names and "spec_add" not in names  # spec_read: get, grep, graph
        got = ok(await client.call_tool("spec_get", {"vault": "v", "id": "goal"}))
        assert got["path"] == "goal.md"
        hidden = tool_error(await client.call_tool("spec_get", {"vault": "v", "id": "arch"}))
        assert hidden["code"] == "NOT_FOUND"
        made = ok(await client.call_tool("spec_update", {"vault": "v", "source": "own", "id": "goal", "set": {"status": "deprecated"}}))
    assert made["outcome"] == "proposed", made
    assert "spec_create" not in names and "spec_delete" not in names and "spec_validate" not in names
    assert (root / "specs/goal.md").read_text() == GOAL
    pending = cli("proposals", "--json")
    assert pending.code == 0 and "spec.update" in pending.out
    agent_client = typed_clients.open(home, Channel.MCP, session="s1")
    assert isinstance(agent_client.call(SPEC_UPDATE, SpecUpdateParams(vault="v", source="own", id="goal", add={"tags": ["x"]})), Proposed)
    with refused(ErrorCode.NOT_FOUND):  # a private spec does not exist for an agent, even to write
        agent_client.call(SPEC_UPDATE, SpecUpdateParams(vault="v", source="hidden", id="arch", add={"tags": ["x"]}))
    assert (root / "specs/goal.md").read_text() == GOAL and (root / "private/arch.md").read_text() == ARCH


def test_source_counts_are_bounded_at_their_edges(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    _vault(home, cli)
    wide = home.root / "wide"
    wide.mkdir()
    for n in range(MAX_SPEC_FILES):
        (wide / f"{n}.md").write_text("x\n")
    assert typed.call(SPEC_ADD, SpecAddParams(vault="v", id="wide", path=str(wide))).specs == 0
    (wide / "one-more.md").write_text("x\n")
    with refused(ErrorCode.LIMIT):
        typed.call(SPEC_GREP, SpecGrepParams(vault="v"))
    assert cli("spec", "remove", "wide").code == 0
    with refused(ErrorCode.LIMIT):
        typed.call(SPEC_ADD, SpecAddParams(vault="v", id="wide", path=str(wide)))
    for n in range(MAX_SPEC_SOURCES):
        (home.root / f"s{n}").mkdir()
        typed.call(SPEC_ADD, SpecAddParams(vault="v", id=f"s{n}", path=str(home.root / f"s{n}")))
    (home.root / "last").mkdir()
    with refused(ErrorCode.VALIDATION):
        typed.call(SPEC_ADD, SpecAddParams(vault="v", id="last", path=str(home.root / "last")))
    assert len(typed.call(SPEC_LIST, SpecListParams(vault="v")).sources) == MAX_SPEC_SOURCES


def test_status_lists_each_source_and_doctor_reports_one_whose_folder_is_gone(home: Home, daemon: Daemon, cli: Any) -> None:
    repo = _repo(home)
    _vault(home, cli)
    assert cli("spec", "add", "design", str(repo / "specs")).code == 0
    assert cli("spec", "add", "goal", str(repo / "specs" / "goal.md")).code == 0
    where = str((repo / "specs").resolve())
    status = cli("status", "--json").json()
    assert status["vaults"][0]["specs"] == [
        {"id": "design", "path": where, "missing": False},
        {"id": "goal", "path": f"{where}/goal.md", "missing": False},
    ]
    assert f"v: spec source design {where}" in cli("status").out
    doctor = cli("doctor", "--json").json()
    assert not [f for f in doctor["findings"] if f["check"].startswith("spec:")], doctor["findings"]

    (repo / "specs").rename(repo / "specs-moved")
    status = cli("status", "--json")
    assert status.code == 0
    assert [s["missing"] for s in status.json()["vaults"][0]["specs"]] == [True, True]
    assert f"v: spec source design {where} (gone)" in cli("status").out
    doctor = cli("doctor", "--json").json()
    gone = {f["check"]: f for f in doctor["findings"] if f["check"].startswith("spec:")}
    assert sorted(gone) == ["spec:v:design", "spec:v:goal"], doctor["findings"]
    assert gone["spec:v:design"]["level"] == "warn" and where in gone["spec:v:design"]["finding"]
    assert "spec remove design --vault v" in gone["spec:v:design"]["finding"]
    assert doctor["verdict"] in ("warn", "fail")

    daemon.stop()  # without a daemon, vaultctl reads config.json and finds the same
    offline = cli("doctor", "--json", env={"VAULTD_NO_AUTOSTART": "1"}).json()
    assert {f["check"]: f["finding"] for f in offline["findings"] if f["check"].startswith("spec:")} == {
        check: f["finding"] for check, f in gone.items()
    }


def test_folders_are_walked_to_a_bounded_depth(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    """A repository an agent writes to may nest folders without end: the walk stops at its bound,
    says where, and still answers (a deeper chain once crashed the read with a recursion error)."""
    _vault(home, cli)
    repo = home.root / "nested"
    at_bound = repo.joinpath(*["d"] * MAX_SPEC_FOLDER_DEPTH)
    at_bound.mkdir(parents=True)
    (at_bound / "deep.md").write_text("---\nid: deep\ntype: goal\ntitle: Deep\n---\n# Deep\n")
    past = at_bound / "d"
    past.mkdir()
    (past / "deeper.md").write_text("---\nid: deeper\ntype: goal\ntitle: Deeper\n---\n# Deeper\n")
    # Far past any recursion the walk could afford (and past what one path may spell out).
    fd = os.open(past, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):
        os.mkdir("e", dir_fd=fd)
        nxt = os.open("e", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    out = os.open("farthest.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(out, b"---\nid: farthest\ntype: goal\ntitle: Far\n---\n")
    os.close(out)
    os.close(fd)
    try:
        added = typed.call(SPEC_ADD, SpecAddParams(vault="v", id="nested", path=str(repo)))
        assert added.specs == 1
        shown = "/".join(["d"] * (MAX_SPEC_FOLDER_DEPTH + 1))
        assert added.skipped == [f"{shown}/: deeper than {MAX_SPEC_FOLDER_DEPTH} folders, not read"], added.skipped
        assert typed.call(SPEC_GET, SpecGetParams(vault="v", id="deep")).path.endswith("/deep.md")
        with refused(ErrorCode.NOT_FOUND):
            typed.call(SPEC_GET, SpecGetParams(vault="v", id="deeper"))
        assert typed.call(SPEC_GREP, SpecGrepParams(vault="v")).total == 1
    finally:
        _flatten(past)


def _flatten(folder: Path) -> None:
    """Take the chain of folders below ``folder`` apart one level at a time (a recursive removal
    would run out of stack on it)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while os.path.lexists(folder / "e"):
            os.rename("e", "gone", src_dir_fd=fd, dst_dir_fd=fd)
            gone = os.open("gone", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            for name in os.listdir(gone):
                os.rename(name, name, src_dir_fd=gone, dst_dir_fd=fd)
            os.close(gone)
            os.rmdir("gone", dir_fd=fd)
    finally:
        os.close(fd)
