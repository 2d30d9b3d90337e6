"""link, supersede, move, delete and merge through a real daemon and the real CLI: happy paths,
refusals, previews and their fingerprints, link rewriting in the sample vault, and undo."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import Daemon, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

ALPHA = "projects/alpha/Alpha Plan.md"


@pytest.fixture
def vault(daemon: Daemon, raw: RawClient, sample_vault: Path) -> Path:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    return sample_vault


def _err(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    return reply["error"]["data"]  # type: ignore[no-any-return]


def _without_log(snap: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in snap.items() if k != "log.md"}


def _two_step(raw: RawClient, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    preview = raw.call(method, params)
    assert preview["preview"] and not preview["applied"] and preview["fingerprint"], preview
    done = raw.call(method, {**params, "confirm": True, "fingerprint": preview["fingerprint"]})
    assert done["applied"] and done["op_id"], done
    return preview, done


def _link_state(raw: RawClient) -> dict[str, list[tuple[str, str, str | None]]]:
    """Every note's outgoing links as (target as written, status, resolved path)."""
    notes = [n for n in raw.call("note.list", {"limit": 500})["notes"] if n["path"] != "log.md"]
    return {
        n["path"]: [
            (o["target"], o["status"], o.get("resolved")) for o in raw.call("note.links", {"target": n["path"], "limit": 500})["out"]
        ]
        for n in notes
    }


# -- note.link ------------------------------------------------------------------------------------


def test_link_both_ways_once_with_relation(vault: Path, raw: RawClient) -> None:
    raw.call("note.create", {"path": "t/Topical", "body": "# Topical\n\nText.\n\n## Topics\n\n- [[Alpha Plan]]\n"})
    r = raw.call("note.link", {"source": "Topical", "target": "Zettelkasten", "relation": "supports"})
    assert r["applied"] and {c["path"] for c in r["changes"]} == {"t/Topical.md", "concepts/Zettelkasten.md"}
    topical = (vault / "t" / "Topical.md").read_text()
    assert "## Relevant Notes\n\n- [[Zettelkasten]] — supports\n\n## Topics" in topical
    zettel = (vault / "concepts" / "Zettelkasten.md").read_text()
    assert zettel.endswith("## Relevant Notes\n\n- [[Topical]]\n") and "\nupdated: " not in zettel[:10]
    assert "CONNECT" in r["log"]["line"]
    again = raw.call("note.link", {"source": "Topical", "target": "Zettelkasten", "relation": "supports"})
    assert not again["applied"] and again["outcome"] == "unchanged"
    # an existing link in any form counts: Ada already links [[Alpha Plan]], Alpha Plan links [[Ada Lovelace]]
    before = snapshot(vault)
    assert raw.call("note.link", {"source": "Ada Lovelace", "target": "Alpha Plan"})["outcome"] == "unchanged"
    assert snapshot(vault) == before
    one_way = raw.call("note.link", {"source": "Zettelkasten", "target": "projects/beta/Meeting Notes.md", "bidirectional": False})
    assert [c["path"] for c in one_way["changes"]] == ["concepts/Zettelkasten.md"]
    assert "- [[projects/beta/Meeting Notes]]\n" in (vault / "concepts" / "Zettelkasten.md").read_text()
    assert _err(raw.request("note.link", {"source": "Ideas", "target": "inbox/Ideas.md"}))["code"] == "VALIDATION"
    assert _err(raw.request("note.link", {"source": "Ideas", "target": "Ada", "relation": "likes"}))["code"] == "INVALID_PARAMS"
    assert _err(raw.request("note.link", {"source": "Ideas", "target": "No Such Note"}))["code"] == "NOT_FOUND"
    assert _err(raw.request("note.link", {"source": "Ideas", "target": "Meeting Notes"}))["code"] == "AMBIGUOUS"


# -- note.supersede -------------------------------------------------------------------------------


