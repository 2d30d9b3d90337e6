"""Capture, the ledgers and reference identifiers through the real vaultctl against a real daemon."""

from __future__ import annotations

import base64
import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Empty
from protocol.methods.sources import CAPTURE, CaptureItem, CaptureParams
from protocol.methods.vaults import VAULT_LIST
from tests.support.harness import Daemon, Home, registered_vault, snapshot
from vaultctl.client import CallError

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient

NOTES = {
    "Page.md": "# Page\n\nA page that makes claims.\n",
    "Other.md": "# Other\n\nAnother page.\n",
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES)


def ok(cli: Any, *args: str, input: str | None = None) -> Any:
    result = cli(*args, "--json", input=input)
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def refused(cli: Any, *args: str) -> list[str]:
    """The issue codes of a refusal (exit 1), read from the CLI's error lines."""
    result = cli(*args)
    assert result.code == 1, (args, result.out, result.err)
    return [line.split()[1] for line in result.err.splitlines() if line.startswith("  error ")]


def raw_copies(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_file() and len(p.stem) == 64)


def write_input(home: Home, name: str, data: bytes) -> Path:
    path = home.root / "inbox-outside" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def test_the_same_bytes_captured_twice_are_one_raw_copy(vault: Path, home: Home, cli: Any) -> None:
    paper = write_input(home, "paper.txt", b"Journals make writes recoverable.\n")
    copy = write_input(home, "copy-of-paper.txt", b"Journals make writes recoverable.\n")
    first = ok(cli, "capture", str(paper), "--note", "Page")
    assert first["outcome"] == "applied"
    src = first["detail"]["sources"][0]
    assert src["deduplicated"] is False and src["note"] == "sources/paper.md"
    second = ok(cli, "capture", str(copy))
    again = second["detail"]["sources"][0]
    assert again["deduplicated"] is True and again["note"] == "sources/paper.md" and again["raw"] == src["raw"]
    assert raw_copies(vault) == [f"{src['sha256']}.txt"]
    note = (vault / "sources/paper.md").read_text()
    assert str(copy) in note and "[[Page]]" in note, "the second origin is recorded on the one source note"
    third = ok(cli, "capture", str(copy))
    assert third["outcome"] == "unchanged", "nothing new to record"


def test_capture_never_modifies_or_deletes_its_input(vault: Path, home: Home, cli: Any) -> None:
    paper = write_input(home, "paper.bin", os.urandom(3 * 1024 * 1024))  # over a note's bound: the binary path
    paper.chmod(0o640)
    inside = vault / "inbox" / "scan.bin"
    inside.parent.mkdir()
    inside.write_bytes(b"\x00\x01scan")
    before = [(p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode) for p in (paper, inside)]
    ok(cli, "capture", str(paper), str(inside), "--confirm", "--fingerprint", _fingerprint(cli, str(paper), str(inside)))
    after = [(p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode) for p in (paper, inside)]
    assert after == before
    assert len(raw_copies(vault)) == 2


def _fingerprint(cli: Any, *files: str) -> str:
    preview = ok(cli, "capture", *files)
    assert preview["outcome"] == "preview" and len(preview["changes"]) == 4
    return str(preview["fingerprint"])


def test_capture_from_stdin_small_and_large(vault: Path, cli: Any) -> None:
    small = ok(cli, "capture", "-", "--origin", "https://example.com/page", input="short text from a pipe\n")
    assert small["detail"]["sources"][0]["size"] == len("short text from a pipe\n")
    big_text = "line of text\n" * 60000  # ~780 KB: spooled to a private file, then removed
    big = ok(cli, "capture", "-", input=big_text)
    assert big["detail"]["sources"][0]["size"] == len(big_text)
    note = (vault / big["detail"]["sources"][0]["note"]).read_text()
    assert "origin: stdin" in note and "vaultctl-capture-" not in note


def test_undo_removes_the_raw_copy_and_the_note(vault: Path, home: Home, cli: Any) -> None:
    before = snapshot(vault)
    paper = write_input(home, "big.bin", os.urandom(3 * 1024 * 1024))
    applied = ok(cli, "capture", str(paper))
    assert len(raw_copies(vault)) == 1
    ok(cli, "undo", applied["op_id"])
    assert {k: v for k, v in snapshot(vault).items() if k != "log.md"} == {k: v for k, v in before.items() if k != "log.md"}


