"""Every path any operation creates is screened like a create's: a property over operations and names.

Hypothesis draws an operation that creates a path from a name the caller gives (a create, a move
or rename, a canvas, a captured file or source note, a promotion into an org vault) and a name
holding a secret token of one of the screen's rules (vaultd/policy/secrets.py), decorated the way
file names are: a copy's suffix (``-2``, `` copy``, ``_old``), a prefix, a folder. A real daemon
runs each, previewed and confirmed as a person would. Whatever it answers, the token lands
nowhere: no file or folder name in either vault, no journal, no log line, no note text.
"""

from __future__ import annotations

import json
import string
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.errors import ErrorCode, ErrorData
from protocol.methods.git import PROMOTE, PromoteParams
from protocol.methods.graph import CANVAS, CanvasParams
from protocol.methods.receipts import Preview
from protocol.methods.sources import CAPTURE, CaptureItem, CaptureParams
from protocol.methods.vaults import VAULT_ADD, Kind, VaultAddParams
from protocol.methods.writes import CREATE, MOVE, CreateParams, MoveParams
from tests.support.harness import Daemon, Home, vaultctl
from tests.support.typed import TypedClient, TypedClients
from vaultctl.client import CallError
from vaultd.policy import check_new_path

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from protocol.methods.common import Params
    from protocol.methods.spec import MethodSpec

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits


def _chars(alphabet: str, n: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=n, max_size=n)


#: (rule, token, the characters the token itself is made of): a decoration next to the token must
#: be none of them, or the token would simply be longer (a 20-character AWS id with one more
#: letter is no AWS id at all).
TOKENS: list[tuple[str, st.SearchStrategy[str], str]] = [
    ("github-token", st.builds(lambda p, b: f"gh{p}_{b}", st.sampled_from("pousr"), _chars(ALNUM, 36)), ALNUM),
    ("github-token", st.builds(lambda b: f"github_pat_{b}", _chars(ALNUM + "_", 30)), ALNUM + "_"),
    ("aws-access-key-id", st.builds(lambda p, b: p + b, st.sampled_from(["AKIA", "ASIA"]), _chars(UPPER, 16)), ALNUM),
    ("gitlab-token", st.builds(lambda b: f"glpat-{b}", _chars(ALNUM, 24)), ALNUM + "_-"),
    ("slack-token", st.builds(lambda k, b: f"xox{k}-{b}", st.sampled_from("abprs"), _chars(ALNUM, 16)), ALNUM + "-"),
    ("stripe-key", st.builds(lambda k, b: f"{k}k_live_{b}", st.sampled_from("sr"), _chars(ALNUM, 24)), ALNUM),
    ("google-api-key", st.builds(lambda b: f"AIza{b}", _chars(ALNUM, 35)), ALNUM + "_-"),
    ("anthropic-key", st.builds(lambda b: f"sk-ant-{b}", _chars(ALNUM, 24)), ALNUM + "_-"),
]

PREFIXES = ["", "old ", "backup-", "copy_", "(", "x.", "2024 "]
SUFFIXES = ["", "-2", " copy", "_old", ".bak", "(1)", "~", " 2"]
FOLDERS = ["", "keys/", "inbox/deep/"]


@st.composite
def secret_names(draw: st.DrawFn) -> tuple[str, str]:
    """(a name holding a token, the token)."""
    _rule, tokens, own = draw(st.sampled_from(TOKENS))
    token = draw(tokens)
    prefix = draw(st.sampled_from([p for p in PREFIXES if not p or p[-1] not in own]))
    suffix = draw(st.sampled_from([s for s in SUFFIXES if not s or s[0] not in own]))
    return f"{draw(st.sampled_from(FOLDERS))}{prefix}{token}{suffix}", token


