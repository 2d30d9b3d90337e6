"""Every file of a vault, not only its notes: images, PDFs, canvases, bases, plain text.

``file.list`` and ``file.read`` see any file the index holds (its kind, size, mtime and how many
notes and canvases embed or link it); ``file.move``, ``file.rename``, ``file.delete`` and
``file.write`` change files that are not notes, each as one journaled, undoable operation on the
same write path as a note's. A note keeps its own methods (``note.*``), which know its links and
frontmatter; ``.obsidian/`` is Obsidian's and no method here touches it.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.limits import DEFAULT_READ_PAGE_BYTES, MAX_NOTE_BYTES, MAX_READ_PAGE_BYTES, KiB, MiB, describe
from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.reads import Cursor, Fresh
from protocol.methods.receipts import DeleteDetail, MoveDetail, NoDetail
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import Sha, TwoStepParams, WriteParams, _write

MAX_FILE_BYTES_PAGE = 4 * MiB  #: the most bytes of a binary file one ``file.read`` returns (base64 on the wire)
#: The bytes of a binary file ``file.read`` returns when ``max_bytes`` is not given: as base64 it
#: stays within an MCP result's default bound, so an agent gets a small image whole.
DEFAULT_FILE_BYTES_PAGE = 128 * KiB


class FileKind(enum.StrEnum):
    """What a file is, by its extension (as Obsidian tells them apart)."""

    NOTE = "note"  #: ``.md``
    IMAGE = "image"
    PDF = "pdf"
    AUDIO = "audio"
    VIDEO = "video"
    CANVAS = "canvas"  #: ``.canvas``, JSON Canvas 1.0
    BASE = "base"  #: ``.base``, Obsidian Bases YAML
    TEXT = "text"  #: plain text kinds: ``.txt``, ``.json``, ``.css``, ``.csv``, ...
    OTHER = "other"


FilePath = Annotated[
    str,
    msgspec.Meta(min_length=1, max_length=1024, description="The file's vault path. With its extension."),
]
MtimeNs = Annotated[int, msgspec.Meta(ge=0, description="The file's mtime in nanoseconds, as file.list or file.read gave it.")]


class FileListParams(Params):
    vault: OptionalVault = None
    kind: Annotated[FileKind | None, msgspec.Meta(description="Only those of this kind.")] = None
    folder: Annotated[str, msgspec.Meta(min_length=1, max_length=1024, description="Only files below this folder.")] | None = None
    glob: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1, max_length=256, description="Only paths matching this glob ('*' within a folder, '**' across folders)."
            ),
        ]
        | None
    ) = None
    orphaned: Annotated[bool, msgspec.Meta(description="Only unused attachments: files no note or canvas embeds or links.")] = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=500, description="At most this many files in this page.")] = 100
    cursor: Cursor | None = None
    fresh: Fresh = False


class FileSummary(msgspec.Struct, kw_only=True):
    path: str
    kind: FileKind
    size: int  #: bytes
    mtime_ns: int
    embedded_by: int  #: notes and canvases that embed or link the file (those the caller may see)


class FileListResult(Result):
    files: list[FileSummary]
    total: int  #: files matching the filters, all pages together
    next_cursor: str | None


class FileReadParams(Params):
    target: FilePath
    vault: OptionalVault = None
    offset: Annotated[int, msgspec.Meta(ge=0, description="A byte offset into the file's text (a text kind) or bytes.")] = 0
    max_bytes: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=MAX_FILE_BYTES_PAGE,
                description=(
                    f"At most this many bytes in this page: of text (at most {describe(MAX_READ_PAGE_BYTES)}, default "
                    f"{describe(DEFAULT_READ_PAGE_BYTES)}), or of a binary file's bytes (at most {describe(MAX_FILE_BYTES_PAGE)}, "
                    f"default {describe(DEFAULT_FILE_BYTES_PAGE)})."
                ),
            ),
        ]
        | None
    ) = None
    fresh: Fresh = False


class FileEncoding(enum.StrEnum):
    TEXT = "text"  #: ``content`` is the file's text
    BASE64 = "base64"  #: ``content`` is the file's bytes, base64


class FileReadResult(Result):
    path: str
    kind: FileKind
    mime: str  #: the media type by extension (``image/png``), so a client can show an image as one
    size: int  #: bytes in the whole file
    mtime_ns: int
    sha256: str | None  #: of the whole file, when this read saw it whole; pass as expected_sha to writes
    encoding: FileEncoding
    content: str  #: this page: text, or base64 of the bytes from offset
    offset: int
    truncated: bool
    next_offset: int | None  #: pass as offset to read the next page
    embedded_by: int


ExpectedSha = Annotated[
    Sha | None, msgspec.Meta(description="Refuse with CONFLICT unless the file still has this sha256 (whole or a prefix).")
]
ExpectedMtime = Annotated[
    MtimeNs | None, msgspec.Meta(description="Refuse with CONFLICT unless the file still has this mtime (from file.list or file.read).")
]


class FileChangeParams(TwoStepParams, kw_only=True):
    """A two-step change of one existing file, compared and swapped: the file must still be the
    one the caller saw (its sha256, or its mtime for a file too large to hash in one read)."""

    expected_sha: ExpectedSha = None
    expected_mtime_ns: ExpectedMtime = None


class FileMoveParams(FileChangeParams, kw_only=True):
    target: Annotated[FilePath, msgspec.Meta(description="The file's vault path.")]
    to: Annotated[
        str,
        msgspec.Meta(min_length=1, max_length=1024, description="Its new vault path; ending in '/', a folder to move it into."),
    ]


class FileRenameParams(FileChangeParams, kw_only=True):
    target: Annotated[FilePath, msgspec.Meta(description="The file to rename (its vault path).")]
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255, description="Its new file name, with its extension; the folder stays.")]


class FileDeleteParams(FileChangeParams, kw_only=True):
    target: Annotated[FilePath, msgspec.Meta(description="The file's vault path. It goes to .trash.")]
    force: Annotated[bool, msgspec.Meta(description="Delete even though notes or canvases still embed or link the file.")] = False


class FileWriteParams(WriteParams, kw_only=True):
    expected_sha: ExpectedSha = None
    expected_mtime_ns: ExpectedMtime = None
    path: Annotated[FilePath, msgspec.Meta(description="The text file to create or replace (.canvas, .base, .json, ...).")]
    content: Annotated[
        str,
        msgspec.Meta(
            max_length=MAX_NOTE_BYTES,
            description=(
                f"The whole new text; at most {describe(MAX_NOTE_BYTES)} as UTF-8. A canvas must be JSON Canvas, a base Bases YAML."
            ),
        ),
    ]
    create_only: Annotated[bool, msgspec.Meta(description="Refuse if the file exists (CONFLICT) instead of replacing it.")] = False


_TWO_STEP = Trait.MCP | Trait.TWO_STEP

LIST: MethodSpec[FileListParams, FileListResult] = spec(
    "file.list",
    FileListParams,
    FileListResult,
    "List any file of the vault (notes, images, PDFs, canvases, bases, ...): kind, size, mtime, how many embed it; filter and page.",
    Effect.READ,
    Trait.MCP,
)
READ: MethodSpec[FileReadParams, FileReadResult] = spec(
    "file.read",
    FileReadParams,
    FileReadResult,
    "Read any file, paged by bytes: text as text, others as base64. Another kind than text comes with its media type; "
    "never whole when large.",
    Effect.READ,
    Trait.MCP,
)
MOVE = _write(
    "file.move",
    FileMoveParams,
    MoveDetail,
    "Move a file that is not a note, rewriting every embed and link to it (two-step). In notes, canvases and bases.",
    Effect.DESTRUCTIVE,
    _TWO_STEP,
)
RENAME = _write(
    "file.rename",
    FileRenameParams,
    MoveDetail,
    "Rename a file that is not a note in its folder and rewrite every embed and link to it (two-step).",
    Effect.DESTRUCTIVE,
    Trait.TWO_STEP,  # not an MCP tool: file.move to a new name in the same folder is the same operation
)
DELETE = _write(
    "file.delete",
    FileDeleteParams,
    DeleteDetail,
    "Move a file that is not a note to .trash (undoable); refused while anything embeds it unless force (two-step).",
    Effect.DESTRUCTIVE,
    _TWO_STEP,
)
WRITE = _write(
    "file.write",
    FileWriteParams,
    NoDetail,
    "Create or replace a text file that is not a note (.canvas validated as JSON Canvas, .base as Bases YAML, .txt, .json, .css).",
)
SPECS = (LIST, READ, MOVE, RENAME, DELETE, WRITE)
