"""link, supersede, move, delete and merge through a real daemon and the real CLI: happy paths,
refusals, previews and their fingerprints, link rewriting in the sample vault, and undo."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.reads import LINKS, LIST, READ, STATS, LinksParams, LinkStatus, ListParams, ReadParams, StatsParams
from protocol.methods.receipts import Applied, DeleteDetail, Preview, Unchanged
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import (
    APPEND,
    CREATE,
    DELETE,
    LINK,
    MERGE,
    MOVE,
    SUPERSEDE,
    UNDO,
    AppendParams,
    CreateParams,
    DeleteParams,
    LinkParams,
    MergeParams,
    MoveParams,
    Relation,
    SupersedeParams,
    UndoParams,
)
from tests.support.harness import snapshot
from tests.support.typed import TypedClient, refused, two_step
from vaultctl.client import CallError

if TYPE_CHECKING:
    from pathlib import Path


ALPHA = "projects/alpha/Alpha Plan.md"


@pytest.fixture
def vault(typed: TypedClient, sample_vault: Path) -> Path:
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    return sample_vault


def _without_log(snap: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in snap.items() if k != "log.md"}


def _log_line(receipt: Applied[Any]) -> str:
    assert receipt.log.line is not None, receipt.log
    return receipt.log.line


def _link_state(typed: TypedClient) -> dict[str, list[tuple[str, LinkStatus, str | None]]]:
    """Every note's outgoing links as (target as written, status, resolved path)."""
    notes = [n for n in typed.call(LIST, ListParams(limit=500)).notes if n.path != "log.md"]
    return {n.path: [(o.target, o.status, o.resolved) for o in typed.call(LINKS, LinksParams(target=n.path, limit=500)).out] for n in notes}


# -- note.link ------------------------------------------------------------------------------------


def test_link_both_ways_once_with_relation(vault: Path, typed: TypedClient) -> None:
    typed.call(CREATE, CreateParams(path="t/Topical", body="# Topical\n\nText.\n\n## Topics\n\n- [[Alpha Plan]]\n"))
    r = typed.call(LINK, LinkParams(source="Topical", target="Zettelkasten", relation=Relation.SUPPORTS))
    assert isinstance(r, Applied)
    assert {c.path for c in r.changes} == {"t/Topical.md", "concepts/Zettelkasten.md"}
    topical = (vault / "t" / "Topical.md").read_text()
    assert "## Relevant Notes\n\n- [[Zettelkasten]] — supports\n\n## Topics" in topical
    zettel = (vault / "concepts" / "Zettelkasten.md").read_text()
    assert zettel.endswith("## Relevant Notes\n\n- [[Topical]]\n")
    assert "\nupdated: " not in zettel[:10]
    assert "CONNECT" in _log_line(r)
    again = typed.call(LINK, LinkParams(source="Topical", target="Zettelkasten", relation=Relation.SUPPORTS))
    assert isinstance(again, Unchanged)
    # an existing link in any form counts: Ada already links [[Alpha Plan]], Alpha Plan links [[Ada Lovelace]]
    before = snapshot(vault)
    assert isinstance(typed.call(LINK, LinkParams(source="Ada Lovelace", target="Alpha Plan")), Unchanged)
    assert snapshot(vault) == before
    one_way = typed.call(LINK, LinkParams(source="Zettelkasten", target="projects/beta/Meeting Notes.md", bidirectional=False))
    assert [c.path for c in one_way.changes] == ["concepts/Zettelkasten.md"]
    assert "- [[projects/beta/Meeting Notes]]\n" in (vault / "concepts" / "Zettelkasten.md").read_text()
    with refused(ErrorCode.VALIDATION):
        typed.call(LINK, LinkParams(source="Ideas", target="inbox/Ideas.md"))
    with refused(ErrorCode.INVALID_PARAMS):  # a relation outside the enum: the params Struct cannot hold it
        typed.call_with(LINK, {"source": "Ideas", "target": "Ada", "relation": "likes"})
    with refused(ErrorCode.NOT_FOUND):
        typed.call(LINK, LinkParams(source="Ideas", target="No Such Note"))
    with refused(ErrorCode.AMBIGUOUS):
        typed.call(LINK, LinkParams(source="Ideas", target="Meeting Notes"))


# -- note.supersede -------------------------------------------------------------------------------


