"""Every operation that writes a link anew writes it in the vault's link format, under each of
Obsidian's settings (``useMarkdownLinks`` off and on, ``newLinkFormat`` shortest, relative and
absolute): note.link, note.supersede, note.merge, source.capture (its embed of the raw copy, its
``raw`` and ``pages`` properties, an OCR plan's link to the copy) and claim.add, through a real
daemon and vaultctl's own client.

The expected text is made here from the settings alone (:func:`body` and :func:`prop`), not by
the code under test. A file the operation itself creates counts as the vault's: the raw copy a
capture writes, unique by its name, is linked by that name under ``shortest``.
"""

from __future__ import annotations

import base64
import json
import posixpath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from protocol.methods.receipts import Applied
from protocol.methods.sources import CAPTURE, CLAIM_ADD, CaptureItem, CaptureParams, ClaimAddParams
from protocol.methods.writes import LINK, MERGE, SUPERSEDE, LinkParams, MergeParams, SupersedeParams
from tests.support.harness import register
from tests.support.typed import applied, two_step

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClient

NOTES = {
    "notes/Alpha.md": "# Alpha\n\nFirst.\n",
    "notes/deep/Beta Note.md": "# Beta Note\n\nSecond.\n",
    "other/Gamma.md": "# Gamma\n\nThird.\n",
    "other/Delta.md": "# Delta\n\nFourth.\n",
    "other/Keep.md": "# Keep\n\nKept.\n",
    "notes/deep/Absorbed.md": "# Absorbed\n\nFolded in.\n",
}
#: A 1x1 PNG: an image, so its source note embeds the raw copy.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

FORMATS = [(markdown, path) for markdown in (False, True) for path in ("shortest", "relative", "absolute")]


def _text(path: str, target: str, source: str) -> str:
    """The path part of a new link to ``target`` from ``source``, as Obsidian's setting writes it
    (every name in this vault is unique, so ``shortest`` is the bare name)."""
    bare = target[:-3] if target.endswith(".md") else target
    if path == "shortest":
        return bare.rpartition("/")[2]
    if path == "relative":
        rel = posixpath.relpath(bare, posixpath.dirname(source))
        return rel if rel.startswith("../") else "./" + rel
    return bare


def body(markdown: bool, path: str, target: str, source: str, *, embed: bool = False) -> str:
    text = _text(path, target, source)
    if not markdown:
        return ("!" if embed else "") + f"[[{text}]]"
    dest = quote(text + (".md" if target.endswith(".md") else ""), safe="/")
    if embed:
        return f"![]({dest})"
    return f"[{posixpath.basename(target).removesuffix('.md')}]({dest})"


def prop(path: str, target: str, source: str) -> str:
    """A link in a property: a wiki-link whatever the format, its path per the setting."""
    return f"[[{_text(path, target, source)}]]"


def _parts(root: Path, rel: str) -> tuple[str, str]:
    """(frontmatter, body) of a note, so a property link is never taken for a body link."""
    text = (root / rel).read_text()
    if not text.startswith("---\n"):
        return "", text
    end = text.index("\n---\n", 4)
    return text[: end + 5], text[end + 5 :]


@pytest.fixture(params=FORMATS, ids=[f"{'markdown' if m else 'wiki'}-{p}" for m, p in FORMATS])
def vault(request: pytest.FixtureRequest, home: Home) -> tuple[Path, bool, str]:
    markdown, path = request.param
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".obsidian").mkdir()
    app = {"useMarkdownLinks": markdown, "newLinkFormat": path, "attachmentFolderPath": "files"}
    (root / ".obsidian/app.json").write_text(json.dumps(app))
    register(home, root)
    return root, markdown, path


def test_every_link_writer_follows_the_vault_link_format(daemon: Any, vault: tuple[Path, bool, str], typed: TypedClient) -> None:
    root, md, fmt = vault

    assert isinstance(typed.call(LINK, LinkParams(vault="v", source="Alpha", target="Beta Note")), Applied)
    assert body(md, fmt, "notes/deep/Beta Note.md", "notes/Alpha.md") in _parts(root, "notes/Alpha.md")[1]
    assert body(md, fmt, "notes/Alpha.md", "notes/deep/Beta Note.md") in _parts(root, "notes/deep/Beta Note.md")[1]

    assert isinstance(typed.call(SUPERSEDE, SupersedeParams(vault="v", old="Gamma", new="Delta")), Applied)
    assert body(md, fmt, "other/Gamma.md", "other/Delta.md") in _parts(root, "other/Delta.md")[1]
    assert prop(fmt, "other/Delta.md", "other/Gamma.md") in _parts(root, "other/Gamma.md")[0]

    two_step(typed, MERGE, MergeParams(vault="v", keep="Keep", absorb="Absorbed"))
    assert f"## Merged from {body(md, fmt, 'notes/deep/Absorbed.md', 'other/Keep.md')}" in _parts(root, "other/Keep.md")[1]

    item = CaptureItem(data=base64.b64encode(PNG).decode(), name="diagram.png", ocr=True)
    captured = applied(typed.call(CAPTURE, CaptureParams(vault="v", items=[item], note="Alpha")))
    image, ocr = captured.detail.sources
    assert image.raw is not None and image.raw.startswith("files/"), image
    head, text = _parts(root, image.note)
    assert body(md, fmt, image.raw, image.note, embed=True) in text, text
    assert prop(fmt, image.raw, image.note) in head and prop(fmt, "notes/Alpha.md", image.note) in head, head
    assert body(md, fmt, image.raw, ocr.note) in _parts(root, ocr.note)[1]

    claim = applied(typed.call(CLAIM_ADD, ClaimAddParams(vault="v", page="Alpha", claim="Alpha holds.")))
    head, text = _parts(root, claim.detail.claim)
    assert f"A claim about {body(md, fmt, 'notes/Alpha.md', claim.detail.claim)}." in text, text
    assert prop(fmt, "notes/Alpha.md", claim.detail.claim) in head, head
