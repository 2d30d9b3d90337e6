"""A file's kind and media type by its extension, and the files a canvas's file nodes name."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.files import FileKind
from vaultd.vault.files import TEXT_KINDS, canvas_files, extension, file_kind, mime_type


@pytest.mark.parametrize(
    ("path", "kind", "mime"),
    [
        ("Note.md", FileKind.NOTE, "text/markdown"),
        ("a/b/Photo.JPG", FileKind.IMAGE, "image/jpeg"),
        ("x.png", FileKind.IMAGE, "image/png"),
        ("scan.pdf", FileKind.PDF, "application/pdf"),
        ("voice.m4a", FileKind.AUDIO, "audio/mp4"),
        ("clip.webm", FileKind.VIDEO, "video/webm"),
        ("board.canvas", FileKind.CANVAS, "application/json"),
        ("People.base", FileKind.BASE, "application/yaml"),
        ("notes.txt", FileKind.TEXT, "text/plain"),
        ("snippets/x.css", FileKind.TEXT, "text/css"),
        ("data.json", FileKind.TEXT, "application/json"),
        ("archive.zip", FileKind.OTHER, "application/octet-stream"),
        ("Makefile", FileKind.OTHER, "application/octet-stream"),
        (".png", FileKind.OTHER, "application/octet-stream"),  # a dot file, not a png
        ("folder.png/readme", FileKind.OTHER, "application/octet-stream"),
    ],
)
def test_kinds_and_media_types_by_extension(path: str, kind: FileKind, mime: str) -> None:
    assert file_kind(path) is kind
    assert mime_type(path) == mime


@given(st.text(alphabet="abcXYZ ._-/", max_size=20))
def test_every_path_has_one_kind_and_a_media_type(path: str) -> None:
    kind = file_kind(path)
    assert kind in FileKind
    assert "/" in mime_type(path)
    assert extension(path) == extension(path.upper()).lower()
    assert (kind in TEXT_KINDS) == (kind in {FileKind.NOTE, FileKind.CANVAS, FileKind.BASE, FileKind.TEXT})


def test_a_canvas_names_the_files_of_its_file_nodes_only() -> None:
    doc = {
        "nodes": [
            {"id": "a", "type": "file", "file": "img/a.png", "x": 0, "y": 0, "width": 1, "height": 1},
            {"id": "b", "type": "text", "text": "![[img/b.png]]", "x": 0, "y": 0, "width": 1, "height": 1},
            {"id": "c", "type": "group", "label": "img/c.png", "x": 0, "y": 0, "width": 1, "height": 1},
            {"id": "d", "type": "file", "file": 3},
            "not a node",
        ]
    }
    assert canvas_files(json.dumps(doc)) == ["img/a.png"]
    assert canvas_files("[]") == [] and canvas_files('{"nodes": {}}') == []
    with pytest.raises(ValueError):
        canvas_files("{")