def test_supersede_marks_old_and_links_back(vault: Path, typed: TypedClient) -> None:
    typed.call(CREATE, CreateParams(path="s/Old Finding", frontmatter={"type": "insight", "status": "active"}, body="# Old Finding\n"))
    typed.call(CREATE, CreateParams(path="s/New Finding", frontmatter={"type": "insight"}, body="# New Finding\n"))
    old_before = (vault / "s" / "Old Finding.md").read_text()
    r = typed.call(SUPERSEDE, SupersedeParams(old="Old Finding", new="New Finding"))
    assert isinstance(r, Applied)
    assert "RETHINK" in _log_line(r)
    old = (vault / "s" / "Old Finding.md").read_text()
    assert "status: superseded\n" in old
    assert 'superseded_by: "[[New Finding]]"\n' in old
    assert old.replace("status: superseded", "status: active").replace('superseded_by: "[[New Finding]]"\n', "") == old_before
    assert "## Relevant Notes\n\n- [[Old Finding]] — supersedes\n" in (vault / "s" / "New Finding.md").read_text()
    assert isinstance(typed.call(SUPERSEDE, SupersedeParams(old="Old Finding", new="New Finding")), Unchanged)
    with refused(ErrorCode.VALIDATION, IssueCode.V10):
        typed.call(SUPERSEDE, SupersedeParams(old="New Finding", new="Old Finding"))
    with refused(ErrorCode.VALIDATION):
        typed.call(SUPERSEDE, SupersedeParams(old="Ideas", new="inbox/Ideas"))


# -- note.move ------------------------------------------------------------------------------------


def _expected_after_alpha_move(text: str) -> str:
    return (
        text.replace("[[Alpha Plan.md]]", "[[Alpha Roadmap.md]]")  # the link keeps its ".md"
        .replace("[[Alpha Plan", "[[Alpha Roadmap")
        .replace("../projects/alpha/Alpha%20Plan.md", "../archive/Alpha%20Roadmap.md")
    )


def test_move_rewrites_every_link_form_and_nothing_else(vault: Path, typed: TypedClient) -> None:
    code = "Real [[Alpha Plan]], code `[[Alpha Plan]]`,\n\n```\n[[Alpha Plan]]\n```\n%% [[Alpha Plan]] %%\n"
    typed.call(CREATE, CreateParams(path="t/code", body=code))
    incoming = typed.call(LINKS, LinksParams(target=ALPHA)).incoming
    links_before = _link_state(typed)
    before = snapshot(vault)
    preview = typed.call(MOVE, MoveParams(target="Alpha Plan", to="archive/Alpha Roadmap"))
    assert snapshot(vault) == before
    rewritten = {
        "README.md",
        "concepts/Link Syntax.md",
        "concepts/Zettelkasten.md",
        "daily/2024-05-01.md",
        "people/Ada Lovelace.md",
        "people/Grace Hopper.md",
        "projects/alpha/Meeting Notes.md",
        "projects/beta/Beta Overview.md",
        "projects/해외사업단 킥오프.md",
        "t/code.md",
    }
    assert set(preview.detail.rewritten) == rewritten
    assert {c.path for c in preview.changes} == rewritten | {ALPHA, "archive/Alpha Roadmap.md"}
    _, done = two_step(typed, MOVE, MoveParams(target="Alpha Plan", to="archive/Alpha Roadmap"))
    assert "ROUTE" in _log_line(done)
    after = snapshot(vault)
    assert after.pop("archive/Alpha Roadmap.md") == before.pop(ALPHA)  # its own links needed nothing
    expected = {k: _expected_after_alpha_move(v.decode()).encode() if k.endswith(".md") else v for k, v in _without_log(before).items()}
    expected["t/code.md"] = before["t/code.md"].replace(b"Real [[Alpha Plan]]", b"Real [[Alpha Roadmap]]")
    assert _without_log(after) == expected
    assert (vault / "t" / "code.md").read_text().count("[[Alpha Plan]]") == 3  # code and comments untouched
    moved_in = typed.call(LINKS, LinksParams(target="archive/Alpha Roadmap.md")).incoming
    assert len(moved_in) == len(incoming)
    links_after = _link_state(typed)
    links_before["archive/Alpha Roadmap.md"] = links_before.pop(ALPHA)
    for path, outs in links_after.items():
        assert [(s, p) for _, s, p in outs] == [(s, "archive/Alpha Roadmap.md" if p == ALPHA else p) for _, s, p in links_before[path]], (
            path
        )


