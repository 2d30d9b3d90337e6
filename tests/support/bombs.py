"""Parser bombs: small files that cost an unbounded parser minutes, hours or gigabytes.

Shared by the parsers' unit tests, the daemon-level tests and the counted parser-bomb round
(:mod:`reliability.stress.parser_bombs`). Each builder is pure and imports nothing of vaultd, so
a test that uses one runs against any version of the daemon.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """The "billion laughs": each level lists the one before ``width`` times (600 bytes, 9^9 strings)."""
    names = [f"l{i}" for i in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['lol'] * width)}]"]
    lines += [f"{n}: &{n} [{', '.join([f'*{p}'] * width)}]" for p, n in zip(names, names[1:], strict=False)]
    return "\n".join(lines) + "\n"


def nested_flow(levels: int, key: str = "a") -> str:
    """One key whose value is ``levels`` flow sequences, one inside the other."""
    return f"{key}: " + "[" * levels + "x" + "]" * levels + "\n"


def nested_flow_maps(levels: int) -> str:
    return "a: " + "{a: " * levels + "x" + "}" * levels + "\n"


def nested_compact(levels: int) -> str:
    """``levels`` block sequences on one line (``- - - x``)."""
    return "a:\n  " + "- " * levels + "x\n"


def nested_maps(levels: int) -> str:
    """``levels`` mappings inside the root one, each in block style on its own line."""
    return "".join("  " * i + "a:\n" for i in range(levels)) + "  " * levels + "a: 1\n"


def nested_json(levels: int) -> str:
    return "[" * levels + "]" * levels


def deep_canvas(levels: int) -> str:
    return json.dumps({"nodes": [], "edges": []}).replace("[]", nested_json(levels), 1)


def header_note(header: str, body: str = "# Note\n\nBody.\n") -> str:
    return "---\n" + header + "---\n" + body


def unclosed_calls_line(calls: int) -> str:
    """A base whose one filter line opens ``link("`` ``calls`` times and never closes a quote."""
    return "filters:\n  - '" + 'link("' * calls + "'\n"


def epub_with_entries(extra: int, title: str = "T") -> bytes:
    """A readable EPUB whose directory holds ``extra`` more empty entries."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr(
            "META-INF/container.xml",
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="c.opf"/></rootfiles></container>',
        )
        z.writestr(
            "c.opf", f'<package><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata></package>'
        )
        for i in range(extra):
            z.writestr(zipfile.ZipInfo(f"e{i}"), b"")
    return out.getvalue()


def epub_zip_bomb(inflated: int = 256 * 1024 * 1024) -> bytes:
    """An EPUB whose package document inflates to ``inflated`` bytes from a few hundred KiB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr(
            "META-INF/container.xml",
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="c.opf"/></rootfiles></container>',
        )
        package = zipfile.ZipInfo("c.opf", date_time=(2020, 1, 1, 0, 0, 0))
        package.compress_type = zipfile.ZIP_DEFLATED
        with z.open(package, "w") as fh:
            fh.write(b"<package>")
            block = b" " * (1024 * 1024)
            for _ in range(inflated // len(block)):
                fh.write(block)
    return out.getvalue()


def central_directory_flood(entries: int) -> bytes:
    """An EPUB-looking ZIP of one stored ``mimetype`` file and ``entries`` directory entries that
    all name it: 48 bytes an entry, so 1.3 million fit in 63 MiB."""
    body = b"application/epub+zip"
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 10, 0, 0, 0, 0, 0, len(body), len(body), 8, 0) + b"mimetype" + body
    entry = struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 10, 0, 0, 0, 0, 0, len(body), len(body), 2, 0, 0, 0, 0, 0, 0)
    directory = b"".join(entry + f"{i % 4096:03x}"[-2:].encode() for i in range(entries))
    count = min(entries, 0xFFFF)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(local), 0)
    return local + directory + end
