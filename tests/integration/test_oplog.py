"""The operation log is vaultd's own file: it never adopts a user's note, stays out of the reads
about the user's notes, and survives an editor stripping its last newline."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Empty
from protocol.methods.lint import LINT, LintCode, LintParams
from protocol.methods.reads import (
    ISSUES,
    LINKS,
    LIST,
    READ,
    SEARCH,
    STATS,
    TAGS,
    IssuesParams,
    LinksParams,
    LinkStatus,
    ListParams,
    ReadParams,
    SearchParams,
    StatsParams,
    TagsParams,
)
from protocol.methods.receipts import Applied
from protocol.methods.vaults import VAULT_ADD, VAULT_LIST, Kind, VaultAddParams
from protocol.methods.writes import (
    CREATE,
    LOG_APPEND,
    LOG_GREP,
    LOG_TAIL,
    CreateParams,
    LogAppendParams,
    LogEvent,
    LogGrepParams,
    LogTailParams,
    LogType,
)
from tests.support.harness import Home, vaultctl
from tests.support.typed import TypedClient, refused

if TYPE_CHECKING:
    from pathlib import Path

HEADER = "# vaultd operation log\n"
DIARY = "# Log\n\n2024-03-01: walked the dog\n2024-03-02: read about otters\n"
EVENT = "2024-03-01 09:00  EXTRACT  -  vaultd:note.create → a.md  —  create a.md (20240301T090000-0a0b0c0d)\n"


def _vault(home: Home, files: dict[str, str]) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_users_log_md_is_refused_at_add_with_the_command_that_sets_a_path(home: Home, daemon, cli) -> None:  # type: ignore[no-untyped-def]
    root = _vault(home, {"log.md": DIARY, "a.md": "# A\n"})
    refused = cli("vault", "add", "v", str(root))
    assert refused.code == 1
    assert "log.md is not a vaultd log" in refused.err, refused.err
    assert "--log-path" in refused.err, refused.err
    assert cli("vault", "list", "--json").json()["vaults"] == []
    added = cli("vault", "add", "v", str(root), "--log-path", "meta/vaultd-log.md", "--json")
    assert added.code == 0, added.err
    assert added.json()["entry"]["log_path"] == "meta/vaultd-log.md"
    made = cli("new", "inbox/otter facts", "--body", "-", "--json", input="Otters hold hands.\n")
    assert made.code == 0, made.err
    assert made.json()["log"]["appended"]
    assert (root / "log.md").read_text() == DIARY, "the user's note is never written"
    log = (root / "meta" / "vaultd-log.md").read_text()
    assert log.startswith(HEADER)
    assert log.splitlines()[1] == made.json()["log"]["line"]
    tail = cli("log", "tail", "--json").json()
    assert tail["lines"] == [made.json()["log"]["line"]]
    hits = [h["path"] for h in cli("search", "otters", "--json").json()["hits"]]
    assert "log.md" in hits, "the diary is still one of the user's notes"


@pytest.mark.parametrize("bad", ["../outside.md", "/abs/log.md", ".vaultd/log.md", ".git/log.md", "log.txt", "a//log.md", "a/./log.md"])
def test_unsafe_log_paths_are_refused(home: Home, typed: TypedClient, bad: str) -> None:
    root = _vault(home, {"a.md": "# A\n"})
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), log_path=bad))
    assert typed.call(VAULT_LIST, Empty()).vaults == []


def _created_line(receipt: object) -> str:
    """The log line an applied write appended."""
    assert isinstance(receipt, Applied), receipt
    assert receipt.log.appended, receipt.log
    assert receipt.log.line is not None
    return receipt.log.line


def test_the_default_log_gets_a_header_and_stays_out_of_search_stats_and_issues(home: Home, typed: TypedClient) -> None:
    root = _vault(home, {"a.md": "# A\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    r = typed.call(CREATE, CreateParams(path="zebra crossing", body="Stripes.\n"))
    hits = typed.call(SEARCH, SearchParams(query="zebra", fresh=True)).hits
    assert [h.path for h in hits] == ["zebra crossing.md"]  # the log line names it too
    assert typed.call(STATS, StatsParams(fresh=True)).notes == 2
    log = (root / "log.md").read_text()
    assert log == HEADER + _created_line(r) + "\n"


def test_a_log_from_before_the_header_is_still_vaultds_and_a_large_one_is_no_issue(home: Home, typed: TypedClient) -> None:
    big = EVENT * (2 * 1024 * 1024 // len(EVENT.encode()) + 10)  # past the 2 MiB a note may have
    root = _vault(home, {"a.md": "# A\n", "log.md": big})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    assert typed.call(ISSUES, IssuesParams()).issues == []
    stats = typed.call(STATS, StatsParams())
    assert stats.skipped == 0
    assert stats.issues == 0
    assert stats.notes == 1
    r = typed.call(CREATE, CreateParams(path="b", body="b\n"))
    assert (root / "log.md").read_text() == big + _created_line(r) + "\n"


def test_a_log_past_the_note_bound_stays_indexed_and_is_never_read_in_part(home: Home, typed: TypedClient) -> None:
    """About 14,000 writes take the log past the 2 MiB a note may be: it stays a link target, and
    a read of it is refused whole, never a first part with a wrong size and sha."""
    root = _vault(home, {"a.md": "# A\n\nsee [[log]]\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    typed.call(CREATE, CreateParams(path="b", body="b\n"))
    line = (root / "log.md").read_text().splitlines()[1] + "\n"
    with (root / "log.md").open("a") as fh:  # the history of a busy vault
        fh.write(line * (2 * 1024 * 1024 // len(line.encode()) + 10))
    last = _created_line(typed.call(CREATE, CreateParams(path="c", body="c\n")))
    size = (root / "log.md").stat().st_size
    assert size > 2 * 1024 * 1024
    out = typed.call(LINKS, LinksParams(target="a", fresh=True)).out
    assert [(o.status, o.resolved) for o in out] == [(LinkStatus.RESOLVED, "log.md")], out
    assert typed.call(LINT, LintParams(code=LintCode.L01)).findings == [], "[[log]] is no dead link"
    assert typed.call(ISSUES, IssuesParams()).issues == []
    listed = {n.path: n.size for n in typed.call(LIST, ListParams()).notes}
    on_disk = {p: (root / p).stat().st_size for p in ("a.md", "b.md", "c.md")}
    assert listed == on_disk, "vaultd's log is no note of the user's: list leaves it out, as search, tags and stats do"
    with refused(ErrorCode.LIMIT) as refusal:
        typed.call(READ, ReadParams(target="log"))
    assert f"({size} bytes)" in refusal.data.message, refusal.data
    assert "log.tail" in refusal.data.message, refusal.data
    assert typed.call(LOG_TAIL, LogTailParams(limit=1)).lines == [last.rstrip("\n")]


def test_a_log_from_before_the_header_gives_no_tags(home: Home, typed: TypedClient) -> None:
    """Such a log is parsed as a note, so its lines' #tags are in the index; vault.tags, like
    search and stats, leaves vaultd's log out."""
    root = _vault(home, {"a.md": "# A\n\n#otters\n", "log.md": EVENT.replace("create a.md", "create a.md #idea") * 3})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    assert typed.call(READ, ReadParams(target="log")).body.count("#idea") == 3, "the log is there, with its tags"
    assert [t.tag for t in typed.call(TAGS, TagsParams()).tags] == ["otters"]