def test_move_to_a_shared_name_gives_links_a_path(vault: Path, typed: TypedClient) -> None:
    links_before = _link_state(typed)
    stats = typed.call(STATS, StatsParams())
    two_step(typed, MOVE, MoveParams(target="inbox/Ideas.md", to="archive/Alpha Plan"))
    readme = (vault / "README.md").read_text()
    assert "- [[projects/alpha/Alpha Plan]]: what project Alpha" in readme
    assert "- [[archive/Alpha Plan]] is the inbox." in readme
    assert "[[projects/alpha/Alpha Plan#Goals\\|goals]]" in (vault / "projects/beta/Beta Overview.md").read_text()
    links_after = _link_state(typed)
    links_before["archive/Alpha Plan.md"] = links_before.pop("inbox/Ideas.md")
    for path, outs in links_after.items():
        assert [(s, p) for _, s, p in outs] == [
            (s, "archive/Alpha Plan.md" if p == "inbox/Ideas.md" else p) for _, s, p in links_before[path]
        ], path
    again = typed.call(STATS, StatsParams())
    assert (again.dead_links, again.ambiguous_links) == (stats.dead_links, stats.ambiguous_links)


def test_moved_note_keeps_relative_links_and_undo_restores(vault: Path, typed: TypedClient) -> None:
    before = snapshot(vault)
    _, done = two_step(typed, MOVE, MoveParams(target="Zettelkasten", to="deep/er/Zettelkasten.md"))
    moved = (vault / "deep" / "er" / "Zettelkasten.md").read_text()
    assert "[Alpha plan](../../projects/alpha/Alpha%20Plan.md)" in moved
    assert "[Grace's page](<../../people/Grace Hopper.md>)" in moved
    assert "[same note](#Small%20notes)" in moved
    assert not typed.call(LINKS, LinksParams(target="deep/er/Zettelkasten.md")).dead
    assert (vault / "README.md").read_bytes() == before["README.md"]  # [[Zettelkasten]] still resolves
    typed.call(UNDO, UndoParams(op_id=done.op_id))
    assert _without_log(snapshot(vault)) == _without_log(before)


def test_move_rewrites_frontmatter_links_and_keeps_old_problems_as_warnings(vault: Path, typed: TypedClient) -> None:
    plan = vault / "projects" / "alpha" / "Alpha Plan.md"
    before = plan.read_text()
    two_step(typed, MOVE, MoveParams(target="README", to="Home Page"))
    assert plan.read_text() == before.replace('up: "[[README]]"', 'up: "[[Home Page]]"')
    # Grace's note has a dead [[Ada]]: the move neither refuses nor reports it (it was dead before,
    # and the move did not break it); deleting it then undoing that only warn about it
    preview, done = two_step(typed, MOVE, MoveParams(target="Grace Hopper", to="team/"))
    assert done.changes[0].path == "team/Grace Hopper.md"
    assert "[[Ada]]" in (vault / "team" / "Grace Hopper.md").read_text()
    assert not any(w.code == IssueCode.V03 for w in preview.warnings + done.warnings), done.warnings
    grace = (vault / "team" / "Grace Hopper.md").read_bytes()
    _, deleted = two_step(typed, DELETE, DeleteParams(target="Grace Hopper", leave_broken_links=True))
    assert any(w.code == IssueCode.V03 for w in deleted.warnings)  # the links it breaks, reported
    typed.call(UNDO, UndoParams(op_id=deleted.op_id))
    assert (vault / "team" / "Grace Hopper.md").read_bytes() == grace
    # a secret a note already holds does not block moving it (it is not new text) ...
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (vault / "inbox" / "leaky.md").write_text(f"old token {token}\n")
    typed.call(STATS, StatsParams(fresh=True))
    two_step(typed, MOVE, MoveParams(target="inbox/leaky.md", to="archive/leaky"))
    assert (vault / "archive" / "leaky.md").read_text() == f"old token {token}\n"
    # ... but a merge that copies it into another note does
    typed.call(CREATE, CreateParams(path="archive/clean", body="# Clean\n"))
    with refused(ErrorCode.VALIDATION, IssueCode.V06):
        typed.call(MERGE, MergeParams(keep="archive/clean", absorb="archive/leaky"))