def test_a_tampered_raw_copy_is_reported_and_refuses_a_recapture(vault: Path, home: Home, cli: Any) -> None:
    paper = write_input(home, "paper.txt", b"original bytes\n")
    src = ok(cli, "capture", str(paper))["detail"]["sources"][0]
    clean = ok(cli, "evidence", "--fresh")
    assert clean["drifted"] == []
    (vault / src["raw"]).write_bytes(b"tampered bytes!\n")  # the same size: only a hash finds it
    report = cli("evidence", "--fresh", "--json")
    assert report.code == 1
    drifted = json.loads(report.out)["drifted"]
    assert [(d["path"], d["drift"]) for d in drifted] == [(src["note"], "changed")]
    assert ok(cli, "sources", "--verify", "--fresh")["sources"][0]["drift"] == "changed"
    assert refused(cli, "capture", str(paper)) == ["V25"]
    (vault / src["raw"]).unlink()
    drifted = json.loads(cli("evidence", "--fresh", "--json").out)["drifted"]
    assert [d["drift"] for d in drifted] == ["missing"]


def test_raw_copies_go_to_obsidians_attachment_folder(vault: Path, home: Home, cli: Any) -> None:
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text(json.dumps({"attachmentFolderPath": "./files"}))
    src = ok(cli, "capture", str(write_input(home, "a.txt", b"aaa\n")))["detail"]["sources"][0]
    assert src["raw"] == f"sources/files/{src['sha256']}.txt" and (vault / src["raw"]).read_bytes() == b"aaa\n"


def test_urls_are_plans_never_fetched(vault: Path, cli: Any) -> None:
    plan = ok(cli, "capture", "--url", "https://WWW.YouTube.com:443/watch?v=abc", "--runner", "yt-dlp on my laptop")
    src = plan["detail"]["sources"][0]
    assert src["kind"] == "youtube-plan" and src["raw"] is None
    text = (vault / src["note"]).read_text()
    assert "state: planned" in text and "yt-dlp on my laptop" in text and "nothing has been fetched" in text
    again = ok(cli, "capture", "--url", "https://www.youtube.com/watch?v=abc")
    assert again["outcome"] == "unchanged", "an RFC-equivalent spelling is the same plan"


def _source(cli: Any, home: Home, name: str, origin: str) -> str:
    path = write_input(home, name, f"evidence from {name}\n".encode())
    return str(ok(cli, "capture", str(path), "--origin", origin)["detail"]["sources"][0]["note"])


def test_ledger_rules_refuse(vault: Path, home: Home, cli: Any) -> None:
    one = _source(cli, home, "one.txt", "https://Example.com/one")
    two = _source(cli, home, "two.txt", "https://example.com:443/two")
    three = _source(cli, home, "three.txt", "https://elsewhere.example/three")
    assert refused(cli, "claim", "add", "Page", "Accepted with nothing", "--state", "accepted") == ["V21"]
    assert refused(cli, "claim", "add", "Page", "Cites the air", "--support", "Nowhere") == ["V23"]
    assert refused(cli, "claim", "add", "Page", "Risky", "--state", "accepted", "--risk", "high", "--support", one, "--support", two) == [
        "V22"
    ]
    fine = ok(
        cli, "claim", "add", "Page", "Risky but sourced", "--state", "accepted", "--risk", "high", "--support", one, "--support", three
    )
    claim = fine["detail"]["claim"]
    unsupported = ok(cli, "claim", "add", "Page", "Not yet known")  # unsupported is a valid state
    # The rules hold whichever method writes the note: a frontmatter edit cannot accept it either.
    assert refused(cli, "set", unsupported["detail"]["claim"], "--set", '{"state": "accepted"}') == ["V21"]
    synthetic = write_input(home, "gen.txt", b"a model wrote this\n")
    gen = ok(cli, "capture", str(synthetic), "--synthetic")["detail"]["sources"][0]["note"]
    assert refused(cli, "claim", "update", unsupported["detail"]["claim"], "--state", "accepted", "--support", gen) == ["V21"]
    # Retracting a source leaves the accepted claim unsupported: the evidence check says so.
    ok(cli, "set", three, "--set", '{"state": "retracted"}')
    weak = json.loads(cli("evidence", "--fresh", "--json").out)["claims"]
    assert [(c["path"], c["verdict"]) for c in weak] == [(claim, "under-supported")]
    page = ok(cli, "evidence", "Page")
    assert {c["claim"] for c in page["claims"]} == {"Risky but sourced", "Not yet known"}


