"""The typed profile's own rules through a real daemon: the note skeleton on create, topics that name
maps of content (V13), the body's '## Topics' list in step with them (V14), the possible-duplicate
hint (V15, a warning), the typed lint rules (L18-L20), and an agent's tidy held as a proposal. An
open vault meets none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

MOC = "---\ntype: moc\ntitle: Home\n---\n# Home\n\nThe map.\n"
PLAIN = "---\ntype: insight\ndescription: Not a map\n---\n# Plain\n\nText [[home-moc]].\n"


@pytest.fixture
def typed_vault(daemon: Daemon, raw: RawClient, home: Home) -> Path:
    root = home.root / "kb"
    root.mkdir()
    (root / "home-moc.md").write_text(MOC)
    (root / "plain-note.md").write_text(PLAIN)
    (root / "queue-lengths-at-noon.md").write_text(
        "---\ntype: observation\ndescription: Queues\ntitle: Queue lengths at noon\n---\n# Queue lengths at noon\n\nSee [[home-moc]].\n"
    )
    raw.call("vault.add", {"id": "kb", "path": str(root), "schema": "typed"})
    return root


def _codes(issues: list[dict[str, Any]]) -> set[str]:
    return {i["code"] for i in issues}


def _refusal(raw: RawClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = raw.request(method, params)
    assert "error" in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


def test_create_without_a_body_gets_the_skeleton_listing_its_topics(typed_vault: Path, raw: RawClient) -> None:
    raw.call(
        "note.create",
        {
            "vault": "kb",
            "path": "fresh-idea",
            "title": "Fresh idea",
            "frontmatter": {"type": "insight", "description": "New", "topics": ["[[home-moc]]"]},
        },
    )
    body = (typed_vault / "fresh-idea.md").read_text().split("---\n", 2)[2]
    assert body == "# Fresh idea\n\n## Relevant Notes\n\n## Topics\n\n- [[home-moc]]\n"


def test_topics_must_name_a_map_of_content(typed_vault: Path, raw: RawClient) -> None:
    before = snapshot(typed_vault)
    for topic in ("[[plain-note]]", "[[no-such-map]]"):
        error = _refusal(
            raw,
            "note.create",
            {"vault": "kb", "path": "bad-topic", "frontmatter": {"type": "insight", "description": "x", "topics": [topic]}},
        )
        assert "V13" in _codes(error["data"]["issues"]), error
    assert snapshot(typed_vault) == before


def test_the_topics_list_follows_set_frontmatter_and_a_list_out_of_step_is_refused(typed_vault: Path, raw: RawClient) -> None:
    (typed_vault / "second-moc.md").write_text("---\ntype: moc\n---\n# Second\n\nMap two.\n")
    raw.call(
        "note.create",
        {
            "vault": "kb",
            "path": "topical",
            "frontmatter": {"type": "insight", "description": "x", "topics": ["[[home-moc]]"]},
            "body": "# Topical\n\nText.\n",
        },
    )
    assert (typed_vault / "topical.md").read_text().endswith("Text.\n\n## Topics\n\n- [[home-moc]]\n")
    raw.call("note.set_frontmatter", {"vault": "kb", "target": "topical", "set": {"topics": ["[[second-moc]]"]}})
    assert (typed_vault / "topical.md").read_text().endswith("Text.\n\n## Topics\n\n- [[second-moc]]\n")
    error = _refusal(raw, "note.patch", {"vault": "kb", "target": "topical", "old": "- [[second-moc]]", "new": "- [[home-moc]]"})
    assert "V14" in _codes(error["data"]["issues"]), error


def test_a_title_close_to_an_existing_one_warns_and_writes(typed_vault: Path, raw: RawClient) -> None:
    receipt = raw.call(
        "note.create",
        {
            "vault": "kb",
            "path": "queue-length-at-noon",
            "title": "Queue length at noon",
            "frontmatter": {"type": "observation", "description": "x"},
        },
    )
    hints = [w for w in receipt["warnings"] if w["code"] == "V15"]
    assert hints and "queue-lengths-at-noon.md" in hints[0]["message"], receipt["warnings"]
    assert (typed_vault / "queue-length-at-noon.md").exists()
    other = raw.call("note.create", {"vault": "kb", "path": "unrelated-thing", "frontmatter": {"type": "insight", "description": "x"}})
    assert "V15" not in _codes(other["warnings"])


def test_typed_lint_rules(typed_vault: Path, raw: RawClient) -> None:
    (typed_vault / "Bad Name.md").write_text("---\ntype: insight\ndescription: x\n---\n# Bad\n\nSee [[home-moc]].\n")
    (typed_vault / "proof-less.md").write_text(
        "---\ntype: insight\ndescription: x\nconfidence: proven\ntopics: ['[[plain-note]]']\n---\n# P\n\nSee [[home-moc]].\n\n## Topics\n\n- [[plain-note]]\n"
    )
    found = raw.call("vault.lint", {"vault": "kb", "fresh": True, "limit": 2000})["findings"]
    by = {(f["code"], f["note"]) for f in found}
    assert ("L18", "Bad Name.md") in by
    assert ("L19", "proof-less.md") in by
    assert ("L20", "proof-less.md") in by
    assert not {c for c, n in by if c in {"L18", "L19", "L20"} and n in {"home-moc.md", "plain-note.md"}}


def test_the_typed_rules_leave_an_open_vault_alone(daemon: Daemon, raw: RawClient, home: Home) -> None:
    root = home.root / "open"
    root.mkdir()
    (root / "Bad Name.md").write_text("---\nconfidence: proven\ntopics: ['[[nowhere]]']\n---\n# Bad\n")
    raw.call("vault.add", {"id": "open", "path": str(root)})
    found = raw.call("vault.lint", {"vault": "open", "fresh": True})["findings"]
    assert not {f["code"] for f in found} & {"L18", "L19", "L20"}
    raw.call("note.create", {"vault": "open", "path": "n", "frontmatter": {"topics": ["[[nowhere]]"]}})
    assert (root / "n.md").read_text().endswith("# n\n")


def test_an_agents_tidy_is_a_proposal_whose_diff_holds_no_secret(typed_vault: Path, home: Home) -> None:
    token = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"  # a GitHub token's shape, made up
    (typed_vault / "old-note.md").write_text(f"---\ntype: Insight\ndescription: x\n---\n# Old\n\nSee [[home-moc]]. key = {token}\n")
    agent = RawClient(home.socket)
    agent.hello(channel="mcp")
    before = snapshot(typed_vault)
    preview = agent.call("vault.tidy", {"vault": "kb"})
    held = agent.call("vault.tidy", {"vault": "kb", "confirm": True, "fingerprint": preview["fingerprint"]})
    assert held.get("proposal"), held
    assert snapshot(typed_vault) == before
    # the proposal a person reviews shows the redaction without the secret, and keeps none
    kept = [p for p in typed_vault.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    assert kept == [typed_vault / "old-note.md"], kept


def test_the_undo_of_a_header_fix_puts_the_old_header_back(typed_vault: Path, raw: RawClient) -> None:
    """An undo restores a header the note held before: its schema debt is old, so it warns."""
    note = typed_vault / "debt-note.md"
    note.write_text("---\ntype: insight\ndescription: x\nconfidence: confirmed\n---\n# Debt\n\nSee [[home-moc]].\n")
    before = note.read_bytes()
    done = raw.call("note.set_frontmatter", {"vault": "kb", "target": "debt-note", "set": {"confidence": "proven"}})
    assert b"confidence: proven" in note.read_bytes()
    undone = raw.call("op.undo", {"vault": "kb", "op_id": done["op_id"]})
    assert note.read_bytes() == before
    assert "V01" in _codes(undone["warnings"])