def test_move_preview_goes_stale_and_refusals(vault: Path, typed: TypedClient) -> None:
    params = MoveParams(target="Ada Lovelace", to="team/Ada")
    preview = typed.call(MOVE, params)
    assert isinstance(preview, Preview)
    readme = vault / "README.md"
    readme.write_text(readme.read_text() + "\nedited by hand\n")
    typed.call(STATS, StatsParams(fresh=True))
    with refused(ErrorCode.STALE_PREVIEW):
        typed.call(MOVE, msgspec.structs.replace(params, confirm=True, fingerprint=preview.fingerprint))
    preview = typed.call(MOVE, params)
    assert isinstance(preview, Preview)
    typed.call(CREATE, CreateParams(path="t/new inbound", body="see [[Ada Lovelace]]\n"))  # a new backlink
    with refused(ErrorCode.STALE_PREVIEW):
        typed.call(MOVE, msgspec.structs.replace(params, confirm=True, fingerprint=preview.fingerprint))
    assert (vault / "people" / "Ada Lovelace.md").exists()
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(MOVE, msgspec.structs.replace(params, confirm=True))
    with refused(ErrorCode.VALIDATION, IssueCode.V08):
        typed.call(MOVE, MoveParams(target="Ada Lovelace", to="people/Grace Hopper"))
    with refused(ErrorCode.VALIDATION):
        typed.call(MOVE, MoveParams(target="Ada Lovelace", to="people/Ada Lovelace"))
    for bad in ("team/Ada #1", "team/Ada|x", ".obsidian/Ada", "../outside/Ada", "team/Ada /x"):
        with refused(ErrorCode.VALIDATION, IssueCode.V04):
            typed.call(MOVE, MoveParams(target="Ada Lovelace", to=bad))


# -- note.delete ----------------------------------------------------------------------------------


def test_delete_to_trash_refuses_broken_links_and_undo_restores(vault: Path, typed: TypedClient) -> None:
    before = snapshot(vault)
    with refused(ErrorCode.VALIDATION, IssueCode.V03) as refusal:
        typed.call(DELETE, DeleteParams(target="Ideas"))
    assert refusal.data.issues[0].path == "README.md"
    params = DeleteParams(target="Ideas", leave_broken_links=True)
    preview, done = two_step(typed, DELETE, params)
    assert preview.detail == DeleteDetail(trash=".trash/inbox/Ideas.md", backlinks=["README.md:36"])
    assert (vault / ".trash" / "inbox" / "Ideas.md").read_bytes() == before["inbox/Ideas.md"]
    assert not (vault / "inbox" / "Ideas.md").exists()
    assert "RETHINK" in _log_line(done)
    with refused(ErrorCode.NOT_FOUND):
        typed.call(READ, ReadParams(target="Ideas"))
    assert any(d.target == "Ideas" for d in typed.call(LINKS, LinksParams(target="README.md")).dead)
    typed.call(UNDO, UndoParams(op_id=done.op_id))
    assert _without_log(snapshot(vault)) == _without_log(before)
    assert typed.call(READ, ReadParams(target="Ideas")).path == "inbox/Ideas.md"
    # a taken trash place gets a numeric suffix
    two_step(typed, DELETE, params)
    typed.call(CREATE, CreateParams(path="inbox/Ideas", body="second\n"))
    preview, _ = two_step(typed, DELETE, params)
    assert preview.detail.trash == ".trash/inbox/Ideas 1.md"
    assert (vault / ".trash" / "inbox" / "Ideas 1.md").read_text().endswith("second\n")


# -- note.merge -----------------------------------------------------------------------------------

KEEP_BODY = "# Keep\n\nKeep prose.\n\n## Topics\n\n- [[Alpha Plan]]\n"
ABSORB_BODY = (
    "# Absorb\n\nAbsorb prose.\n\n## Detail\n\nText. ^blk\n\n```\n# not a heading\n```\n\n"
    "###### Deepest\n\n## Topics\n\n- [[Zettelkasten]]\n- [[Alpha Plan]]\n"
)
MERGED_BODY = (
    "# Keep\n\nKeep prose.\n\n## Merged from [[Absorb]]\n\nAbsorb prose.\n\n### Detail\n\nText. ^blk\n\n"
    "```\n# not a heading\n```\n\n###### Deepest\n\n## Topics\n\n- [[Alpha Plan]]\n- [[Zettelkasten]]\n"
)


