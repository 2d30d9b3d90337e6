"""A PDF's metadata, read in a child process whose time and memory are bounded.

pypdf is a large parser of a format made for random access: a captured PDF can declare millions
of objects in a few compressed bytes, nest its page tree or its arrays thousands deep, or send
the reader round a loop. Nothing in the daemon's process may cost that, so the reader runs as
``python -m vaultd.sources.pdf_probe``: it sets its own address-space and CPU limits before it
imports pypdf, reads the PDF on stdin and writes the fields as JSON. A child that passes
:data:`~protocol.parse_limits.MAX_PDF_MEMORY_BYTES`, runs past
:data:`~protocol.parse_limits.MAX_PDF_SECONDS` or fails leaves the capture without metadata,
with the reason; the capture itself goes on. As with the index's parse workers, the child
imports only what it reads with.
"""

from __future__ import annotations

import io
import json
import re
import resource
import subprocess
import sys
import warnings
from typing import Any, Final

from protocol.limits import describe
from protocol.parse_limits import MAX_PDF_MEMORY_BYTES, MAX_PDF_SECONDS

PROBE_ARGS: Final = ("-m", "vaultd.sources.pdf_probe")


def probe(data: bytes, seconds: float = MAX_PDF_SECONDS, memory: int = MAX_PDF_MEMORY_BYTES) -> tuple[dict[str, str], str | None]:
    """(the fields, the problem or None) of the PDF ``data``, read in a bounded child process."""
    argv = [sys.executable, *PROBE_ARGS, str(memory), str(max(1, int(seconds)))]
    try:
        done = subprocess.run(argv, input=data, capture_output=True, timeout=seconds, check=False)
    except subprocess.TimeoutExpired:
        return {}, f"the PDF's metadata was not read: reading it took more than {seconds:g} s"
    except OSError as exc:
        return {}, f"the PDF's metadata was not read: its reader could not start ({exc.strerror})"
    try:
        out = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        out = None
    if not isinstance(out, dict) or not isinstance(out.get("fields"), dict):
        return {}, f"the PDF's metadata was not read: its reader failed or passed its {describe(memory)} memory bound"
    fields = {str(k): str(v) for k, v in out["fields"].items()}
    problem = out.get("problem")
    return fields, problem if isinstance(problem, str) else None


def main(argv: list[str]) -> int:
    memory, seconds = int(argv[0]), int(argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    data = sys.stdin.buffer.read()
    fields, problem = read_here(data)
    sys.stdout.write(json.dumps({"fields": fields, "problem": problem}))
    return 0


def clean_field(value: object, limit: int = 200) -> str | None:
    """A metadata value as one printable line of at most ``limit`` characters, or None."""
    if value is None:
        return None
    text = " ".join(str(value).split())
    text = "".join(ch for ch in text if ch.isprintable())
    return text[:limit] or None


def read_here(data: bytes) -> tuple[dict[str, str], str | None]:
    """The PDF's metadata read in this process; only the bounded child (:func:`main`) calls it."""
    try:
        import pypdf  # imported here, after the limits: the import is part of the bounded work
    except ImportError:
        return {}, "PDF metadata needs the optional 'vaultd[media]' extra (pypdf)"
    fields: dict[str, str] = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = pypdf.PdfReader(io.BytesIO(data))
            info = reader.metadata
            catalog: Any = reader.root_object  # pypdf resolves indirect objects on [] (not on .get)
            pages = catalog["/Pages"]["/Count"] if "/Pages" in catalog else None  # as declared: no walk of the page tree
            if isinstance(pages, int) and pages >= 0:
                fields["doc_pages"] = str(pages)
            if info is not None:
                for key, value in (("doc_title", info.title), ("doc_author", info.author)):
                    if (text := clean_field(value)) is not None:
                        fields[key] = text
                created = info.get("/CreationDate")
                if isinstance(created, str) and (m := re.match(r"D:(\d{4})(\d{2})(\d{2})", created)):
                    fields["doc_created"] = f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    except Exception as exc:  # noqa: BLE001 - any malformed PDF: the capture keeps the bytes, without metadata
        return fields, f"the PDF's metadata could not be read ({type(exc).__name__})"
    return fields, None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