def test_supersede_marks_old_and_links_back(vault: Path, raw: RawClient) -> None:
    raw.call("note.create", {"path": "s/Old Finding", "frontmatter": {"type": "insight", "status": "active"}, "body": "# Old Finding\n"})
    raw.call("note.create", {"path": "s/New Finding", "frontmatter": {"type": "insight"}, "body": "# New Finding\n"})
    old_before = (vault / "s" / "Old Finding.md").read_text()
    r = raw.call("note.supersede", {"old": "Old Finding", "new": "New Finding"})
    assert r["applied"] and "RETHINK" in r["log"]["line"]
    old = (vault / "s" / "Old Finding.md").read_text()
    assert "status: superseded\n" in old and 'superseded_by: "[[New Finding]]"\n' in old
    assert old.replace("status: superseded", "status: active").replace('superseded_by: "[[New Finding]]"\n', "") == old_before
    assert "## Relevant Notes\n\n- [[Old Finding]] — supersedes\n" in (vault / "s" / "New Finding.md").read_text()
    assert raw.call("note.supersede", {"old": "Old Finding", "new": "New Finding"})["outcome"] == "unchanged"
    cycle = _err(raw.request("note.supersede", {"old": "New Finding", "new": "Old Finding"}))
    assert cycle["code"] == "VALIDATION" and cycle["issues"][0]["code"] == "V10"
    assert _err(raw.request("note.supersede", {"old": "Ideas", "new": "inbox/Ideas"}))["code"] == "VALIDATION"


# -- note.move ------------------------------------------------------------------------------------


def _expected_after_alpha_move(text: str) -> str:
    return (
        text.replace("[[Alpha Plan.md]]", "[[Alpha Roadmap.md]]")  # the link keeps its ".md"
        .replace("[[Alpha Plan", "[[Alpha Roadmap")
        .replace("../projects/alpha/Alpha%20Plan.md", "../archive/Alpha%20Roadmap.md")
    )


def test_move_rewrites_every_link_form_and_nothing_else(vault: Path, raw: RawClient) -> None:
    code = "Real [[Alpha Plan]], code `[[Alpha Plan]]`,\n\n```\n[[Alpha Plan]]\n```\n%% [[Alpha Plan]] %%\n"
    raw.call("note.create", {"path": "t/code", "body": code})
    incoming = raw.call("note.links", {"target": ALPHA})["incoming"]
    links_before = _link_state(raw)
    before = snapshot(vault)
    preview = raw.call("note.move", {"target": "Alpha Plan", "to": "archive/Alpha Roadmap"})
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
    assert set(preview["detail"]["rewritten"]) == rewritten
    assert {c["path"] for c in preview["changes"]} == rewritten | {ALPHA, "archive/Alpha Roadmap.md"}
    _, done = _two_step(raw, "note.move", {"target": "Alpha Plan", "to": "archive/Alpha Roadmap"})
    assert "ROUTE" in done["log"]["line"]
    after = snapshot(vault)
    assert after.pop("archive/Alpha Roadmap.md") == before.pop(ALPHA)  # its own links needed nothing
    expected = {k: _expected_after_alpha_move(v.decode()).encode() if k.endswith(".md") else v for k, v in _without_log(before).items()}
    expected["t/code.md"] = before["t/code.md"].replace(b"Real [[Alpha Plan]]", b"Real [[Alpha Roadmap]]")
    assert _without_log(after) == expected
    assert (vault / "t" / "code.md").read_text().count("[[Alpha Plan]]") == 3  # code and comments untouched
    moved_in = raw.call("note.links", {"target": "archive/Alpha Roadmap.md"})["incoming"]
    assert len(moved_in) == len(incoming)
    links_after = _link_state(raw)
    links_before["archive/Alpha Roadmap.md"] = links_before.pop(ALPHA)
    for path, outs in links_after.items():
        assert [(s, p) for _, s, p in outs] == [(s, "archive/Alpha Roadmap.md" if p == ALPHA else p) for _, s, p in links_before[path]], (
            path
        )


