"""Every file of a vault, not only its notes: listed with its kind and embeds, read within bounds,
moved and renamed with every embed rewritten (notes, canvases) in the vault's link format, deleted
to the trash and restored by undo byte for byte, written only as a valid canvas or base. Through
the real vaultctl, vaultctl's socket client and the official MCP SDK client."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_NOTE_BYTES, MAX_READ_PAGE_BYTES
from protocol.methods import files
from protocol.methods.files import (
    MAX_FILE_BYTES_PAGE,
    FileDeleteParams,
    FileEncoding,
    FileKind,
    FileListParams,
    FileMoveParams,
    FileReadParams,
    FileRenameParams,
    FileWriteParams,
)
from protocol.methods.reads import LINKS, LinksParams
from protocol.methods.writes import UNDO, UndoParams
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, snapshot
from tests.support.typed import TypedClients, applied, refused, two_step

if TYPE_CHECKING:
    from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8 + b"\xff\xfe\x00binary"
RED_DOT = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


BASE_NAMING_DIAGRAM = """# pages showing the diagram
filters:
  and:
    - file.hasLink("diagram.png")
formulas:
  picture: file("attachments/diagram.png")
views:
  - type: table
    name: With the diagram
"""


def _canvas(*files_: str) -> str:
    nodes = [{"id": f"n{i}", "type": "file", "file": f, "x": 0, "y": i * 10, "width": 100, "height": 100} for i, f in enumerate(files_)]
    nodes.append({"id": "t", "type": "text", "text": "a text node", "x": 200, "y": 0, "width": 100, "height": 50})
    return json.dumps({"nodes": nodes, "edges": [{"id": "e", "fromNode": "n0", "toNode": "t"}]}, indent="\t")


def _vault(home: Home, cli: Any, contents: dict[str, str | bytes], *add: str) -> Path:
    root = home.root / "vault"
    for rel, data in contents.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            (root / rel).write_bytes(data)
        else:
            (root / rel).write_text(data)
    added = cli("vault", "add", "v", str(root), *add, "--json")
    assert added.code == 0, added.err
    return root


def _without_log(found: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in found.items() if k != "log.md"}


def _confirm(cli: Any, preview: Any) -> dict[str, Any]:
    """Run the confirm command a CLI preview printed; the applied receipt."""
    assert preview.code == 0, preview.err
    line = next(line.strip() for line in preview.out.splitlines() if "--confirm" in line)
    argv = shlex.split(line)
    assert argv[0] == "vaultctl"
    done = cli(*argv[1:], "--json")
    assert done.code == 0, done.err
    receipt: dict[str, Any] = done.json()
    assert receipt["outcome"] == "applied"
    return receipt


def test_an_image_renamed_with_50_embeds_in_notes_and_canvases_leaves_no_broken_embed(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    contents: dict[str, str | bytes] = {
        "attachments/diagram.png": PNG,
        # Another file will share the new name: a bare embed cannot stay bare, and the vault's
        # link format (shortest: the vault path) decides what it becomes.
        "other/flow.png": PNG[:40],
        ".obsidian/app.json": '{"newLinkFormat": "shortest", "attachmentFolderPath": "attachments"}',
    }
    for i in range(20):
        contents[f"notes/n{i:02}.md"] = f"# N{i}\n\n![[diagram.png]]\n\nsee ![[diagram.png|300]] too\n"
    for i in range(10):
        contents[f"deep/a/m{i:02}.md"] = f"# M{i}\n\n![diagram](../../attachments/diagram.png)\n"
    for i in range(10):
        contents[f"p{i:02}.md"] = f"# P{i}\n\n![[attachments/diagram.png]] and [[attachments/diagram.png|the diagram]]\n"
    for i in range(10):
        contents[f"boards/b{i:02}.canvas"] = _canvas("attachments/diagram.png", f"p{i:02}.md")
    contents["views/Images.base"] = BASE_NAMING_DIAGRAM
    root = _vault(home, cli, contents)
    before = snapshot(root)

    listed = cli("files", "--kind", "image", "--json")
    assert listed.code == 0, listed.err
    images = {f["path"]: f for f in listed.json()["files"]}
    assert images["attachments/diagram.png"]["embedded_by"] == 50  # 40 notes, 10 canvases
    assert images["attachments/diagram.png"]["size"] == len(PNG)
    assert images["other/flow.png"]["embedded_by"] == 0

    receipt = _confirm(cli, cli("file", "rename", "attachments/diagram.png", "flow.png"))
    assert receipt["detail"]["from"] == "attachments/diagram.png" and receipt["detail"]["to"] == "attachments/flow.png"
    assert len(receipt["detail"]["rewritten"]) == 51  # 40 notes, 10 canvases, the base
    assert (root / "attachments/flow.png").read_bytes() == PNG
    assert not (root / "attachments/diagram.png").exists()
    assert (root / "notes/n03.md").read_text() == "# N3\n\n![[attachments/flow.png]]\n\nsee ![[attachments/flow.png|300]] too\n"
    assert (root / "deep/a/m04.md").read_text() == "# M4\n\n![diagram](../../attachments/flow.png)\n"
    assert (root / "p05.md").read_text() == "# P5\n\n![[attachments/flow.png]] and [[attachments/flow.png|the diagram]]\n"
    canvas = (root / "boards/b07.canvas").read_text()
    assert canvas == before["boards/b07.canvas"].decode().replace('"attachments/diagram.png"', '"attachments/flow.png"')
    assert (root / "other/flow.png").read_bytes() == before["other/flow.png"]
    assert (root / "views/Images.base").read_text() == BASE_NAMING_DIAGRAM.replace(
        'file.hasLink("diagram.png")', 'file.hasLink("attachments/flow.png")'
    ).replace('file("attachments/diagram.png")', 'file("attachments/flow.png")')

    client = typed_clients.open(home)
    for note in ("notes/n00.md", "deep/a/m09.md", "p09.md"):
        assert not client.call(LINKS, LinksParams(target=note, fresh=True)).dead
    after = client.call(files.LIST, FileListParams(kind=FileKind.IMAGE, fresh=True))
    assert {f.path: f.embedded_by for f in after.files} == {"attachments/flow.png": 50, "other/flow.png": 0}

    # One operation: its undo puts back every byte of the image, the notes and the canvases.
    applied(client.call(UNDO, UndoParams(op_id=receipt["op_id"])))
    assert _without_log(snapshot(root)) == _without_log(before)


def test_the_markdown_link_format_shapes_rewritten_embeds_and_a_move_into_a_folder(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    contents: dict[str, str | bytes] = {
        "img/photo.jpg": PNG,
        "misc/photo2.jpg": PNG,
        "a.md": "# A\n\n![[photo.jpg]]\n",
        ".obsidian/app.json": '{"newLinkFormat": "relative", "useMarkdownLinks": true}',
    }
    root = _vault(home, cli, contents)
    client = typed_clients.open(home)
    # Moved into a folder that already has a file of the name it is renamed to later.
    _, done = two_step(client, files.MOVE, FileMoveParams(target="img/photo.jpg", to="media/"))
    assert done.detail.to == "media/photo.jpg"
    assert (root / "a.md").read_text() == "# A\n\n![[photo.jpg]]\n"  # still the one file of that name: left alone
    _, done = two_step(client, files.RENAME, FileRenameParams(target="media/photo.jpg", name="photo2.jpg"))
    # The bare name is now two files': relative, as the vault writes new links.
    assert (root / "a.md").read_text() == "# A\n\n![[./media/photo2.jpg]]\n"
    assert not client.call(LINKS, LinksParams(target="a.md", fresh=True)).dead


def test_a_deleted_attachment_is_refused_while_embedded_and_restored_by_undo_byte_identical(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    root = _vault(
        home,
        cli,
        {
            "attachments/diagram.png": PNG,
            "Note.md": "# Note\n\n![[diagram.png]]\n",
            "board.canvas": _canvas("attachments/diagram.png"),
            "attachments/unused.pdf": b"%PDF-1.4\n" + bytes(range(256)),
        },
    )
    os.chmod(root / "attachments/diagram.png", 0o640)
    before = snapshot(root)
    client = typed_clients.open(home)
    with refused(ErrorCode.VALIDATION, IssueCode.V03) as refusal:
        client.call(files.DELETE, FileDeleteParams(target="attachments/diagram.png"))
    assert {i.path for i in refusal.data.issues} == {"Note.md", "board.canvas"}
    assert snapshot(root) == before

    # The CLI names the file command when asked to delete a file as a note.
    as_note = cli("delete", "attachments/diagram.png")
    assert as_note.code != 0
    assert "vaultctl file" in as_note.err

    orphans = cli("files", "--orphaned", "--json")
    assert orphans.code == 0, orphans.err
    assert [f["path"] for f in orphans.json()["files"]] == ["attachments/unused.pdf", "board.canvas"]  # notes are not attachments

    _, done = two_step(client, files.DELETE, FileDeleteParams(target="attachments/diagram.png", force=True))
    assert done.detail.trash == ".trash/attachments/diagram.png"
    assert sorted(done.detail.backlinks) == ["Note.md", "board.canvas"]
    assert (root / ".trash/attachments/diagram.png").read_bytes() == PNG
    assert not (root / "attachments/diagram.png").exists()
    assert "attachments/diagram.png" not in {f.path for f in client.call(files.LIST, FileListParams(fresh=True)).files}

    applied(client.call(UNDO, UndoParams(op_id=done.op_id)))
    assert (root / "attachments/diagram.png").read_bytes() == PNG
    assert (root / "attachments/diagram.png").stat().st_mode & 0o777 == 0o640
    assert _without_log(snapshot(root)) == _without_log(before)

    # A second delete of the same name lands beside the first in the trash, as Obsidian names it.
    (root / ".trash/attachments").mkdir(parents=True, exist_ok=True)
    (root / ".trash/attachments/diagram.png").write_bytes(b"older")
    _, again = two_step(client, files.DELETE, FileDeleteParams(target="attachments/diagram.png", force=True))
    assert again.detail.trash == ".trash/attachments/diagram 1.png"


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def test_a_200_mb_image_is_read_in_bounded_pages_and_never_whole(daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    root = _vault(home, cli, {"Note.md": "# Note\n\n![[huge.png]]\n"})
    size = 200 * 1024 * 1024
    with open(root / "huge.png", "wb") as huge:
        huge.write(PNG[:64])
        huge.truncate(size)  # sparse: the disk holds almost nothing
        huge.seek(size - 8)
        huge.write(b"THE-END!")
    client = typed_clients.open(home)
    peak_before = _peak_rss_kib(daemon.pid)

    first = client.call(files.READ, FileReadParams(target="huge.png", fresh=True))
    assert first.kind is FileKind.IMAGE and first.mime == "image/png" and first.size == size
    assert first.encoding is FileEncoding.BASE64 and first.truncated and first.sha256 is None
    assert base64.b64decode(first.content)[:64] == PNG[:64]
    assert first.next_offset == len(base64.b64decode(first.content)) == files.DEFAULT_FILE_BYTES_PAGE
    assert first.embedded_by == 1

    at_bound = client.call(files.READ, FileReadParams(target="huge.png", offset=1024, max_bytes=MAX_FILE_BYTES_PAGE))
    assert len(base64.b64decode(at_bound.content)) == MAX_FILE_BYTES_PAGE and at_bound.next_offset == 1024 + MAX_FILE_BYTES_PAGE
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.READ, FileReadParams(target="huge.png", max_bytes=MAX_FILE_BYTES_PAGE + 1))

    last = client.call(files.READ, FileReadParams(target="huge.png", offset=size - 8))
    assert base64.b64decode(last.content) == b"THE-END!" and last.next_offset is None and not last.truncated
    empty = client.call(files.READ, FileReadParams(target="huge.png", offset=size))
    assert empty.content == "" and empty.next_offset is None
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.READ, FileReadParams(target="huge.png", offset=size + 1))

    # The daemon's peak memory did not grow by anything like the file's size.
    assert _peak_rss_kib(daemon.pid) - peak_before < 64 * 1024

    # Moving it would journal 200 MB: refused as over a bound, nothing written.
    before = snapshot(root)
    with refused(ErrorCode.LIMIT):
        client.call(files.MOVE, FileMoveParams(target="huge.png", to="big/huge.png"))
    assert snapshot(root).keys() == before.keys()

    # The CLI saves it whole, page by page, to a local file.
    out = home.root / "copy.png"
    saved = cli("file", "read", "huge.png", "--out", str(out))
    assert saved.code == 0, saved.err
    assert out.stat().st_size == size
    with open(out, "rb") as copy:
        assert copy.read(64) == PNG[:64]
        copy.seek(size - 8)
        assert copy.read() == b"THE-END!"


BAD_CANVASES = [
    pytest.param("{not json", id="not-json"),
    pytest.param("[]", id="an-array"),
    pytest.param('{"nodes": [{"type": "text", "text": "x", "x": 0, "y": 0, "width": 1, "height": 1}]}', id="node-without-id"),
    pytest.param('{"nodes": [{"id": "a", "type": "shape", "x": 0, "y": 0, "width": 1, "height": 1}]}', id="unknown-node-type"),
    pytest.param('{"nodes": [{"id": "a", "type": "file", "x": 0, "y": 0, "width": 1, "height": 1}]}', id="file-node-without-file"),
    pytest.param('{"nodes": [{"id": "a", "type": "text", "text": "x", "x": 0.5, "y": 0, "width": 1, "height": 1}]}', id="float-x"),
    pytest.param('{"nodes": [], "edges": [{"id": "e", "fromNode": "a", "toNode": "b"}]}', id="edge-to-no-node"),
    pytest.param(
        '{"nodes": [{"id": "a", "type": "text", "text": "x", "x": 0, "y": 0, "width": 1, "height": 1},'
        '{"id": "a", "type": "text", "text": "y", "x": 0, "y": 0, "width": 1, "height": 1}]}',
        id="duplicate-id",
    ),
    pytest.param('{"nodes": [{"id": "a", "type": "group", "x": 0, "y": 0, "width": 1, "height": 1, "color": "red"}]}', id="bad-color"),
]


@pytest.mark.parametrize("content", BAD_CANVASES)
def test_a_canvas_write_that_is_not_json_canvas_is_refused_and_nothing_written(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients, content: str
) -> None:
    root = _vault(home, cli, {"board.canvas": _canvas("Note.md"), "Note.md": "# Note\n"})
    before = snapshot(root)
    client = typed_clients.open(home)
    with refused(ErrorCode.VALIDATION, IssueCode.V30):
        client.call(files.WRITE, FileWriteParams(path="board.canvas", content=content))
    with refused(ErrorCode.VALIDATION, IssueCode.V30):
        client.call(files.WRITE, FileWriteParams(path="new.canvas", content=content))
    assert snapshot(root) == before


def test_file_write_creates_and_replaces_text_files_compared_and_swapped(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    root = _vault(home, cli, {"Note.md": "# Note\n", "notes.txt": "first\n", ".obsidian/app.json": "{}"})
    client = typed_clients.open(home)
    good = _canvas("Note.md")
    applied(client.call(files.WRITE, FileWriteParams(path="maps/board.canvas", content=good)))
    assert (root / "maps/board.canvas").read_text() == good
    # A base with Obsidian's keys is written; one with another top-level key is refused.
    base = 'filters:\n  and:\n    - file.inFolder("notes")\nviews:\n  - type: table\n    name: All\n'
    applied(client.call(files.WRITE, FileWriteParams(path="All.base", content=base)))
    with refused(ErrorCode.VALIDATION, IssueCode.V30):
        client.call(files.WRITE, FileWriteParams(path="Other.base", content="views: []\nquery: x\n"))
    with refused(ErrorCode.VALIDATION, IssueCode.V30):
        client.call(files.WRITE, FileWriteParams(path="Other.base", content="views: {type: table}\n"))
    assert not (root / "Other.base").exists()

    # Compare and swap: the sha the read gave, or nothing replaces it.
    read = client.call(files.READ, FileReadParams(target="notes.txt"))
    assert read.encoding is FileEncoding.TEXT and read.content == "first\n" and read.sha256 is not None
    with refused(ErrorCode.CONFLICT):
        client.call(files.WRITE, FileWriteParams(path="notes.txt", content="x\n", expected_sha="0" * 64))
    with refused(ErrorCode.CONFLICT):
        client.call(files.WRITE, FileWriteParams(path="notes.txt", content="x\n", create_only=True))
    with refused(ErrorCode.CONFLICT):
        client.call(files.WRITE, FileWriteParams(path="notes.txt", content="x\n", expected_mtime_ns=read.mtime_ns + 1))
    assert (root / "notes.txt").read_text() == "first\n"
    done = applied(client.call(files.WRITE, FileWriteParams(path="notes.txt", content="second\n", expected_sha=read.sha256[:12])))
    assert (root / "notes.txt").read_text() == "second\n"
    applied(client.call(UNDO, UndoParams(op_id=done.op_id)))
    assert (root / "notes.txt").read_text() == "first\n"

    # Notes have their own writes; .obsidian/ is Obsidian's; binary kinds are moved, not written.
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.WRITE, FileWriteParams(path="Note.md", content="# x\n"))
    with refused(ErrorCode.VALIDATION, IssueCode.V04):
        client.call(files.WRITE, FileWriteParams(path=".obsidian/app.json", content='{"useMarkdownLinks": true}'))
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.WRITE, FileWriteParams(path="x.png", content="not an image"))
    assert (root / ".obsidian/app.json").read_text() == "{}"


def test_vaultctl_shows_lists_and_reads_files_that_are_not_notes(daemon: Daemon, home: Home, cli: Any) -> None:
    canvas = _canvas("Note.md")
    _vault(home, cli, {"Note.md": "# Note\n\n![[pic.png]]\n", "notes.txt": "plain text\n", "x.canvas": canvas, "pic.png": PNG})
    shown = cli("show", "notes.txt")
    assert shown.code == 0, shown.err
    assert shown.out == "plain text\n"
    shown = cli("show", "x.canvas")
    assert shown.code == 0, shown.err
    assert json.loads(shown.out) == json.loads(canvas)
    binary = cli("show", "pic.png")
    assert binary.code != 0 and "vaultctl file read" in binary.err
    missing = cli("show", "nothing-here.txt")
    assert missing.code != 0 and "no note" in missing.err

    listed = cli("files")
    assert listed.code == 0, listed.err
    for path in ("Note.md", "notes.txt", "x.canvas", "pic.png"):
        assert path in listed.out
    pic = cli("file", "read", "pic.png", "--json")
    assert pic.code == 0, pic.err
    body = pic.json()
    assert body["mime"] == "image/png" and base64.b64decode(body["content"]) == PNG
    assert body["sha256"] == hashlib.sha256(PNG).hexdigest() and body["embedded_by"] == 1


async def test_an_agent_sees_an_image_lists_files_and_its_deletes_are_proposed_private_files_never_named(
    daemon: Daemon, home: Home, cli: Any
) -> None:
    root = _vault(
        home,
        cli,
        {"pics/dot.png": RED_DOT, "Note.md": "# Note\n\n![[dot.png]]\n", "private/secret.png": RED_DOT, "private/plan.txt": "hidden\n"},
        "--private",
        "private/**",
    )
    before = snapshot(root)
    async with agent(home) as client:
        listed = ok(await client.call_tool("file_list", {}))
        assert {f["path"] for f in listed["files"]} == {"pics/dot.png", "Note.md"}
        result = await client.call_tool("file_read", {"target": "pics/dot.png"})
        assert not result.is_error, result.content
        images = [c for c in result.content if c.type == "image"]
        assert len(images) == 1 and images[0].mime_type == "image/png" and base64.b64decode(images[0].data) == RED_DOT
        for private in ("private/plan.txt", "private/secret.png", "secret.png"):
            hidden = await client.call_tool("file_read", {"target": private})
            assert hidden.is_error and "NOT_FOUND" in str(hidden.content[0])
        deleted = await client.call_tool("file_delete", {"target": "pics/dot.png", "force": True})
        preview = ok(deleted)
        assert preview["outcome"] == "preview"
        confirm = {"target": "pics/dot.png", "force": True, "confirm": True, "fingerprint": preview["fingerprint"]}
        proposed = ok(await client.call_tool("file_delete", confirm))
        assert proposed["outcome"] == "proposed"
        renamed = ok(await client.call_tool("file_move", {"target": "pics/dot.png", "to": "pics/red.png"}))
        assert renamed["outcome"] == "preview"  # file_move is propose by default: the confirm would propose too
    assert snapshot(root) == before
    # A person applies the agent's proposal: the file goes to the trash, and undo brings it back.
    done = cli("proposals", "apply", proposed["proposal"], "--json")
    assert done.code == 0, done.err
    assert done.json()["outcome"] == "applied"
    assert not (root / "pics/dot.png").exists() and (root / ".trash/pics/dot.png").read_bytes() == RED_DOT
    assert cli("undo", done.json()["op_id"]).code == 0
    assert _without_log(snapshot(root)) == _without_log(before)


def test_the_file_list_follows_the_disk_through_the_watcher(daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    root = _vault(home, cli, {"Note.md": "# Note\n", "board.canvas": _canvas("Note.md")})
    client = typed_clients.open(home)
    assert {f.path for f in client.call(files.LIST, FileListParams(fresh=True)).files} == {"Note.md", "board.canvas"}
    (root / "scans").mkdir()
    (root / "scans/page.PDF").write_bytes(b"%PDF-1.7\n")
    (root / "clip.mp3").write_bytes(b"ID3")
    listed = {f.path: f for f in client.call(files.LIST, FileListParams(fresh=True)).files}
    assert listed["scans/page.PDF"].kind is FileKind.PDF and listed["scans/page.PDF"].size == 9
    assert listed["clip.mp3"].kind is FileKind.AUDIO and listed["scans/page.PDF"].embedded_by == 0
    # A canvas edited on disk: its new file node counts at once; a note's new embed too.
    (root / "board.canvas").write_text(_canvas("Note.md", "scans/page.PDF"))
    (root / "Note.md").write_text("# Note\n\n![[page.PDF]]\n")
    listed = {f.path: f for f in client.call(files.LIST, FileListParams(fresh=True)).files}
    assert listed["scans/page.PDF"].embedded_by == 2
    (root / "clip.mp3").unlink()
    assert "clip.mp3" not in {f.path for f in client.call(files.LIST, FileListParams(fresh=True)).files}


def test_the_file_list_filters_and_pages(daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    contents: dict[str, str | bytes] = {f"img/{i:03}.png": PNG[:20] for i in range(12)}
    contents |= {"docs/a.pdf": b"%PDF", "docs/deep/b.pdf": b"%PDF", "Note.md": "# Note\n", "imgx.png": PNG[:20]}
    _vault(home, cli, contents)
    client = typed_clients.open(home)
    pdfs = client.call(files.LIST, FileListParams(kind=FileKind.PDF))
    assert [f.path for f in pdfs.files] == ["docs/a.pdf", "docs/deep/b.pdf"] and pdfs.total == 2
    assert [f.path for f in client.call(files.LIST, FileListParams(folder="docs/deep")).files] == ["docs/deep/b.pdf"]
    assert [f.path for f in client.call(files.LIST, FileListParams(folder="img", glob="**/01*.png")).files] == [
        "img/010.png",
        "img/011.png",
    ]
    assert "imgx.png" not in {f.path for f in client.call(files.LIST, FileListParams(folder="img")).files}
    seen: list[str] = []
    cursor = None
    while True:
        page = client.call(files.LIST, FileListParams(kind=FileKind.IMAGE, limit=5, cursor=cursor))
        seen += [f.path for f in page.files]
        assert page.total == 13
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == sorted(seen) and len(seen) == 13
    assert len(client.call(files.LIST, FileListParams(limit=500)).files) == 16
    with refused(ErrorCode.INVALID_PARAMS):
        client.call_with(files.LIST, {"limit": 501})
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.LIST, FileListParams(cursor="!!not-ours"))


def test_bad_targets_are_refused_clearly(daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    root = _vault(home, cli, {"Note.md": "# Note\n", "pic.png": PNG, "other.png": PNG[:10]})
    (root / "link.png").symlink_to(root / "pic.png")
    before = snapshot(root)
    client = typed_clients.open(home)
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.READ, FileReadParams(target="pic\x00.png"))
    with refused(ErrorCode.NOT_FOUND):
        client.call(files.READ, FileReadParams(target="link.png"))  # a symlink is never followed
    with refused(ErrorCode.NOT_FOUND):
        client.call(files.READ, FileReadParams(target=".obsidian/app.json"))
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.DELETE, FileDeleteParams(target="Note.md"))  # a note has note.delete
    with refused(ErrorCode.VALIDATION, IssueCode.V08):
        client.call(files.MOVE, FileMoveParams(target="pic.png", to="other.png"))
    with refused(ErrorCode.VALIDATION, IssueCode.V04):
        client.call(files.MOVE, FileMoveParams(target="pic.png", to="pic.md"))  # a file does not become a note
    with refused(ErrorCode.VALIDATION, IssueCode.V04):
        client.call(files.MOVE, FileMoveParams(target="pic.png", to="../outside.png"))
    with refused(ErrorCode.VALIDATION, IssueCode.V04):
        client.call(files.MOVE, FileMoveParams(target="pic.png", to=".obsidian/pic.png"))
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.RENAME, FileRenameParams(target="pic.png", name="sub/pic.png"))
    with refused(ErrorCode.CONFLICT):
        client.call(files.MOVE, FileMoveParams(target="pic.png", to="moved.png", expected_sha="0" * 12))
    with refused(ErrorCode.CONFLICT):
        client.call(files.DELETE, FileDeleteParams(target="other.png", expected_mtime_ns=1))
    as_note = cli("move", "pic.png", "elsewhere.png")
    assert as_note.code != 0 and "vaultctl file" in as_note.err
    assert snapshot(root) == before


async def test_a_vault_policy_keeps_agents_from_reading_files(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli, {"Note.md": "# Note\n", "pic.png": RED_DOT})
    preview = cli("vault", "policy", "v", "file_read=refuse", "file_write=refuse")
    assert preview.code == 0, preview.err
    line = next(line.strip() for line in preview.out.splitlines() if "--confirm" in line)
    done = cli(*shlex.split(line)[1:])
    assert done.code == 0, done.err
    async with agent(home) as client:
        refusal = await client.call_tool("file_read", {"target": "pic.png"})
        assert refusal.is_error and "G02" in str(refusal.content[0]) and "file_read" in str(refusal.content[0])
        note = ok(await client.call_tool("file_read", {"target": "Note.md"}))  # a note is note.read's, not gated here
        assert note["content"] == "# Note\n"
        write = await client.call_tool("file_write", {"path": "a.txt", "content": "x"})
        assert write.is_error and "G02" in str(write.content[0])
    assert not (root / "a.txt").exists()
    assert cli("file", "read", "pic.png").code == 0  # people are not gated


def test_text_bounds_hold_at_their_edges(daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    root = _vault(home, cli, {"Note.md": "# Note\n", "at.txt": "a" * MAX_NOTE_BYTES, "past.txt": "a" * (MAX_NOTE_BYTES + 1)})
    client = typed_clients.open(home)
    at = client.call(files.READ, FileReadParams(target="at.txt", max_bytes=MAX_READ_PAGE_BYTES))
    assert at.encoding is FileEncoding.TEXT and len(at.content) == MAX_READ_PAGE_BYTES and at.sha256 is not None
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.READ, FileReadParams(target="at.txt", max_bytes=MAX_READ_PAGE_BYTES + 1))
    # One byte past the text bound, a text file is paged by its bytes like any large file.
    past = client.call(files.READ, FileReadParams(target="past.txt"))
    assert past.encoding is FileEncoding.BASE64 and past.sha256 is None and past.size == MAX_NOTE_BYTES + 1
    assert base64.b64decode(past.content) == b"a" * files.DEFAULT_FILE_BYTES_PAGE

    applied(client.call(files.WRITE, FileWriteParams(path="w.txt", content="é" * (MAX_NOTE_BYTES // 2))))
    assert (root / "w.txt").stat().st_size == MAX_NOTE_BYTES
    with refused(ErrorCode.LIMIT):  # within the params' character bound, one byte past the file's
        client.call(files.WRITE, FileWriteParams(path="w2.txt", content="é" * (MAX_NOTE_BYTES // 2) + "a"))
    with refused(ErrorCode.INVALID_PARAMS):
        client.call(files.WRITE, FileWriteParams(path="w3.txt", content="a" * (MAX_NOTE_BYTES + 1)))
    assert not (root / "w2.txt").exists() and not (root / "w3.txt").exists()


def test_a_moved_canvas_carries_its_own_links_and_undo_restores_it(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    text_node = {"id": "t", "type": "text", "text": "see [[../notes/Plan|the plan]] and [[Plan]]", "x": 0, "y": 0, "width": 9, "height": 9}
    file_node = {"id": "f", "type": "file", "file": "notes/Plan.md", "x": 0, "y": 20, "width": 9, "height": 9}
    canvas = json.dumps({"nodes": [text_node, file_node], "edges": []})
    root = _vault(home, cli, {"notes/Plan.md": "# Plan\n", "boards/map.canvas": canvas, "Home.md": "# Home\n\n![[map.canvas]]\n"})
    before = snapshot(root)
    client = typed_clients.open(home)
    _, done = two_step(client, files.MOVE, FileMoveParams(target="boards/map.canvas", to="archive/deep/"))
    assert done.detail.to == "archive/deep/map.canvas"
    moved = json.loads((root / "archive/deep/map.canvas").read_text())
    assert moved["nodes"][0]["text"] == "see [[../../notes/Plan|the plan]] and [[Plan]]"  # relative: follows the canvas
    assert moved["nodes"][1]["file"] == "notes/Plan.md"  # a vault path: stays
    assert (root / "Home.md").read_text() == "# Home\n\n![[map.canvas]]\n"  # still the one file of that name
    assert {c.path for c in done.changes} == {"boards/map.canvas", "archive/deep/map.canvas"}
    applied(client.call(UNDO, UndoParams(op_id=done.op_id)))
    assert _without_log(snapshot(root)) == _without_log(before)