def test_merge_folds_content_repoints_links_and_marks_absorb(vault: Path, typed: TypedClient) -> None:
    typed.call(
        CREATE,
        CreateParams(
            path="m/Keep", body=KEEP_BODY, frontmatter={"type": "insight", "topics": ["[[Alpha Plan]]"], "source": "https://a.example"}
        ),
    )
    typed.call(
        CREATE,
        CreateParams(
            path="m/Absorb",
            body=ABSORB_BODY,
            frontmatter={"type": "insight", "topics": ["[[Alpha Plan]]", "[[Zettelkasten]]"], "source": ["https://b.example"]},
        ),
    )
    typed.call(CREATE, CreateParams(path="m/Ref", body="See [[Absorb#Detail|detail]], [[Absorb#^blk]], [a](Absorb.md).\n"))
    preview, done = two_step(typed, MERGE, MergeParams(keep="Keep", absorb="Absorb"))
    assert preview.detail.body == MERGED_BODY
    assert preview.detail.unions["source"] == ["https://a.example", "https://b.example"]
    keep = (vault / "m" / "Keep.md").read_text()
    assert keep.endswith("---\n" + MERGED_BODY)
    assert (
        "topics:\n  - '[[Alpha Plan]]'\n  - '[[Zettelkasten]]'\n" in keep
        or 'topics:\n  - "[[Alpha Plan]]"\n  - "[[Zettelkasten]]"\n' in keep
    )
    absorb = (vault / "m" / "Absorb.md").read_text()
    assert "status: superseded\n" in absorb
    assert 'superseded_by: "[[Keep]]"\n' in absorb
    assert absorb.endswith("---\n" + ABSORB_BODY)  # the absorb file stays, its body untouched
    assert (vault / "m" / "Ref.md").read_text().endswith("See [[Keep#Detail|detail]], [[Keep#^blk]], [a](Keep.md).\n")
    assert not typed.call(LINKS, LinksParams(target="m/Ref.md")).dead
    assert "RETHINK" in _log_line(done)
    with refused(ErrorCode.VALIDATION, IssueCode.V10):
        typed.call(MERGE, MergeParams(keep="Keep", absorb="Absorb"))


def test_merge_refusals(vault: Path, typed: TypedClient) -> None:
    with refused(ErrorCode.VALIDATION):
        typed.call(MERGE, MergeParams(keep="Ideas", absorb="inbox/Ideas"))
    with refused(ErrorCode.VALIDATION, IssueCode.V01):
        typed.call(MERGE, MergeParams(keep="Alpha Plan", absorb="Ideas"))
    with refused(ErrorCode.VALIDATION):
        typed.call(MERGE, MergeParams(keep="Ada Lovelace", absorb="Grace Hopper"))
    typed.call(CREATE, CreateParams(path="m/A", frontmatter={"type": "insight"}, body="# A\n\ntext\n"))
    typed.call(CREATE, CreateParams(path="m/B", frontmatter={"type": "insight"}, body="# B\n\ntext\n"))
    typed.call(CREATE, CreateParams(path="m/C", body="see [[B#B]]\n"))  # B's H1 goes away in a merge
    with refused(ErrorCode.VALIDATION, IssueCode.V03):
        typed.call(MERGE, MergeParams(keep="A", absorb="B"))
    typed.call(CREATE, CreateParams(path="m/D", frontmatter={"type": "insight"}, body="# D\n\n## Notes\n\nsee [[#Notes]]\n"))
    typed.call(CREATE, CreateParams(path="m/E", frontmatter={"type": "insight"}, body="# E\n\n## Notes\n\nx\n"))
    with pytest.raises(CallError) as captured:  # refused, whatever its code, with a V03 in the absorbed note
        typed.call(MERGE, MergeParams(keep="E", absorb="D"))
    assert captured.value.data.issues[0].code == IssueCode.V03
    assert captured.value.data.issues[0].path == "m/D.md"
    big = "---\ntype: insight\n---\n" + "lorem ipsum dolor " * 65000
    (vault / "m" / "Big1.md").write_text(big)
    (vault / "m" / "Big2.md").write_text(big)
    typed.call(STATS, StatsParams(fresh=True))
    with refused(ErrorCode.LIMIT):
        typed.call(MERGE, MergeParams(keep="Big1", absorb="Big2"))


# -- the CLI --------------------------------------------------------------------------------------


