"""A vault's own domains (V16) and folder roles (intake, raw, journal, user-only), through the real
vaultctl and a real daemon: registered, reported, checked by writers and lint, enforced on agents."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods import files, writes
from protocol.methods.common import Channel
from protocol.methods.files import FileDeleteParams, FileWriteParams
from protocol.methods.vaults import BUILTIN_DOMAINS, MAX_DOMAINS
from protocol.methods.writes import CreateParams
from tests.support.harness import Daemon, Home, snapshot
from tests.support.typed import TypedClients, refused

if TYPE_CHECKING:
    from pathlib import Path

TYPED_NOTE = "---\ntype: insight\ndescription: One line.\ndomain: {domain}\n---\n# {title}\n"


def ok(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def error_codes(result: Any) -> list[str]:
    return [line.split()[1] for line in result.err.splitlines() if line.startswith("  error ")]


@pytest.fixture
def root(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Old.md").write_text(TYPED_NOTE.format(domain="astrology", title="Old"))
    (root / "Kept.md").write_text(TYPED_NOTE.format(domain="finance", title="Kept"))
    return root


# -- domains -------------------------------------------------------------------------------------


def test_declared_domains_are_accepted_reported_and_others_refused_with_v13(root: Path, home: Home, cli: Any) -> None:
    ok(cli, "vault", "add", "v", str(root), "--schema", "typed", "--domain", "finance", "--domain", "health")
    effective = sorted({*BUILTIN_DOMAINS, "finance", "health"})
    assert ok(cli, "status")["vaults"][0]["domains"] == effective
    assert ok(cli, "vault", "list")["vaults"][0]["entry"]["domains"] == ["finance", "health"]
    assert "built-ins + finance, health" in cli("vault", "list").out
    assert "built-ins + finance, health" in cli("status").out

    created = cli("new", "Fine.md", "--set", "type=insight", "--set", "description=One line.", "--set", "domain=health")
    assert created.code == 0, created.err
    bad = cli("set", "Kept", "--set", "domain=astrology")
    assert bad.code == 1, bad.out
    assert error_codes(bad) == ["V16"]
    assert "finance" in bad.err and "astrology" not in bad.err  # names the allowed set, never echoes the value
    assert ok(cli, "set", "Kept", "--set", "domain=health")

    lint = json.loads(cli("lint", "--json").out)
    found = [f for f in lint["findings"] if f["note"] == "Old.md" and f["finding"].startswith("V16")]
    assert found and found[0]["code"] == "L06", lint["findings"]
    assert not [f for f in lint["findings"] if f["note"] == "Kept.md" and "V16" in f["finding"]]


def test_an_open_vault_checks_domains_only_once_it_declares_some(root: Path, cli: Any) -> None:
    ok(cli, "vault", "add", "v", str(root))  # open, no domains: today's behaviour, any domain passes
    assert ok(cli, "set", "Kept", "--set", "domain=anything-goes")
    preview = ok(cli, "vault", "set", "v", "--domain", "finance")
    assert [c["setting"] for c in preview["changes"]] == ["domains"]
    ok(cli, "vault", "set", "v", "--domain", "finance", "--confirm", "--fingerprint", preview["fingerprint"])
    bad = cli("new", "New.md", "--set", "domain=still-anything")
    assert error_codes(bad) == ["V16"]
    # Kept's domain was written before the vault declared any: old debt, it warns and never blocks.
    debt = ok(cli, "set", "Kept", "--set", "status=draft")
    assert [w["code"] for w in debt["warnings"]] == ["V16"]
    assert ok(cli, "set", "Kept", "--set", "domain=finance")


@pytest.mark.parametrize(
    ("domains", "accepted"),
    [
        ([f"d{i}" for i in range(MAX_DOMAINS)], True),
        ([f"d{i}" for i in range(MAX_DOMAINS + 1)], False),
        (["d1"] * MAX_DOMAINS, True),  # a repeat counts toward the bound, appears once
        (["d1"] * (MAX_DOMAINS + 1), False),
        (["a" + "b" * 31], True),
        (["a" + "b" * 32], False),
        (["Finance"], False),
        (["9lives"], False),
        (["has space"], False),
    ],
)
def test_the_domain_declaration_is_bounded(root: Path, home: Home, cli: Any, domains: list[str], accepted: bool) -> None:
    config_before = (home.home / "config.json").read_bytes() if (home.home / "config.json").exists() else None
    result = cli("vault", "add", "v", str(root), *[a for d in domains for a in ("--domain", d)], "--json")
    if accepted:
        assert result.code == 0, result.err
        assert ok(cli, "status")["vaults"][0]["domains"] == sorted({*BUILTIN_DOMAINS, *domains})
    else:
        assert result.code == 2, (result.out, result.err)  # the params' fault
        after = (home.home / "config.json").read_bytes() if (home.home / "config.json").exists() else None
        assert after == config_before


# -- folder roles --------------------------------------------------------------------------------


ROLES = ("--role", "intake=inbox", "--role", "raw=raw", "--role", "journal=journals", "--role", "user_only=mine", "--role", "wiki=wiki")


@pytest.fixture
def roled(root: Path, home: Home, cli: Any) -> Path:
    for folder in ("inbox", "raw", "journals", "mine", "wiki"):
        (root / folder).mkdir()
    (root / "journals" / "Day.md").write_text("# Day\n")
    (root / "mine" / "Diary.md").write_text("# Diary\n")
    ok(cli, "vault", "add", "v", str(root), *ROLES)
    return root


def test_roles_are_reported_by_status_and_vault_list(roled: Path, cli: Any) -> None:
    roles = ok(cli, "status")["vaults"][0]["roles"]
    assert roles == {"intake": "inbox", "raw": "raw", "wiki": "wiki", "journal": ["journals"], "user_only": ["mine"]}
    assert ok(cli, "vault", "list")["vaults"][0]["entry"]["roles"] == roles
    text = cli("status").out
    assert "intake=inbox" in text and "user_only=mine" in text and "journal=journals" in text


def test_capture_files_by_role_and_the_raw_copy_is_immutable(roled: Path, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    paper = home.root / "paper.txt"
    paper.write_text("the captured bytes\n")
    applied = ok(cli, "capture", str(paper))
    src = applied["detail"]["sources"][0]
    assert src["note"].startswith("inbox/")
    assert src["raw"] == f"raw/{src['sha256']}.txt"
    assert (roled / src["raw"]).read_text() == "the captured bytes\n"

    typed = typed_clients.open(home)
    before = snapshot(roled)
    with refused(ErrorCode.VALIDATION, IssueCode.V17):
        typed.call(files.WRITE, FileWriteParams(path=src["raw"], content="changed\n"))
    with refused(ErrorCode.VALIDATION, IssueCode.V17):
        typed.call(files.DELETE, FileDeleteParams(target=src["raw"], force=True))
    assert snapshot(roled) == before
    # A new file in the raw folder is a new copy: allowed; and the capture's undo takes its copy back.
    ok(cli, "undo", applied["op_id"])
    assert not (roled / src["raw"]).exists()


async def test_agents_may_not_write_user_only_or_journal_folders(roled: Path, home: Home, typed_clients: TypedClients) -> None:
    agent = typed_clients.open(home, Channel.MCP, client_name="claude-code", session="s1")
    before = snapshot(roled)
    for path in ("mine/New.md", "journals/Entry.md"):
        with refused(ErrorCode.POLICY, IssueCode.P06):
            agent.call(writes.CREATE, CreateParams(path=path, body="# New\n"))
    assert snapshot(roled) == before
    person = typed_clients.open(home)
    person.call(writes.CREATE, CreateParams(path="mine/New.md", body="# New\n"))  # the user may
    assert (roled / "mine" / "New.md").exists()
    agent.call(writes.CREATE, CreateParams(path="wiki/Page.md", body="# Page\n"))  # other folders: as before


def test_without_roles_capture_and_agents_behave_as_before(root: Path, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    ok(cli, "vault", "add", "v", str(root))
    paper = home.root / "paper.txt"
    paper.write_text("bytes\n")
    src = ok(cli, "capture", str(paper))["detail"]["sources"][0]
    assert src["note"].startswith("sources/") and src["raw"] == f"{src['sha256']}.txt"
    agent = typed_clients.open(home, Channel.MCP, client_name="claude-code", session="s1")
    agent.call(writes.CREATE, CreateParams(path="mine/New.md", body="# New\n"))


def test_lint_treats_folders_by_role_and_as_before_without_roles(root: Path, cli: Any) -> None:
    for folder in ("inbox", "raw", "journals", "mine"):
        (root / folder).mkdir()
    (root / "Target.md").write_text("---\naliases: [tgt]\n---\n# Target\n\nLinked from [[Kept]] and [[Old]].\n")
    (root / "raw" / "paper.md").write_text("---\ntitle: [unclosed\n---\n[[Nowhere]]\n")  # a captured source, not a note
    (root / "journals" / "Day.md").write_text("# Day\n\nMet [[tgt]] and [[Missing]].\n")  # the person's
    (root / "mine" / "Diary.md").write_text("---\nbad: [\n---\n# Diary\n")
    (root / "inbox" / "Pending.md").write_text("# Pending\n\nSee [[Gone]].\n")  # pending: its links still checked
    ok(
        cli,
        "vault",
        "add",
        "v",
        str(root),
        "--role",
        "intake=inbox",
        "--role",
        "raw=raw",
        "--role",
        "journal=journals",
        "--role",
        "user_only=mine",
    )

    def findings() -> tuple[dict[str, set[str]], int]:
        lint = json.loads(cli("lint", "--json", "--fresh", "--limit", "1000").out)
        found: dict[str, set[str]] = {}
        for f in lint["findings"]:
            found.setdefault(f["note"].partition("/")[0] if "/" in f["note"] else f["note"], set()).add(f["code"])
        return found, lint["fixable"]

    found, fixable = findings()
    assert not {"raw", "journals", "mine"} & found.keys(), found
    assert found["inbox"] == {"L01"}, found  # the dead link, but no orphan, map or schema finding yet
    assert fixable == 0  # the one alias link a fix would rewrite is in the journal: nothing invites it
    assert json.loads(cli("lint", "--fix", "--json").out)["changes"] == []  # lint --fix rewrites no journal link

    preview = ok(cli, "vault", "set", "v", "--no-roles")
    ok(cli, "vault", "set", "v", "--no-roles", "--confirm", "--fingerprint", preview["fingerprint"])
    found, fixable = findings()
    assert {"L01", "L06"} <= found["raw"], found
    assert "L01" in found["journals"] and "L06" in found["mine"], found
    assert found["inbox"] == {"L01", "L04"}, found  # an orphan once intake is no longer pending
    assert fixable == 1
    assert [c["path"] for c in json.loads(cli("lint", "--fix", "--json").out)["changes"]] == ["journals/Day.md"]
