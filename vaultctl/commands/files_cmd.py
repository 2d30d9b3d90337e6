"""vaultctl files, and vaultctl file read|move|rename|delete|write: every file of a vault, not only
its notes (images, PDFs, canvases, bases, plain text), through the file.* methods."""

from __future__ import annotations

import base64
import hashlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.methods import files
from protocol.methods.files import (
    FileDeleteParams,
    FileEncoding,
    FileKind,
    FileListParams,
    FileListResult,
    FileMoveParams,
    FileReadParams,
    FileReadResult,
    FileRenameParams,
    FileWriteParams,
)
from protocol.schema import field_help as doc
from vaultctl import command_tree, render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command
from vaultctl.completion import Complete

if TYPE_CHECKING:
    from vaultctl.client import Client

file_app = typer.Typer(help="Read, move, rename, delete and write any file of a vault (not only notes).", no_args_is_help=True)

FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(FileListParams, "fresh"))]
ExpectedMtimeOpt = Annotated[int | None, typer.Option("--expected-mtime", help=doc(FileMoveParams, "expected_mtime_ns"))]


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def list_files(
    folder: Annotated[str | None, typer.Argument(help=doc(FileListParams, "folder"))] = None,
    vault: VaultOpt = None,
    kind: Annotated[FileKind | None, typer.Option("--kind", help=doc(FileListParams, "kind"))] = None,
    glob: Annotated[str | None, typer.Option("--glob", help=doc(FileListParams, "glob"))] = None,
    orphaned: Annotated[bool, typer.Option("--orphaned", help=doc(FileListParams, "orphaned"))] = False,
    limit: Annotated[int, typer.Option(help=doc(FileListParams, "limit"))] = 100,
    cursor: Annotated[str | None, typer.Option(help=doc(FileListParams, "cursor"))] = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """List the vault's files (notes, images, PDFs, canvases, bases, ...) with their kind, size and
    how many notes and canvases embed them; --orphaned shows the ones nothing embeds."""
    with session() as c:
        chosen = pick_vault(c, vault)
        params = FileListParams(
            vault=chosen, folder=folder, kind=kind, glob=glob, orphaned=orphaned, limit=limit, cursor=cursor, fresh=fresh
        )
        result = call(files.LIST, params, client=c)

    def text(r: FileListResult) -> str:
        if not r.files:
            return "no files"
        rows = [(f.path, f.kind.value, _size(f.size), f.embedded_by) for f in r.files]
        return render.table(["path", "kind", "size", "embedded by"], rows)

    emit(result, as_json, text)
    if not as_json:
        tail = f"[{len(result.files)} of {result.total} files"
        tail += f"; next page: {command_tree.again(cursor=result.next_cursor, vault=chosen)}]" if result.next_cursor else "]"
        render.say(tail, file=sys.stderr)


def _save(client: Client, params: FileReadParams, first: FileReadResult, out: Path) -> str:
    """Write every page of the file to ``out`` (never through the terminal), checking that the file
    does not change meanwhile; the sha256 of what was written."""
    digest = hashlib.sha256()
    page = first
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        while True:
            data = page.content.encode("utf-8") if page.encoding is FileEncoding.TEXT else base64.b64decode(page.content)
            os.write(fd, data)
            digest.update(data)
            if page.next_offset is None:
                break
            page = call(files.READ, FileReadParams(target=first.path, vault=params.vault, offset=page.next_offset), client=client)
            if page.mtime_ns != first.mtime_ns or page.size != first.size:
                fail(f"{first.path} changed while it was read page by page; run the command again", ExitStatus.CONFLICT)
    finally:
        os.close(fd)
    return digest.hexdigest()


def read_text_file(client: Client, params: FileReadParams) -> FileReadResult:
    """A text file whole, every page joined (the file must not change meanwhile)."""
    first = page = call(files.READ, params, client=client)
    parts = [page.content]
    while page.encoding is FileEncoding.TEXT and page.next_offset is not None:
        page = call(files.READ, FileReadParams(target=first.path, vault=params.vault, offset=page.next_offset), client=client)
        if page.sha256 != first.sha256:
            fail(f"{first.path} changed while it was read page by page; run the command again", ExitStatus.CONFLICT)
        parts.append(page.content)
    return msgspec.structs.replace(first, content="".join(parts), next_offset=None, truncated=False)


@file_app.command("read")
def read(
    target: Annotated[str, typer.Argument(metavar="FILE", help=doc(FileReadParams, "target"))],
    vault: VaultOpt = None,
    offset: Annotated[int, typer.Option(help=doc(FileReadParams, "offset"))] = 0,
    max_bytes: Annotated[int | None, typer.Option("--max-bytes", help=doc(FileReadParams, "max_bytes"))] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Save the whole file here (every page)."), Complete.FILE] = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Print a text file (a canvas, a base, .txt, .json, ...), or a binary file's kind, type, size
    and sha256; --out saves any file's bytes."""
    with session() as c:
        params = FileReadParams(target=target, vault=pick_vault(c, vault), offset=offset, max_bytes=max_bytes, fresh=fresh)
        result = call(files.READ, params, client=c)
        if out is not None:
            sha = _save(c, params, result, out)
            render.say(f"saved {result.path} ({_size(result.size)}, sha256 {sha[:12]}) to {out}")
            return
        if result.encoding is FileEncoding.TEXT and offset == 0 and max_bytes is None and not as_json:
            result = read_text_file(c, params)
    if as_json:
        print(render.json_line(result))
        return
    head = f"{result.path}  {result.kind.value}  {result.mime}  {_size(result.size)}  embedded by {result.embedded_by}"
    if result.encoding is FileEncoding.TEXT:
        render.say(head + (f"  sha256 {result.sha256[:12]}" if result.sha256 else ""), file=sys.stderr)
        render.say(result.content.rstrip("\n"))
        return
    render.say(head + (f"\nsha256 {result.sha256}" if result.sha256 else "") + "\n[binary; save its bytes with --out FILE]")


@file_app.command("move")
@write_command(files.MOVE)
def move(
    target: Annotated[str, typer.Argument(metavar="FILE", help=doc(FileMoveParams, "target"))],
    to: Annotated[str, typer.Argument(metavar="TO", help=doc(FileMoveParams, "to"))],
    expected_mtime: ExpectedMtimeOpt = None,
    *,
    flags: WriteFlags[FileMoveParams],
) -> None:
    """Move a file and rewrite every embed and link to it: a preview first, then --confirm --fingerprint F."""
    words = ["file", "move", target, to, *_cas_words(flags.expected_sha, expected_mtime)]
    flags.run(
        lambda steering: FileMoveParams(target=target, to=to, expected_mtime_ns=expected_mtime, **steering),
        *words,
    )


@file_app.command("rename")
@write_command(files.RENAME)
def rename(
    target: Annotated[str, typer.Argument(metavar="FILE", help=doc(FileRenameParams, "target"))],
    name: Annotated[str, typer.Argument(metavar="NAME", help=doc(FileRenameParams, "name"))],
    expected_mtime: ExpectedMtimeOpt = None,
    *,
    flags: WriteFlags[FileRenameParams],
) -> None:
    """Rename a file in its folder and rewrite every embed and link to it: a preview first, then --confirm --fingerprint F."""
    words = ["file", "rename", target, name, *_cas_words(flags.expected_sha, expected_mtime)]
    flags.run(
        lambda steering: FileRenameParams(target=target, name=name, expected_mtime_ns=expected_mtime, **steering),
        *words,
    )


@file_app.command("delete")
@write_command(files.DELETE)
def delete(
    target: Annotated[str, typer.Argument(metavar="FILE", help=doc(FileDeleteParams, "target"))],
    force: Annotated[bool, typer.Option("--force", help=doc(FileDeleteParams, "force"))] = False,
    expected_mtime: ExpectedMtimeOpt = None,
    *,
    flags: WriteFlags[FileDeleteParams],
) -> None:
    """Move a file to .trash (undo restores it): a preview first, then --confirm --fingerprint F."""
    words = ["file", "delete", target, *(("--force",) if force else ()), *_cas_words(flags.expected_sha, expected_mtime)]
    flags.run(
        lambda steering: FileDeleteParams(target=target, force=force, expected_mtime_ns=expected_mtime, **steering),
        *words,
    )


@file_app.command("write")
@write_command(files.WRITE)
def write(
    path: Annotated[str, typer.Argument(metavar="FILE", help=doc(FileWriteParams, "path"))],
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="A local file to read the new text from, or - for stdin."), Complete.FILE],
    create_only: Annotated[bool, typer.Option("--create-only", help=doc(FileWriteParams, "create_only"))] = False,
    expected_mtime: ExpectedMtimeOpt = None,
    *,
    flags: WriteFlags[FileWriteParams],
) -> None:
    """Create or replace a text file that is not a note (.canvas, .base, .txt, .json, .css) with
    the text of SOURCE; a canvas must be JSON Canvas, a base Bases YAML."""
    try:
        raw = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        content = raw.decode("utf-8")
    except OSError as exc:
        fail(f"cannot read {source}: {exc.strerror}", ExitStatus.USAGE)
    except UnicodeDecodeError:
        fail(f"{source} is not UTF-8 text; file.write writes text files", ExitStatus.USAGE)
    flags.run(
        lambda steering: FileWriteParams(path=path, content=content, create_only=create_only, expected_mtime_ns=expected_mtime, **steering)
    )


def _cas_words(sha: str | None, mtime: int | None) -> list[str]:
    return [*(("--expected-sha", sha) if sha else ()), *(("--expected-mtime", str(mtime)) if mtime is not None else ())]