OPERATIONS = ["create", "move", "move-into-folder", "canvas", "capture-name", "capture-title", "promote"]


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[Path, Path, Home]]:
    """One daemon for the module: 'v' (personal) with a note to move and one linking to it, 'org'."""
    home = Home.create()
    daemon = Daemon(home)
    try:
        vault, org = home.root / "vault", home.root / "org"
        (vault / "inbox").mkdir(parents=True)
        (vault / "Draft.md").write_text("# Draft\n\nA draft.\n")
        (vault / "Index.md").write_text("# Index\n\nSee [[Draft]].\n")
        org.mkdir()
        (org / "Glossary.md").write_text("# Glossary\n")
        with pytest.MonkeyPatch.context() as env:
            clients = TypedClients(env)
            c = clients.open(home, timeout=60.0)
            c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))
            c.call(VAULT_ADD, VaultAddParams(id="org", path=str(org), kind=Kind.ORG))
            clients.close()
        yield vault, org, home
    finally:
        daemon.stop()
        home.cleanup()


@pytest.fixture
def client(running: tuple[Path, Path, Home], typed_clients: TypedClients) -> TypedClient:
    """A connection of this test's own (each test's connections are closed after it)."""
    return typed_clients.open(running[2], timeout=60.0)


def _ensure_draft(client: TypedClient, vault: Path) -> None:
    """The note the moves, canvases and promotions start from (a plain name a move may have taken)."""
    if not (vault / "Draft.md").exists():
        client.call(CREATE, CreateParams(vault="v", path="Draft", body="# Draft\n\nA draft.\n"))


def _request(op: str, name: str) -> tuple[MethodSpec[Any, Any], Params]:
    if op == "create":
        return CREATE, CreateParams(vault="v", path=name, body="# A note\n")
    if op == "move":
        return MOVE, MoveParams(vault="v", target="Draft", to=name)
    if op == "move-into-folder":
        return MOVE, MoveParams(vault="v", target="Draft", to=name + "/")
    if op == "canvas":
        return CANVAS, CanvasParams(vault="v", target="Draft", path=name + ".canvas")
    if op == "capture-name":
        return CAPTURE, CaptureParams(vault="v", items=[CaptureItem(text="Captured words.\n", name=name.rpartition("/")[2] + ".txt")])
    if op == "capture-title":
        return CAPTURE, CaptureParams(vault="v", items=[CaptureItem(text="Captured words.\n", name="words.txt", title=name)])
    assert op == "promote"
    return PROMOTE, PromoteParams(vault="v", target="Draft", to="org", path=name, again=True)


def _run(c: TypedClient, spec: MethodSpec[Any, Any], params: Params) -> object:
    """As a person runs it: previewed, then confirmed with the preview's fingerprint. The last
    receipt, or the error's data of a refusal."""
    try:
        receipt = c.call(spec, params)
        if isinstance(receipt, Preview):
            receipt = c.call(spec, msgspec.structs.replace(params, confirm=True, fingerprint=receipt.fingerprint))
    except CallError as exc:
        return exc.data
    return receipt


def _everything(folder: Path) -> Iterator[tuple[str, bytes]]:
    """Every name below ``folder`` (journals included), with each file's bytes."""
    for p in folder.rglob("*"):
        rel = p.relative_to(folder).as_posix()
        yield rel, p.read_bytes() if p.is_file() and not p.is_symlink() else b""


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(op=st.sampled_from(OPERATIONS), drawn=secret_names())
def test_no_operation_lands_a_secret_shaped_path(
    running: tuple[Path, Path, Home], client: TypedClient, op: str, drawn: tuple[str, str]
) -> None:
    vault, org, _ = running
    _ensure_draft(client, vault)
    name, token = drawn
    reply = _run(client, *_request(op, name))
    if isinstance(reply, ErrorData):
        assert reply.code in (ErrorCode.VALIDATION, ErrorCode.INVALID_PARAMS), reply
        # the error's data is the whole error: its message and code are derived from it
        assert token not in msgspec.json.encode(reply).decode(), "a refusal never echoes the secret"
    for root in (vault, org):
        for rel, data in _everything(root):
            assert token not in rel, f"{op}: a created name holds the token ({reply})"
            assert token.encode() not in data, f"{op}: {rel} holds the token ({reply})"


HOSTILE_PARTS = ["..", ".", "", ".vaultd", ".git", ".obsidian", ".trash", "a\x01b", "a\\b", "tab\t", "dot.", "space ", "x" * 300]
PLAIN_PARTS = ["notes", "Draft", "keep"]