def test_move_to_a_shared_name_gives_links_a_path(vault: Path, raw: RawClient) -> None:
    links_before = _link_state(raw)
    stats = raw.call("vault.stats", {})
    _two_step(raw, "note.move", {"target": "inbox/Ideas.md", "to": "archive/Alpha Plan"})
    readme = (vault / "README.md").read_text()
    assert "- [[projects/alpha/Alpha Plan]]: what project Alpha" in readme
    assert "- [[archive/Alpha Plan]] is the inbox." in readme
    assert "[[projects/alpha/Alpha Plan#Goals\\|goals]]" in (vault / "projects/beta/Beta Overview.md").read_text()
    links_after = _link_state(raw)
    links_before["archive/Alpha Plan.md"] = links_before.pop("inbox/Ideas.md")
    for path, outs in links_after.items():
        assert [(s, p) for _, s, p in outs] == [
            (s, "archive/Alpha Plan.md" if p == "inbox/Ideas.md" else p) for _, s, p in links_before[path]
        ], path
    again = raw.call("vault.stats", {})
    assert (again["dead_links"], again["ambiguous_links"]) == (stats["dead_links"], stats["ambiguous_links"])


def test_moved_note_keeps_relative_links_and_undo_restores(vault: Path, raw: RawClient) -> None:
    before = snapshot(vault)
    _, done = _two_step(raw, "note.move", {"target": "Zettelkasten", "to": "deep/er/Zettelkasten.md"})
    moved = (vault / "deep" / "er" / "Zettelkasten.md").read_text()
    assert "[Alpha plan](../../projects/alpha/Alpha%20Plan.md)" in moved
    assert "[Grace's page](<../../people/Grace Hopper.md>)" in moved and "[same note](#Small%20notes)" in moved
    assert not raw.call("note.links", {"target": "deep/er/Zettelkasten.md"})["dead"]
    assert (vault / "README.md").read_bytes() == before["README.md"]  # [[Zettelkasten]] still resolves
    raw.call("op.undo", {"op_id": done["op_id"]})
    assert _without_log(snapshot(vault)) == _without_log(before)


def test_move_rewrites_frontmatter_links_and_keeps_old_problems_as_warnings(vault: Path, raw: RawClient) -> None:
    plan = vault / "projects" / "alpha" / "Alpha Plan.md"
    before = plan.read_text()
    _two_step(raw, "note.move", {"target": "README", "to": "Home Page"})
    assert plan.read_text() == before.replace('up: "[[README]]"', 'up: "[[Home Page]]"')
    # Grace's note has a dead [[Ada]]: the move neither refuses nor reports it (it was dead before,
    # and the move did not break it); deleting it then undoing that only warn about it
    preview, done = _two_step(raw, "note.move", {"target": "Grace Hopper", "to": "team/"})
    assert done["changes"][0]["path"] == "team/Grace Hopper.md"
    assert "[[Ada]]" in (vault / "team" / "Grace Hopper.md").read_text()
    assert not any(w["code"] == "V03" for w in preview["warnings"] + done["warnings"]), done["warnings"]
    grace = (vault / "team" / "Grace Hopper.md").read_bytes()
    _, deleted = _two_step(raw, "note.delete", {"target": "Grace Hopper", "leave_broken_links": True})
    assert any(w["code"] == "V03" for w in deleted["warnings"])  # the links it breaks, reported
    raw.call("op.undo", {"op_id": deleted["op_id"]})
    assert (vault / "team" / "Grace Hopper.md").read_bytes() == grace
    # a secret a note already holds does not block moving it (it is not new text) ...
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (vault / "inbox" / "leaky.md").write_text(f"old token {token}\n")
    raw.call("vault.stats", {"fresh": True})
    _two_step(raw, "note.move", {"target": "inbox/leaky.md", "to": "archive/leaky"})
    assert (vault / "archive" / "leaky.md").read_text() == f"old token {token}\n"
    # ... but a merge that copies it into another note does
    raw.call("note.create", {"path": "archive/clean", "body": "# Clean\n"})
    refused = _err(raw.request("note.merge", {"keep": "archive/clean", "absorb": "archive/leaky"}))
    assert refused["code"] == "VALIDATION" and refused["issues"][0]["code"] == "V06"


