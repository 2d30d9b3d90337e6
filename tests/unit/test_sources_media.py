"""Media types from bytes and names, format metadata read locally, and Obsidian's attachment folder."""

from __future__ import annotations

import io
import zipfile

import pypdf
from PIL import Image

from protocol.methods.sources import SourceKind
from vaultd.ops.sources.attachments import attachment_folder
from vaultd.sources.media import metadata, sniff


def _pdf() -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_blank_page(width=200, height=200)
    writer.add_metadata({"/Title": "Attention\nIs All", "/Author": "A. Author", "/CreationDate": "D:20170612000000Z"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _epub() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr(
            "META-INF/container.xml",
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf"/></rootfiles></container>',
        )
        z.writestr(
            "OEBPS/content.opf",
            '<package xmlns="http://www.idpf.org/2007/opf"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            "<dc:title>A Book</dc:title><dc:creator>Someone</dc:creator><dc:language>en</dc:language></metadata></package>",
        )
    return out.getvalue()


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2)).save(out, format="PNG")
    return out.getvalue()


def test_pdf_metadata_is_read_locally() -> None:
    data = _pdf()
    media = sniff(data, "whatever.bin")
    assert (media.media_type, media.kind, media.ext) == ("application/pdf", SourceKind.PDF, "pdf")
    meta = metadata(data, media)
    assert meta.problem is None
    assert meta.fields == {"doc_pages": "2", "doc_title": "Attention Is All", "doc_author": "A. Author", "doc_created": "2017-06-12"}


def test_epub_and_image_metadata() -> None:
    epub = _epub()
    assert sniff(epub, None).kind is SourceKind.EPUB
    assert metadata(epub, sniff(epub, None)).fields == {"doc_title": "A Book", "doc_author": "Someone", "doc_language": "en"}
    png = _png()
    assert sniff(png, "x.png").media_type == "image/png"
    assert metadata(png, sniff(png, "x.png")).fields == {"doc_size": "3x2"}


def test_broken_documents_keep_their_bytes_without_metadata() -> None:
    broken = b"%PDF-1.7\n" + b"\x00garbage" * 10
    meta = metadata(broken, sniff(broken, "x.pdf"))
    assert meta.fields.get("doc_title") is None and meta.problem is not None
    bomb = _epub().replace(b"<dc:title>", b"<!DOCTYPE x [<!ENTITY a 'b'>]><dc:title>")
    refused = metadata(bomb, sniff(bomb, None))
    assert refused.fields == {} and refused.problem is not None


def test_text_and_markdown_never_become_notes() -> None:
    assert sniff(b"# A note\n", "paper.md").ext == "txt"
    assert sniff(b"plain", "notes.txt").media_type == "text/plain"
    assert sniff(b"\x00\x01\x02", "blob.bin").kind is SourceKind.FILE


def test_attachment_folder_follows_obsidian() -> None:
    assert attachment_folder(None, "sources") == ("", None)
    assert attachment_folder("/", "sources") == ("", None)
    assert attachment_folder("./", "sources") == ("sources", None)
    assert attachment_folder("./raw", "sources") == ("sources/raw", None)
    assert attachment_folder("assets/files/", "sources") == ("assets/files", None)
    folder, warning = attachment_folder("../outside", "sources")
    assert folder == "sources" and warning is not None
    assert attachment_folder(".obsidian/x", "sources")[1] is not None