def test_contradictions_stay_visible(vault: Path, home: Home, cli: Any) -> None:
    one = _source(cli, home, "one.txt", "https://a.example/1")
    against = _source(cli, home, "against.txt", "https://b.example/2")
    claim = ok(cli, "claim", "add", "Page", "Disputed thing", "--support", one)["detail"]["claim"]
    ok(cli, "claim", "update", claim, "--contradicted-by", against, "--state", "disputed")
    shown = ok(cli, "evidence", "Page")["claims"][0]
    assert [c["path"] for c in shown["contradictions"]] == [against] and shown["state"] == "disputed"
    text = cli("evidence", "Page").out
    assert "contradicted by: " + against in text


def test_reference_identifiers(vault: Path, home: Home, cli: Any) -> None:
    paper = write_input(home, "attention.txt", b"attention\n")
    src = ok(cli, "capture", str(paper), "--doi", "10.5555/ABC.Def", "--arxiv", "1706.03762v7", "--citekey", "Vaswani2017")
    note = src["detail"]["sources"][0]["note"]
    assert "doi: 10.5555/abc.def" in (vault / note).read_text(), "a DOI is stored lowercase"
    for query in ("10.5555/abc.DEF", "https://doi.org/10.5555/ABC.DEF", "vaswani2017", "1706.03762", "1706.03762v2"):
        hits = ok(cli, "search", query, "--fresh")["hits"]
        assert hits and hits[0]["path"] == note, query
    other = write_input(home, "other.txt", b"other\n")
    assert refused(cli, "capture", str(other), "--citekey", "VASWANI2017") == ["V24"]
    assert refused(cli, "new", "ref", "--set", '{"citekey": "vaswani2017"}') == ["V24"]
    created = ok(cli, "new", "ref2", "--set", '{"doi": "10.7777/UPPER"}')
    assert "doi: 10.7777/upper" in (vault / created["changes"][0]["path"]).read_text()


def test_pdf_capture_reads_its_metadata(vault: Path, home: Home, cli: Any) -> None:
    import io

    import pypdf

    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=100, height=100)
    writer.add_metadata({"/Title": "A Paper Title", "/Author": "Ada"})
    out = io.BytesIO()
    writer.write(out)
    src = ok(cli, "capture", str(write_input(home, "scan.pdf", out.getvalue())), "--ocr")
    pdf, ocr = src["detail"]["sources"]
    assert pdf["kind"] == "pdf" and pdf["metadata"]["doc_title"] == "A Paper Title" and pdf["note"] == "sources/A-Paper-Title.md"
    assert ocr["kind"] == "ocr-plan" and "text recognition" in (vault / ocr["note"]).read_text()
    assert f"![[{pdf['raw']}]]" in (vault / pdf["note"]).read_text()


def test_inline_data_is_bounded(vault: Path, typed: TypedClient) -> None:
    from protocol.limits import MAX_INLINE_CAPTURE_BYTES

    typed.call(VAULT_LIST, Empty())
    too_big = base64.b64encode(b"x" * (MAX_INLINE_CAPTURE_BYTES + 1)).decode()
    with pytest.raises(CallError) as over:
        typed.call(CAPTURE, CaptureParams(items=[CaptureItem(data=too_big)]))
    assert over.value.data.code in (ErrorCode.INVALID_PARAMS, ErrorCode.LIMIT)
    at_bound = base64.b64encode(b"y" * MAX_INLINE_CAPTURE_BYTES).decode()
    typed.call(CAPTURE, CaptureParams(items=[CaptureItem(data=at_bound, name="y.bin")]))
    with pytest.raises(CallError) as both:
        typed.call(CAPTURE, CaptureParams(items=[CaptureItem(text="a", url="https://example.com/")]))
    assert both.value.data.code is ErrorCode.INVALID_PARAMS