def test_move_preview_goes_stale_and_refusals(vault: Path, raw: RawClient) -> None:
    params = {"target": "Ada Lovelace", "to": "team/Ada"}
    preview = raw.call("note.move", params)
    readme = vault / "README.md"
    readme.write_text(readme.read_text() + "\nedited by hand\n")
    raw.call("vault.stats", {"fresh": True})
    stale = raw.request("note.move", {**params, "confirm": True, "fingerprint": preview["fingerprint"]})
    assert _err(stale)["code"] == "STALE_PREVIEW"
    preview = raw.call("note.move", params)
    raw.call("note.create", {"path": "t/new inbound", "body": "see [[Ada Lovelace]]\n"})  # a new backlink
    stale = raw.request("note.move", {**params, "confirm": True, "fingerprint": preview["fingerprint"]})
    assert _err(stale)["code"] == "STALE_PREVIEW" and (vault / "people" / "Ada Lovelace.md").exists()
    assert _err(raw.request("note.move", {**params, "confirm": True}))["code"] == "INVALID_PARAMS"
    taken = _err(raw.request("note.move", {"target": "Ada Lovelace", "to": "people/Grace Hopper"}))
    assert taken["code"] == "VALIDATION" and taken["issues"][0]["code"] == "V08"
    assert _err(raw.request("note.move", {"target": "Ada Lovelace", "to": "people/Ada Lovelace"}))["code"] == "VALIDATION"
    for bad in ("team/Ada #1", "team/Ada|x", ".obsidian/Ada", "../outside/Ada", "team/Ada /x"):
        reply = _err(raw.request("note.move", {"target": "Ada Lovelace", "to": bad}))
        assert reply["code"] == "VALIDATION" and reply["issues"][0]["code"] == "V04", bad


# -- note.delete ----------------------------------------------------------------------------------


def test_delete_to_trash_refuses_broken_links_and_undo_restores(vault: Path, raw: RawClient) -> None:
    before = snapshot(vault)
    refused = _err(raw.request("note.delete", {"target": "Ideas"}))
    assert refused["code"] == "VALIDATION" and refused["issues"][0]["code"] == "V03"
    assert refused["issues"][0]["path"] == "README.md"
    params = {"target": "Ideas", "leave_broken_links": True}
    preview, done = _two_step(raw, "note.delete", params)
    assert preview["detail"] == {"trash": ".trash/inbox/Ideas.md", "backlinks": ["README.md:36"]}
    assert (vault / ".trash" / "inbox" / "Ideas.md").read_bytes() == before["inbox/Ideas.md"]
    assert not (vault / "inbox" / "Ideas.md").exists() and "RETHINK" in done["log"]["line"]
    assert _err(raw.request("note.read", {"target": "Ideas"}))["code"] == "NOT_FOUND"
    assert any(d["target"] == "Ideas" for d in raw.call("note.links", {"target": "README.md"})["dead"])
    raw.call("op.undo", {"op_id": done["op_id"]})
    assert _without_log(snapshot(vault)) == _without_log(before)
    assert raw.call("note.read", {"target": "Ideas"})["path"] == "inbox/Ideas.md"
    # a taken trash place gets a numeric suffix
    _two_step(raw, "note.delete", params)
    raw.call("note.create", {"path": "inbox/Ideas", "body": "second\n"})
    preview, _ = _two_step(raw, "note.delete", params)
    assert preview["detail"]["trash"] == ".trash/inbox/Ideas 1.md"
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