def test_cli_link_supersede_move_delete_merge(vault: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("link", "Zettelkasten", "Beta Overview", "--relation", "supports")
    assert out.code == 0, out.err
    assert out.out.startswith("applied note.link (op "), out.err
    again = cli("link", "Zettelkasten", "Beta Overview", "--json")
    assert again.code == 0
    assert again.json()["outcome"] == "unchanged"
    assert cli("link", "Zettelkasten", "Meeting Notes").code == 1
    assert cli("link", "Zettelkasten", "Ideas", "--relation", "likes").code == 2
    assert cli("supersede", "Ideas", "Zettelkasten", "--dry-run", "--json").json()["outcome"] == "dry_run"
    assert cli("supersede", "Ideas", "Ideas").code == 2  # the command line names one note twice
    assert cli("supersede", "Ideas", "inbox/Ideas").code == 1  # two names the vault resolves to one note

    preview = cli("move", "Ada Lovelace", "team/Ada")
    assert preview.code == 0, preview.err
    assert preview.out.startswith("preview of note.move"), preview.err
    assert "\nrewritten: README.md, concepts/Link Syntax.md, " in preview.out
    command = preview.out.split("to confirm, run:\n  ")[1].strip()
    assert command.startswith("vaultctl move 'Ada Lovelace' team/Ada --confirm --fingerprint ")
    done = cli(*shlex.split(command)[1:], "--json")
    assert done.code == 0
    assert done.json()["outcome"] == "applied"
    assert (vault / "team" / "Ada.md").exists()
    stale = cli(*shlex.split(command.replace("'Ada Lovelace'", "Ada").replace("team/Ada", "people/Ada"))[1:])
    assert stale.code != 0

    assert cli("delete", "Ideas").code == 1
    preview = cli("delete", "Ideas", "--leave-broken-links")
    assert preview.code == 0
    assert "backlinks: README.md:36" in preview.out
    command = preview.out.split("to confirm, run:\n  ")[1].strip()
    assert command.startswith("vaultctl delete Ideas --leave-broken-links --confirm --fingerprint ")
    assert cli(*shlex.split(command)[1:]).code == 0
    assert (vault / ".trash" / "inbox" / "Ideas.md").exists()

    cli("new", "m/Keep", "--set", '{"type": "insight"}')
    cli("new", "m/Absorb", "--set", '{"type": "insight"}')
    merge = cli("merge", "Keep", "Absorb")
    assert merge.code == 0
    assert "body:" not in merge.out
    assert "vaultctl merge Keep Absorb --confirm" in merge.out
    as_json = cli("merge", "Keep", "Absorb", "--json").json()
    assert as_json["outcome"] == "preview"
    assert as_json["detail"]["body"].startswith("# Keep\n")
    confirmed = cli("merge", "Keep", "Absorb", "--confirm", "--fingerprint", as_json["fingerprint"])
    assert confirmed.code == 0
    assert confirmed.out.startswith("applied note.merge")
    assert cli("merge", "Keep", "Keep").code == 2


def test_a_move_reports_no_link_that_was_dead_before_it(vault: Path, typed: TypedClient) -> None:
    """Regression: a move preview listed every dead link of the moved note and of each note whose
    links it rewrote, though the move broke none of them."""
    (vault / "Mover.md").write_text("# Mover\n\n[[Gone One]] [[Gone Two]] [[Ada Lovelace]]\n")
    (vault / "Pointer.md").write_text("# Pointer\n\n[[Mover]] and the long dead [[Nowhere]]\n")
    typed.call(STATS, StatsParams(fresh=True))
    params = MoveParams(target="Mover", to="moved/Mover Renamed")
    preview = typed.call(MOVE, params)
    assert isinstance(preview, Preview)
    assert not [w for w in preview.warnings if w.code == IssueCode.V03], preview.warnings
    done = typed.call(MOVE, msgspec.structs.replace(params, confirm=True, fingerprint=preview.fingerprint))
    assert isinstance(done, Applied)
    assert not [w for w in done.warnings if w.code == IssueCode.V03]
    assert "[[Mover Renamed]]" in (vault / "Pointer.md").read_text()
    # An edit of the same note still reports the old debt it keeps.
    appended = typed.call(APPEND, AppendParams(target="Pointer", section="More", markdown="x"))
    assert any(w.code == IssueCode.V03 and "Nowhere" in w.message for w in appended.warnings)
