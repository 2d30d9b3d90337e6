"""What a captured file is, from its bytes and its name, and what its format's metadata says.

Read locally and offline: PDF metadata through pypdf, image dimensions through Pillow (both
the optional ``vaultd[media]`` extra, imported on first use), EPUB metadata from its package
document with the standard library. No text is extracted. A library that is missing, or a
document it cannot read, leaves the metadata empty with a reason; the capture goes on.
"""

from __future__ import annotations

import io
import mimetypes
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from typing import Final
from xml.etree import ElementTree

from protocol.methods.sources import SourceKind
from protocol.parse_limits import MAX_ZIP_ENTRIES
from vaultd.sources.pdf_probe import clean_field, probe

MAX_PACKAGE_XML_BYTES: Final = 1024 * 1024  #: an EPUB's container or package document, read at most
_EXT: Final = re.compile(r"\.([A-Za-z0-9]{1,10})$")
_TEXT_EXTS: Final = {"md": "text/markdown", "markdown": "text/markdown", "txt": "text/plain", "csv": "text/csv", "json": "application/json"}
#: Raw copies of text that Obsidian would take for a note get another extension, so the copy is
#: never indexed, linted or edited as a note.
_RAW_EXT: Final = {"md": "txt", "markdown": "txt"}
_DC: Final = "{http://purl.org/dc/elements/1.1/}"
_CENTRAL_ENTRY: Final = b"PK\x01\x02"  #: the signature each ZIP central directory entry starts with


@dataclass(frozen=True, slots=True)
class Media:
    media_type: str
    kind: SourceKind
    ext: str  #: the raw copy's extension, without the dot ("" for none)


@dataclass(slots=True)
class Metadata:
    fields: dict[str, str] = field(default_factory=dict)
    problem: str | None = None  #: why nothing (or not everything) could be read


def _name_ext(name: str | None) -> str:
    m = _EXT.search(name or "")
    return m.group(1).lower() if m else ""


def sniff(data: bytes, name: str | None) -> Media:
    """The media type and kind of ``data``: by its leading bytes first, then by its name."""
    ext = _name_ext(name)
    head = data[:64]
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return Media("application/pdf", SourceKind.PDF, "pdf")
    if head.startswith(b"PK\x03\x04") and head[30:58] == b"mimetypeapplication/epub+zip":
        return Media("application/epub+zip", SourceKind.EPUB, "epub")
    for magic, media_type, image_ext in (
        (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
        (b"\xff\xd8\xff", "image/jpeg", "jpg"),
        (b"GIF87a", "image/gif", "gif"),
        (b"GIF89a", "image/gif", "gif"),
    ):
        if head.startswith(magic):
            return Media(media_type, SourceKind.IMAGE, image_ext)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Media("image/webp", SourceKind.IMAGE, "webp")
    if b"\x00" not in data[:8192] and _is_utf8(data):
        media_type = _TEXT_EXTS.get(ext) or (mimetypes.guess_type(f"x.{ext}")[0] if ext else None) or "text/plain"
        return Media(media_type, SourceKind.TEXT, _RAW_EXT.get(ext, ext or "txt"))
    guessed = mimetypes.guess_type(f"x.{ext}")[0] if ext else None
    return Media(guessed or "application/octet-stream", SourceKind.FILE, ext)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def metadata(data: bytes, media: Media) -> Metadata:
    """What the format says about the document; never raises."""
    if media.kind is SourceKind.PDF:
        return _pdf(data)
    if media.kind is SourceKind.EPUB:
        return _epub(data)
    if media.kind is SourceKind.IMAGE:
        return _image(data)
    return Metadata()


def _pdf(data: bytes) -> Metadata:
    fields, problem = probe(data)  # in a child process, bounded in time and memory
    return Metadata(fields=fields, problem=problem)


def _image(data: bytes) -> Metadata:
    try:
        from PIL import Image
    except ImportError:
        return Metadata(problem="image metadata needs the optional 'vaultd[media]' extra (Pillow)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(data)) as image:  # reads the header only, never decodes pixels
                return Metadata(fields={"doc_size": f"{image.width}x{image.height}"})
    except Exception as exc:  # noqa: BLE001 - any unreadable image: kept without metadata
        return Metadata(problem=f"the image's header could not be read ({type(exc).__name__})")


def _xml(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    info = archive.getinfo(name)
    if info.file_size > MAX_PACKAGE_XML_BYTES:
        raise ValueError("package document too large")
    with archive.open(info) as fh:
        raw = fh.read(MAX_PACKAGE_XML_BYTES + 1)
    if len(raw) > MAX_PACKAGE_XML_BYTES or b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        raise ValueError("package document too large or declares entities")
    return ElementTree.fromstring(raw)


def _epub(data: bytes) -> Metadata:
    # zipfile builds one object per directory entry before anything else: a 63 MiB file of a
    # million empty entries would cost the daemon near a gigabyte. Every entry zipfile can read
    # starts with the central directory's signature, so counting it bounds them all, in C.
    if data.count(_CENTRAL_ENTRY) > MAX_ZIP_ENTRIES:
        return Metadata(problem=f"the EPUB's metadata was not read: its directory holds more than {MAX_ZIP_ENTRIES} entries")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            container = _xml(archive, "META-INF/container.xml")
            rootfile = next((el for el in container.iter() if el.tag.endswith("rootfile")), None)
            opf_path = rootfile.get("full-path") if rootfile is not None else None
            if not opf_path:
                return Metadata(problem="the EPUB names no package document")
            package = _xml(archive, opf_path)
    except ValueError as exc:  # a bound of _xml, or zipfile's own refusal: the reason says which
        return Metadata(problem=f"the EPUB's metadata could not be read ({exc})")
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, OSError, RuntimeError) as exc:
        return Metadata(problem=f"the EPUB's metadata could not be read ({type(exc).__name__})")
    out = Metadata()
    for key, tag in (("doc_title", "title"), ("doc_author", "creator"), ("doc_language", "language")):
        element = package.find(f".//{_DC}{tag}")
        if element is not None and (text := clean_field(element.text)) is not None:
            out.fields[key] = text
    return out