@st.composite
def hostile_names(draw: st.DrawFn) -> str:
    """A relative name with at least one component no write may create (or a leading '/')."""
    parts = draw(st.lists(st.sampled_from(PLAIN_PARTS), max_size=2))
    parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(HOSTILE_PARTS)))
    return draw(st.sampled_from(["", "/"])) + "/".join(parts)


def _names(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _created_ok(rel: str) -> bool:
    """Whether a created path passes the write rules (vaultd's own folders and the log aside)."""
    if rel.split("/")[0] in (".vaultd", ".obsidian") or rel == "log.md":
        return True
    return all(not check_new_path(prefix, note=False) for prefix in _prefixes(rel.removeprefix(".trash/")) if prefix != ".trash")


def _prefixes(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(op=st.sampled_from(OPERATIONS), name=hostile_names())
def test_no_operation_lands_a_hostile_path(running: tuple[Path, Path, Home], client: TypedClient, op: str, name: str) -> None:
    vault, org, home = running
    _ensure_draft(client, vault)
    beside = sorted(p.name for p in home.root.iterdir())  # the vaults' parent: where a "../" would land
    reply = _run(client, *_request(op, name))
    if isinstance(reply, ErrorData):
        assert reply.code in (ErrorCode.VALIDATION, ErrorCode.INVALID_PARAMS, ErrorCode.POLICY, ErrorCode.NOT_FOUND), reply
    for root in (vault, org):
        bad = sorted(rel for rel in _names(root) if not _created_ok(rel))
        assert not bad, f"{op} {name!r} created {bad} ({reply})"
        journal = root / ".vaultd" / "journal"
        for manifest in journal.glob("*/manifest.json") if journal.is_dir() else []:
            for entry in json.loads(manifest.read_text())["entries"]:
                if entry["before_sha"] is None:
                    assert _created_ok(entry["path"]), f"{op} {name!r} journaled {entry['path']!r}"
    assert sorted(p.name for p in home.root.iterdir()) == beside, "nothing is written beside the vaults"


@pytest.mark.parametrize("name", ["x" * 256, "notes/" + "y" * 300, "é" * 200])
@pytest.mark.parametrize("op", OPERATIONS)
def test_a_name_over_the_component_bound_is_refused_for_every_operation(
    running: tuple[Path, Path, Home], client: TypedClient, op: str, name: str
) -> None:
    """A name the filesystem cannot hold is refused by the path rules, never asked of the disk (a
    capture makes its own bounded file names from it, and may apply)."""
    vault, org, _ = running
    _ensure_draft(client, vault)
    before = (_names(vault), _names(org))
    reply = _run(client, *_request(op, name))
    if op.startswith("capture") and not isinstance(reply, ErrorData):
        assert all(_created_ok(rel) for rel in _names(vault)), reply
        return
    assert isinstance(reply, ErrorData), reply
    assert reply.code in (ErrorCode.VALIDATION, ErrorCode.INVALID_PARAMS), reply
    assert (_names(vault), _names(org)) == before


GITHUB = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


@pytest.mark.parametrize("name", [f"keys/{GITHUB}-2", f"keys/old_{GITHUB}", f"keys/{GITHUB}_old", f"keys/backup-{GITHUB} copy"])
@pytest.mark.parametrize("command", ["new", "move"])
def test_vaultctl_refuses_a_token_in_a_copys_name_for_a_move_as_for_a_create(
    running: tuple[Path, Path, Home], client: TypedClient, command: str, name: str
) -> None:
    """The names a copy or a rename gives (``-2``, ``_old``) keep the token a name screen must see."""
    vault, _, home = running
    _ensure_draft(client, vault)
    args = ("new", name) if command == "new" else ("move", "Draft", name)
    result = vaultctl(home, *args, "--json")
    assert result.code == 1, (result.code, result.out, result.err)
    assert "V06" in result.err, (result.code, result.out, result.err)
    assert GITHUB not in result.out + result.err
    assert not [p for p in vault.rglob("*") if GITHUB in p.as_posix()]