def test_a_log_without_its_final_newline_gets_a_new_line_and_the_write_succeeds(home: Home, typed: TypedClient) -> None:
    root = _vault(home, {"a.md": "# A\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    first = _created_line(typed.call(CREATE, CreateParams(path="one", body="1\n")))
    log = root / "log.md"
    log.write_bytes(log.read_bytes().rstrip(b"\n"))  # as an editor that strips the final newline
    done = vaultctl(home, "new", "two", "--body", "-", "--json", input="2\n")
    assert done.code == 0, done.err
    second = done.json()["log"]
    assert second["appended"]
    assert log.read_text() == HEADER + first + "\n" + second["line"] + "\n"
    assert typed.call(LOG_TAIL, LogTailParams()).lines == [first, second["line"]]


def test_a_note_put_at_the_log_path_later_is_never_appended_to(home: Home, typed: TypedClient) -> None:
    root = _vault(home, {"a.md": "# A\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    (root / "log.md").write_text(DIARY)  # the user's own, after registration
    r = typed.call(CREATE, CreateParams(path="b", body="b\n"))
    assert isinstance(r, Applied)
    assert not r.log.appended
    assert r.log.error is not None
    assert "not a vaultd log" in r.log.error
    assert (root / "log.md").read_text() == DIARY
    tail = typed.call(LOG_TAIL, LogTailParams())
    assert tail.lines == []
    assert "not a vaultd log" in tail.warnings[0]


@pytest.mark.parametrize("log_path", [None, "meta/vaultd-log.md"])
def test_the_log_is_indexed_by_its_header_alone(home: Home, typed: TypedClient, log_path: str | None) -> None:
    """Every write appends to the log, so the index never parses its lines: they would add a
    backlink from the log to every note a line names (and re-read the whole history per write)."""
    root = _vault(home, {"b.md": "# B\n", "index.md": f"# Index\n\n[[{(log_path or 'log.md')[:-3]}]]\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), log_path=log_path))
    event = LogEvent(type=LogType.TASK, source="user", note="asked about [[b]] and #otters")
    assert typed.call(LOG_APPEND, LogAppendParams(event=event)).appended
    _created_line(typed.call(CREATE, CreateParams(path="c", body="see [[b]]\n", log=event)))
    rel = log_path or "log.md"
    assert "[[b]]" in (root / rel).read_text(), "the lines are on disk"
    incoming = typed.call(LINKS, LinksParams(target="b", fresh=True)).incoming
    assert [i.path for i in incoming] == ["c.md"], "no backlink from the log's lines"
    with refused(ErrorCode.NOT_FOUND):  # not a note to ask links of, as search, list, tags and stats leave it out
        typed.call(LINKS, LinksParams(target=rel))
    to_log = typed.call(LINKS, LinksParams(target="index")).out
    assert [(o.status, o.resolved) for o in to_log] == [(LinkStatus.RESOLVED, rel)], "still a link target"
    assert typed.call(READ, ReadParams(target=rel)).body.startswith(HEADER + "20"), "and read whole"
    assert any("#otters" in ln for ln in typed.call(LOG_GREP, LogGrepParams(pattern="otters")).lines)


def test_a_users_note_that_only_looks_like_the_log_is_parsed_as_a_note(home: Home, typed: TypedClient) -> None:
    root = _vault(home, {"notes/copied.md": "# vaultd operation logs\n\nabout [[b]]\n", "b.md": "# B\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    incoming = typed.call(LINKS, LinksParams(target="b")).incoming
    assert [i.path for i in incoming] == ["notes/copied.md"]


@pytest.mark.parametrize(
    ("kind", "note", "code"),
    [
        (Kind.PERSONAL, "token ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", IssueCode.V06),
        (Kind.ORG, "write to ada@example.org", IssueCode.V07),
    ],
)
def test_log_append_screens_its_line_with_the_screen_every_operation_s_log_line_passes(
    home: Home, typed: TypedClient, kind: Kind, note: str, code: IssueCode
) -> None:
    """One screen for every line a caller shapes: log.append's refusal reads as an operation's
    refusal of the same log event, names the log file, and writes nothing."""
    root = _vault(home, {"a.md": "# A\n"})
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), kind=kind, log_path="meta/vaultd-log.md"))
    event = LogEvent(type=LogType.TASK, source="test:suite", note=note)
    with refused(ErrorCode.VALIDATION, code) as appended:
        typed.call(LOG_APPEND, LogAppendParams(event=event))
    with refused(ErrorCode.VALIDATION, code) as through_an_operation:
        typed.call(CREATE, CreateParams(path="b", body="b\n", log=event))
    assert appended.data.message.startswith("refused: the log event: "), appended.data.message
    assert appended.data.message == through_an_operation.data.message
    assert [i.code for i in appended.data.issues] == [code]
    assert [i.path for i in appended.data.issues] == ["meta/vaultd-log.md"]
    assert appended.data.issues == through_an_operation.data.issues
    assert not (root / "meta").exists(), "a refused line writes nothing"
    assert not (root / "b.md").exists(), "a refused operation writes nothing"
