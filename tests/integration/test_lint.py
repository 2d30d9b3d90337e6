"""vault.lint and lint.fix through a real daemon and the real CLI, on the sample vault and on a vault
written here to hold one case of every rule."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.methods.lint import MAX_LINT_DOCUMENTS
from tests.support.harness import Daemon, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

CANVAS = {
    "nodes": [
        {"id": "a", "type": "file", "file": "Topic.md", "x": 0, "y": 0, "width": 400, "height": 200},
        {"id": "b", "type": "file", "file": "gone/Nowhere.md", "x": 500, "y": 0, "width": 400, "height": 200},
        {"id": "c", "type": "text", "text": "See [[Missing Card Note]] and [[Topic]].", "x": 0, "y": 300, "width": 400, "height": 200},
        {"id": "d", "type": "file", "file": "pics/used-by-canvas.png", "x": 0, "y": 600, "width": 400, "height": 200},
    ],
    "edges": [{"id": "e1", "fromNode": "a", "toNode": "zz"}],
}
EVERY_RULE = {
    "Home MOC.md": "---\ntype: moc\n---\n# Home\n\n- [[Topic]]\n- [[Alpha]]\n",
    "Topic.md": "---\ntags: [Project]\n---\n# Topic\n\nAbout [[Nowhere Note]] and [[Alpha#No Such Heading]].\n",
    "Alpha.md": "---\nup: '[[Topic]]'\naliases: [Al]\ntags: [project]\n---\n# Alpha\n\nSee [[Al]] and ![[missing.png]].\n",
    "Beta.md": "---\nup: '[[Gamma]]'\n---\n# Beta\n\nText about beta and [[Alpha]].\n",
    "Gamma.md": "---\nup: '[[Beta]]'\nparent: Not A Link\n---\n# Gamma\n\nText about gamma and [[Alpha]].\n",
    "Orphan.md": "# Orphan\n\nNobody links here and it links nowhere.\n",
    "Empty.md": "# Empty\n",
    "Stale.md": "---\nupdated: 2020-01-01\nreview: 2024-01-01\n---\n# Stale\n\nOld text linking [[Home MOC]].\n",
    "Broken.md": "---\ntitle: [unclosed\n---\n# Broken\n\nLinks [[Topic]].\n",
    "a/Twin.md": "# Twin\n\nIn a, see [[Twin]] and [[Topic]].\n",
    "b/Twin.md": "# Twin\n\nIn b, see [[Topic]].\n",
    "c/Caller.md": "# Caller\n\nWhich one: [[Twin]]? #method #pkm/method\n",
    "Big.md": "# Big\n\n" + ("word " * 60000) + "\n[[Topic]]\n",
    "Query.base": 'filters:\n  and:\n    - file.inFolder("nowhere")\n    - file.hasLink("Topic")\n    - link("No Such Base Target")\n',
    "Bad.base": "filters: [unclosed\n",
    "Map.canvas": json.dumps(CANVAS),
}


@pytest.fixture
def every_rule(daemon: Daemon, raw: RawClient, home: Home) -> Path:
    root = home.root / "rules"
    for rel, text in EVERY_RULE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pics").mkdir()
    (root / "pics" / "unused.png").write_bytes(b"\x89PNG")
    (root / "pics" / "used-by-canvas.png").write_bytes(b"\x89PNG")
    raw.call("vault.add", {"id": "rules", "path": str(root)})
    return root


def _by_code(result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for f in result["findings"]:
        found.setdefault(f["code"], []).append(f)
    return found


def test_every_rule_finds_its_case(every_rule: Path, raw: RawClient) -> None:
    before = snapshot(every_rule)
    result = raw.call("vault.lint", {"vault": "rules", "as_of": "2024-06-01", "limit": 2000})
    found = _by_code(result)
    notes = {code: {(f["note"], f["finding"]) for f in fs} for code, fs in found.items()}

    def has(code: str, note: str, *words: str) -> None:
        assert any(n == note and all(w in msg for w in words) for n, msg in notes.get(code, set())), (code, note, words, notes.get(code))

    has("L01", "Topic.md", "[[Nowhere Note]]")
    has("L01", "Alpha.md", "[[Al]]", "alias")
    has("L02", "c/Caller.md", "[[Twin]]", "[[a/Twin]]", "[[b/Twin]]")
    has("L02", "a/Twin.md", "Obsidian opens a/Twin.md")
    has("L03", "Topic.md", "No Such Heading")
    has("L04", "Orphan.md")
    has("L05", "Beta.md", "no map")
    has("L06", "Broken.md", "N01")
    has("L07", "a/Twin.md", "b/Twin.md", "ambiguous")
    has("L08", "Stale.md", "review", "2024-01-01")
    has("L08", "Stale.md", "updated", "2020-01-01")
    has("L09", "Empty.md")
    has("L10", "Big.md", "over 256 KiB")
    has("L11", "Alpha.md", "#project", "#Project")
    has("L11", "c/Caller.md", "#method", "#pkm/method")
    has("L12", "pics/unused.png")
    has("L13", "Alpha.md", "missing.png")
    has("L14", "Map.canvas", "gone/Nowhere.md")
    has("L14", "Map.canvas", "[[Missing Card Note]]")
    has("L14", "Map.canvas", "'zz' names no card")
    has("L15", "Query.base", 'file.inFolder("nowhere")')
    has("L15", "Query.base", "No Such Base Target")
    has("L15", "Bad.base", "not valid YAML")
    has("L16", "Beta.md", "Beta.md → Gamma.md → Beta.md")
    has("L17", "Gamma.md", "Not A Link")
    assert sorted(found) == [f"L{n:02d}" for n in range(1, 18)]
    assert "pics/used-by-canvas.png" not in {f["note"] for f in found["L12"]}
    assert "Query.base" not in {f["note"] for f in found.get("L12", [])}
    assert result["verdict"] == "fail" and result["errors"] > 0 and result["warnings"] > 0
    assert result["counts"] == {code: len(fs) for code, fs in sorted(found.items())}
    assert snapshot(every_rule) == before, "lint wrote to the vault"


def test_lint_is_deterministic_for_a_declared_date(every_rule: Path, raw: RawClient) -> None:
    first = raw.call("vault.lint", {"vault": "rules", "as_of": "2024-06-01", "limit": 2000})
    again = raw.call("vault.lint", {"vault": "rules", "as_of": "2024-06-01", "limit": 2000})
    assert first == again
    earlier = raw.call("vault.lint", {"vault": "rules", "as_of": "2023-12-31", "code": "L08"})
    assert [f["finding"] for f in earlier["findings"]] == [m for m in (f["finding"] for f in earlier["findings"]) if "updated" in m]


def test_note_and_code_narrow_the_findings(every_rule: Path, raw: RawClient) -> None:
    only = raw.call("vault.lint", {"vault": "rules", "note": "Alpha", "as_of": "2024-06-01"})
    assert {f["note"] for f in only["findings"]} == {"Alpha.md"} and only["checked"] == 1
    l03 = raw.call("vault.lint", {"vault": "rules", "code": "L03"})
    assert {f["code"] for f in l03["findings"]} == {"L03"} and l03["counts"] == {"L03": 1}
    cut = raw.call("vault.lint", {"vault": "rules", "limit": 1})
    assert len(cut["findings"]) == 1 and cut["truncated"] and cut["findings"][0]["level"] == "error"


def test_bad_dates_and_bounds_are_refused(every_rule: Path, raw: RawClient) -> None:
    for params, code in (
        ({"as_of": "2024-02-30"}, "INVALID_PARAMS"),
        ({"as_of": "June"}, "INVALID_PARAMS"),
        ({"limit": 0}, "INVALID_PARAMS"),
        ({"limit": 2001}, "INVALID_PARAMS"),
        ({"code": "L99"}, "INVALID_PARAMS"),
        ({"note": "No Such Note"}, "NOT_FOUND"),
    ):
        reply = raw.request("vault.lint", {"vault": "rules", **params})
        assert reply["error"]["data"]["code"] == code, (params, reply)
    assert raw.call("vault.lint", {"vault": "rules", "limit": 2000})["findings"]


def test_sample_vault_golden(daemon: Daemon, raw: RawClient, sample_vault: Path) -> None:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    result = raw.call("vault.lint", {"as_of": "2024-06-01"})
    rows = [(f["level"], f["code"], f["note"], f.get("line"), f.get("fix")) for f in result["findings"]]
    assert rows == [
        ("error", "L01", "people/Grace Hopper.md", 13, "[[Ada]] → [[Ada Lovelace|Ada]]"),
        ("error", "L01", "projects/beta/Meeting Notes.md", 14, None),
        ("error", "L02", "projects/beta/Beta Overview.md", 23, "[[Meeting Notes]] → [[projects/beta/Meeting Notes|Meeting Notes]]"),
        ("error", "L06", "concepts/Zettelkasten.md", 7, None),
        ("warn", "L07", "projects/alpha/Meeting Notes.md", None, None),
        ("warn", "L07", "projects/beta/Meeting Notes.md", None, None),
    ]
    assert result["fixable"] == 2 and result["checked"] == 15 and result["verdict"] == "fail"


def test_fix_round_trip_preview_confirm_undo(daemon: Daemon, raw: RawClient, sample_vault: Path, cli: Any) -> None:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    before = snapshot(sample_vault)
    preview = cli("lint", "--fix")
    assert preview.code == 0, preview.err
    assert "preview of lint.fix" in preview.out and "--confirm --fingerprint" in preview.out
    assert "people/Grace Hopper.md:13 [[Ada]] → [[Ada Lovelace|Ada]]" in preview.out
    assert snapshot(sample_vault) == before, "a preview wrote"
    receipt = cli("lint", "--fix", "--json").json()
    assert receipt["outcome"] == "preview" and receipt["detail"]["fixed"] == 2
    applied = cli("lint", "--fix", "--confirm", "--fingerprint", receipt["fingerprint"], "--json")
    assert applied.code == 0, applied.err
    done = applied.json()
    assert done["outcome"] == "applied" and sorted(c["path"] for c in done["changes"]) == [
        "people/Grace Hopper.md",
        "projects/beta/Beta Overview.md",
    ]
    grace = (sample_vault / "people" / "Grace Hopper.md").read_text()
    assert "Someone wrote [[Ada Lovelace|Ada]] here" in grace
    beta = (sample_vault / "projects" / "beta" / "Beta Overview.md").read_text()
    assert "Writing [[projects/beta/Meeting Notes|Meeting Notes]] alone" in beta
    changed = {p for p in before if snapshot(sample_vault).get(p) != before[p]}
    assert changed - {"log.md"} == {"people/Grace Hopper.md", "projects/beta/Beta Overview.md"}
    after = raw.call("vault.lint", {"fresh": True})
    assert after["fixable"] == 0 and {f["code"] for f in after["findings"]} >= {"L01"}
    assert cli("lint", "--fix", "--confirm", "--fingerprint", receipt["fingerprint"]).code == 75  # stale now
    undone = cli("undo", done["op_id"])
    assert undone.code == 0, undone.err
    restored = snapshot(sample_vault)
    assert {p: b for p, b in restored.items() if p != "log.md"} == {p: b for p, b in before.items() if p != "log.md"}


def test_fix_refuses_a_rule_without_a_mechanical_fix(daemon: Daemon, raw: RawClient, sample_vault: Path) -> None:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    reply = raw.request("lint.fix", {"code": "L03"})
    assert reply["error"]["data"]["code"] == "INVALID_PARAMS" and "L01, L02" in reply["error"]["data"]["message"]
    narrowed = raw.call("lint.fix", {"note": "Grace Hopper"})
    assert narrowed["detail"]["fixed"] == 1 and [c["path"] for c in narrowed["changes"]] == ["people/Grace Hopper.md"]


def test_cli_rows_verdict_and_exit(daemon: Daemon, raw: RawClient, sample_vault: Path, cli: Any) -> None:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    out = cli("lint", "--as-of", "2024-06-01")
    assert out.code == 1
    lines = out.out.splitlines()
    assert lines[0].split() == ["LEVEL", "CODE", "NOTE", "FINDING"]
    assert any(ln.split()[:4] == ["error", "L02", "projects/beta/Beta", "Overview.md:23"] for ln in lines)
    assert lines[-1] == "verdict: fail"
    assert "2 can be fixed mechanically: vaultctl lint --fix" in out.out
    only = cli("lint", "--code", "L07", "--json")
    assert only.code == 0 and only.json()["verdict"] == "warn"
    assert cli("lint", "--confirm").code == 2


async def test_an_agent_lints_and_fixes_only_what_it_sees(daemon: Daemon, raw: RawClient, home: Home) -> None:
    from tests.support.agent import agent, ok

    root = home.root / "priv"
    for rel, text in {
        "Alpha.md": "---\naliases: [Al]\n---\n# Alpha\n\nText.\n",
        "Pointer.md": "# Pointer\n\nSee [[Al]] and [[Hidden Alias]] and [[Secrt]].\n",
        "diary/Secret.md": "---\naliases: [Hidden Alias]\n---\n# Secret\n\nLinks [[Al]]. #diarytag\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    raw.call("vault.add", {"id": "priv", "path": str(root), "private_paths": ["diary/**"]})
    person = raw.call("vault.lint", {"vault": "priv"})
    assert {f["note"] for f in person["findings"] if f.get("fix")} == {"Pointer.md", "diary/Secret.md"}
    async with agent(home) as client:
        seen = ok(await client.call_tool("vault_lint", {"vault": "priv"}))
        shown = json.dumps(seen)
        assert "Secret" not in shown.replace("[[Secrt]]", "") and "diary" not in shown and "diarytag" not in shown
        assert [f.get("fix") for f in seen["findings"] if f["code"] == "L01"] == ["[[Al]] → [[Alpha|Al]]", None, None]
        preview = ok(await client.call_tool("lint_fix", {"vault": "priv"}))
        assert preview["outcome"] == "preview" and [c["path"] for c in preview["changes"]] == ["Pointer.md"]
        done = ok(await client.call_tool("lint_fix", {"vault": "priv", "confirm": True, "fingerprint": preview["fingerprint"]}))
        assert done["outcome"] == "applied" and done["detail"]["fixed"] == 1
    assert (root / "Pointer.md").read_text() == "# Pointer\n\nSee [[Alpha|Al]] and [[Hidden Alias]] and [[Secrt]].\n"
    assert (root / "diary" / "Secret.md").read_text().endswith("Links [[Al]]. #diarytag\n")


def test_a_finding_is_cut_at_its_bound(daemon: Daemon, raw: RawClient, home: Home) -> None:
    root = home.root / "long"
    root.mkdir()
    (root / "Long.md").write_text("# Long\n\n[[" + "x" * 480 + "]] and [[" + "y" * 200 + "]]\n")
    raw.call("vault.add", {"id": "long", "path": str(root)})
    found = raw.call("vault.lint", {"vault": "long", "code": "L01"})["findings"]
    lengths = sorted(len(f["finding"]) for f in found)
    assert lengths[-1] == 500 and found[[len(f["finding"]) for f in found].index(500)]["finding"].endswith("…")
    assert lengths[0] < 500


@pytest.mark.parametrize("past", [0, 1])
def test_canvases_past_the_bound_are_counted_and_no_attachment_is_called_unused(
    daemon: Daemon, raw: RawClient, home: Home, cli: Any, past: int
) -> None:
    """Lint reads MAX_LINT_DOCUMENTS canvases and bases; one it did not read may embed any
    attachment, so past the bound L12 says nothing rather than something false."""
    root = home.root / "canvases"
    (root / "c").mkdir(parents=True)
    (root / "pics").mkdir()
    empty = json.dumps({"nodes": [], "edges": []})
    for i in range(MAX_LINT_DOCUMENTS - 1 + past):
        (root / "c" / f"{i:05d}.canvas").write_text(empty)
    embeds = {"nodes": [{"id": "p", "type": "file", "file": "pics/in-a-canvas.png", "x": 0, "y": 0, "width": 9, "height": 9}], "edges": []}
    (root / "c" / "embeds.canvas").write_text(json.dumps(embeds))
    (root / "pics" / "in-a-canvas.png").write_bytes(b"\x89PNG")
    (root / "pics" / "unused.png").write_bytes(b"\x89PNG")
    (root / "Home.md").write_text("# Home\n\nA note.\n")
    raw.call("vault.add", {"id": "cv", "path": str(root)})
    result = raw.call("vault.lint", {"vault": "cv", "code": "L12"})
    assert result.get("unread_documents", 0) == past
    assert [f["note"] for f in result["findings"]] == ([] if past else ["pics/unused.png"])
    shown = cli("lint", "--vault", "cv", "--code", "L12")
    assert ("past the 5,000 one lint reads were not checked" in shown.out) is bool(past), shown.out