def test_merge_folds_content_repoints_links_and_marks_absorb(vault: Path, raw: RawClient) -> None:
    raw.call(
        "note.create",
        {
            "path": "m/Keep",
            "body": KEEP_BODY,
            "frontmatter": {"type": "insight", "topics": ["[[Alpha Plan]]"], "source": "https://a.example"},
        },
    )
    raw.call(
        "note.create",
        {
            "path": "m/Absorb",
            "body": ABSORB_BODY,
            "frontmatter": {"type": "insight", "topics": ["[[Alpha Plan]]", "[[Zettelkasten]]"], "source": ["https://b.example"]},
        },
    )
    raw.call("note.create", {"path": "m/Ref", "body": "See [[Absorb#Detail|detail]], [[Absorb#^blk]], [a](Absorb.md).\n"})
    preview, done = _two_step(raw, "note.merge", {"keep": "Keep", "absorb": "Absorb"})
    assert preview["detail"]["body"] == MERGED_BODY
    assert preview["detail"]["unions"]["source"] == ["https://a.example", "https://b.example"]
    keep = (vault / "m" / "Keep.md").read_text()
    assert keep.endswith("---\n" + MERGED_BODY)
    assert (
        "topics:\n  - '[[Alpha Plan]]'\n  - '[[Zettelkasten]]'\n" in keep
        or 'topics:\n  - "[[Alpha Plan]]"\n  - "[[Zettelkasten]]"\n' in keep
    )
    absorb = (vault / "m" / "Absorb.md").read_text()
    assert "status: superseded\n" in absorb and 'superseded_by: "[[Keep]]"\n' in absorb
    assert absorb.endswith("---\n" + ABSORB_BODY)  # the absorb file stays, its body untouched
    assert (vault / "m" / "Ref.md").read_text().endswith("See [[Keep#Detail|detail]], [[Keep#^blk]], [a](Keep.md).\n")
    assert not raw.call("note.links", {"target": "m/Ref.md"})["dead"]
    assert "RETHINK" in done["log"]["line"]
    again = _err(raw.request("note.merge", {"keep": "Keep", "absorb": "Absorb"}))
    assert again["code"] == "VALIDATION" and again["issues"][0]["code"] == "V10"


def test_merge_refusals(vault: Path, raw: RawClient) -> None:
    assert _err(raw.request("note.merge", {"keep": "Ideas", "absorb": "inbox/Ideas"}))["code"] == "VALIDATION"
    types = _err(raw.request("note.merge", {"keep": "Alpha Plan", "absorb": "Ideas"}))
    assert types["code"] == "VALIDATION" and types["issues"][0]["code"] == "V01"
    people = _err(raw.request("note.merge", {"keep": "Ada Lovelace", "absorb": "Grace Hopper"}))
    assert people["code"] == "VALIDATION"
    raw.call("note.create", {"path": "m/A", "frontmatter": {"type": "insight"}, "body": "# A\n\ntext\n"})
    raw.call("note.create", {"path": "m/B", "frontmatter": {"type": "insight"}, "body": "# B\n\ntext\n"})
    raw.call("note.create", {"path": "m/C", "body": "see [[B#B]]\n"})  # B's H1 goes away in a merge
    lost = _err(raw.request("note.merge", {"keep": "A", "absorb": "B"}))
    assert lost["code"] == "VALIDATION" and lost["issues"][0]["code"] == "V03"
    raw.call("note.create", {"path": "m/D", "frontmatter": {"type": "insight"}, "body": "# D\n\n## Notes\n\nsee [[#Notes]]\n"})
    raw.call("note.create", {"path": "m/E", "frontmatter": {"type": "insight"}, "body": "# E\n\n## Notes\n\nx\n"})
    captured = _err(raw.request("note.merge", {"keep": "E", "absorb": "D"}))
    assert captured["issues"][0]["code"] == "V03" and captured["issues"][0]["path"] == "m/D.md"
    big = "---\ntype: insight\n---\n" + "lorem ipsum dolor " * 65000
    (vault / "m" / "Big1.md").write_text(big)
    (vault / "m" / "Big2.md").write_text(big)
    raw.call("vault.stats", {"fresh": True})
    assert _err(raw.request("note.merge", {"keep": "Big1", "absorb": "Big2"}))["code"] == "LIMIT"


# -- the CLI --------------------------------------------------------------------------------------


def test_cli_link_supersede_move_delete_merge(vault: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("link", "Zettelkasten", "Beta Overview", "--relation", "supports")
    assert out.code == 0 and out.out.startswith("applied note.link (op "), out.err
    again = cli("link", "Zettelkasten", "Beta Overview", "--json")
    assert again.code == 0 and again.json()["outcome"] == "unchanged"
    assert cli("link", "Zettelkasten", "Meeting Notes").code == 1
    assert cli("link", "Zettelkasten", "Ideas", "--relation", "likes").code == 2
    assert cli("supersede", "Ideas", "Zettelkasten", "--dry-run", "--json").json()["dry_run"]
    assert cli("supersede", "Ideas", "Ideas").code == 2  # the command line names one note twice
    assert cli("supersede", "Ideas", "inbox/Ideas").code == 1  # two names the vault resolves to one note

    preview = cli("move", "Ada Lovelace", "team/Ada")
    assert preview.code == 0 and preview.out.startswith("preview of note.move"), preview.err
    assert "\nrewritten: README.md, concepts/Link Syntax.md, " in preview.out
    command = preview.out.split("to confirm, run:\n  ")[1].strip()
    assert command.startswith("vaultctl move 'Ada Lovelace' team/Ada --confirm --fingerprint ")
    done = cli(*shlex.split(command)[1:], "--json")
    assert done.code == 0 and done.json()["applied"] and (vault / "team" / "Ada.md").exists()
    stale = cli(*shlex.split(command.replace("'Ada Lovelace'", "Ada").replace("team/Ada", "people/Ada"))[1:])
    assert stale.code != 0

    assert cli("delete", "Ideas").code == 1
    preview = cli("delete", "Ideas", "--leave-broken-links")
    assert preview.code == 0 and "backlinks: README.md:36" in preview.out
    command = preview.out.split("to confirm, run:\n  ")[1].strip()
    assert command.startswith("vaultctl delete Ideas --leave-broken-links --confirm --fingerprint ")
    assert cli(*shlex.split(command)[1:]).code == 0 and (vault / ".trash" / "inbox" / "Ideas.md").exists()

    cli("new", "m/Keep", "--set", '{"type": "insight"}')
    cli("new", "m/Absorb", "--set", '{"type": "insight"}')
    merge = cli("merge", "Keep", "Absorb")
    assert merge.code == 0 and "body:" not in merge.out and "vaultctl merge Keep Absorb --confirm" in merge.out
    as_json = cli("merge", "Keep", "Absorb", "--json").json()
    assert as_json["preview"] and as_json["detail"]["body"].startswith("# Keep\n")
    confirmed = cli("merge", "Keep", "Absorb", "--confirm", "--fingerprint", as_json["fingerprint"])
    assert confirmed.code == 0 and confirmed.out.startswith("applied note.merge")
    assert cli("merge", "Keep", "Keep").code == 2


def test_a_move_reports_no_link_that_was_dead_before_it(vault: Path, raw: RawClient) -> None:
    """Regression: a move preview listed every dead link of the moved note and of each note whose
    links it rewrote, though the move broke none of them."""
    (vault / "Mover.md").write_text("# Mover\n\n[[Gone One]] [[Gone Two]] [[Ada Lovelace]]\n")
    (vault / "Pointer.md").write_text("# Pointer\n\n[[Mover]] and the long dead [[Nowhere]]\n")
    raw.call("vault.stats", {"fresh": True})
    preview = raw.call("note.move", {"target": "Mover", "to": "moved/Mover Renamed"})
    assert preview["applied"] is False
    assert not [w for w in preview["warnings"] if w["code"] == "V03"], preview["warnings"]
    done = raw.call("note.move", {"target": "Mover", "to": "moved/Mover Renamed", "confirm": True, "fingerprint": preview["fingerprint"]})
    assert done["applied"] and not [w for w in done["warnings"] if w["code"] == "V03"]
    assert "[[Mover Renamed]]" in (vault / "Pointer.md").read_text()
    # An edit of the same note still reports the old debt it keeps.
    appended = raw.call("note.append", {"target": "Pointer", "section": "More", "markdown": "x"})
    assert any(w["code"] == "V03" and "Nowhere" in w["message"] for w in appended["warnings"])
