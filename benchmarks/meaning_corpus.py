"""A real documentation vault for retrieval by meaning: Git's manual pages and guides, from the
Debian package ``git-doc``, converted from AsciiDoc to Markdown notes, one note per source file;
and beside them, under ``ja/``, the Japanese translations of the user commands' manual pages
(section 1 of the Debian package ``manpages-ja``), rendered by groff and cut at their sections.

Nothing of the corpus is committed: it is made on each machine from the packages, which any
Debian machine fetches with its ordinary client (``apt-get download git-doc manpages-ja``, no
root needed to unpack; rendering the manual pages needs ``groff``, from ``groff-base``). The
conversion is deterministic: the same packages (and groff) give byte-identical notes, and the
package versions are written beside the vault (``corpus.json``) so a figure names its corpus.

    .venv/bin/python -m benchmarks.meaning_corpus [--deb FILE] [--ja-deb FILE] [--out DIR]

What the AsciiDoc conversion keeps and changes, so that questions can be asked of it the way a
reader asks of a vault:

- a title underlined with ``=`` becomes the note's ``# `` heading; underlines ``-``, ``~``, ``^``
  and ``+`` become ``##`` to ``#####``, and AsciiDoc's ``== Title`` form maps the same way;
- a listing block (``----`` or ``....`` lines) becomes a fenced code block;
- a definition term (``--option::``) becomes a bold line, its ``+`` continuation lines blank;
- ``include::name.txt[]`` becomes a link ``[[name]]`` when that file is a note, else is dropped;
- AsciiDoc attributes (``:name: value``), ``[verse]``-style block attributes and the
  ``linkgit:git-x[1]`` macro (to ``[[git-x]]``) are translated or dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "git-doc"
DOC_DIR = "usr/share/doc/git-doc"
JA_PACKAGE = "manpages-ja"
JA_DIR = "usr/share/man/ja/man1"
JA_FOLDER = "ja"  #: where the Japanese pages go in the vault
_UNDERLINE = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_EQUALS_TITLE = re.compile(r"^(={1,5}) +(\S.*?)\s*=*\s*$")
_RULE = re.compile(r"^([-=~^+.])\1{3,}$")
_TERM = re.compile(r"^(\S.*?)(::|;;)\s*$")
_ATTRIBUTE = re.compile(r"^:[\w-]+:.*$")
_BLOCK_ATTR = re.compile(r"^\[[\w ,=\"'.-]*\]$")
_INCLUDE = re.compile(r"^include::([\w./-]+?)\.txt\[[^\]]*\]\s*$")
_LINKGIT = re.compile(r"linkgit:([\w.-]+)\[(\d)\]")
_MAN_TITLE = re.compile(r"^([\w.-]+)\(\d\)$")
_NO_FENCE = "'''"  #: what a literal fence inside a code block becomes


@dataclass(frozen=True, slots=True)
class Note:
    name: str  #: the vault path without ``.md``: the source's path without ``.txt``
    text: str


def convert(stem: str, source: str, known: set[str]) -> Note:
    """One AsciiDoc file as a Markdown note; ``known`` is every stem that becomes a note (for
    links)."""
    lines = source.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    in_code = False
    title_done = False
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        nxt = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        if in_code:
            if _RULE.match(line) and line[0] in "-.":
                out.append("```")
                in_code = False
            else:
                out.append(line.replace("```", _NO_FENCE))
            i += 1
            continue
        level = _heading_level(line, nxt)
        if level is not None:
            text = _inline(line, known).strip()
            if level == 1 and not title_done:
                man = _MAN_TITLE.match(text)
                text = man.group(1) if man else text
            elif level == 1:
                level = 2
            title_done = True
            out.extend(["", "#" * level + " " + text, ""])
            i += 2
            continue
        titled = _EQUALS_TITLE.match(line)
        if titled:
            level = len(titled.group(1)) if not title_done or len(titled.group(1)) > 1 else 2
            out.extend(["", "#" * level + " " + _inline(titled.group(2), known), ""])
            title_done = True
            i += 1
            continue
        if _RULE.match(line) and line[0] in "-.":
            out.append("```")
            in_code = True
            i += 1
            continue
        include = _INCLUDE.match(line)
        if include:
            name = include.group(1).rsplit("/", 1)[-1]
            if include.group(1) in known:
                out.append(f"See [[{include.group(1)}]].")
            elif name in known and "/" not in include.group(1):
                out.append(f"See [[{name}]].")
            i += 1
            continue
        if _ATTRIBUTE.match(line) or _BLOCK_ATTR.match(line) or line.startswith("//"):
            i += 1
            continue
        if line == "+":
            out.append("")
            i += 1
            continue
        term = _TERM.match(line)
        if term and not line.startswith((" ", "\t")):
            out.extend(["", f"**{_inline(term.group(1), known)}**", ""])
            i += 1
            continue
        out.append(_inline(line.strip("\t") if line.startswith("\t") else line, known))
        i += 1
    if in_code:
        out.append("```")
    if not title_done:
        out[:0] = [f"# {stem}", ""]
    return Note(stem, _squeeze(out))


def _heading_level(line: str, underline: str) -> int | None:
    """The level of ``line`` when ``underline`` underlines it (same length, give or take two)."""
    if not line.strip() or not _RULE.match(underline) or underline[0] not in _UNDERLINE:
        return None
    if _RULE.match(line) or line.startswith((" ", "\t", "[", "//", "include::")):
        return None
    if abs(len(line) - len(underline)) > 2:
        return None
    return _UNDERLINE[underline[0]]


def _inline(text: str, known: set[str]) -> str:
    def link(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"[[{name}]]" if name in known else f"`{name}({match.group(2)})`"

    return _LINKGIT.sub(link, text)


def _squeeze(lines: list[str]) -> str:
    """The note's text with runs of blank lines cut to one and no blank first or last line."""
    kept: list[str] = []
    for line in lines:
        if not line.strip() and (not kept or not kept[-1].strip()):
            continue
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n"


def convert_man(name: str, rendered: str) -> Note:
    """One manual page as groff renders it to text (``-rLL=2000n``: a paragraph on one line):
    the running header and footer dropped, unindented lines as sections, lines indented three
    as subsections, every other line without its indentation."""
    lines = [line.rstrip() for line in rendered.replace("\r\n", "\n").split("\n")]
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) > 1 and re.search(r"\(\d\w*\)\s*$", lines[filled[-1]]):
        lines = lines[: filled[-1]]
    if filled and re.match(r"^\S+\(\d\w*\)", lines[filled[0]]):
        lines = lines[filled[0] + 1 :]
    out = [f"# {name}", ""]
    for line in lines:
        if not line.strip():
            out.append("")
        elif not line[0].isspace():
            out.extend(["", f"## {line.strip()}", ""])
        elif line.startswith("   ") and not line.startswith("    "):
            out.extend(["", f"### {line.strip()}", ""])
        else:
            out.append(line.strip().replace("```", _NO_FENCE))
    return Note(f"{JA_FOLDER}/{name}", _squeeze(out))


def man_sources(man_dir: Path) -> dict[str, str]:
    """Every page of ``man_dir`` rendered to text by groff, by page name, in name order (a page
    that is only a ``.so`` link to another is left out)."""
    import gzip

    out: dict[str, str] = {}
    for page in sorted(man_dir.glob("*.1.gz")):
        source = gzip.decompress(page.read_bytes())
        if source.lstrip().startswith(b".so "):
            continue
        done = subprocess.run(
            ["groff", "-Tutf8", "-mandoc", "-Kutf8", "-P-cbou", "-rLL=2000n"],
            input=source,
            capture_output=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        )
        if done.returncode == 0 and done.stdout.strip():
            out[page.name.removesuffix(".1.gz")] = done.stdout.decode("utf-8", errors="replace")
    return out


def sources(doc_dir: Path) -> dict[str, str]:
    """Every AsciiDoc source of the package (its subfolders too) by path without ``.txt``, in
    path order."""
    return {
        p.relative_to(doc_dir).with_suffix("").as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(doc_dir.rglob("*.txt"))
    }


def build(doc_dir: Path, out: Path, man_dir: Path | None = None) -> list[Note]:
    """The vault under ``out`` (replaced whole), one note per source."""
    found = sources(doc_dir)
    known = set(found)
    notes = [convert(stem, text, known) for stem, text in found.items()]
    if man_dir is not None:
        notes += [convert_man(name, text) for name, text in man_sources(man_dir).items()]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for note in notes:
        target = out / f"{note.name}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(note.text, encoding="utf-8")
    return notes


def fetch_deb(into: Path, package: str = PACKAGE) -> Path:
    """``apt-get download PACKAGE`` into ``into``: the package the apt sources name now."""
    subprocess.run(["apt-get", "download", package], cwd=into, check=True, capture_output=True)
    debs = sorted(into.glob(f"{package}_*.deb"))
    if not debs:
        raise SystemExit(f"apt-get download {package} left no .deb in {into}")
    return debs[-1]


def unpack(deb: Path, into: Path, folder: str = DOC_DIR) -> Path:
    """The package's documentation folder, unpacked under ``into`` (``dpkg-deb`` when present,
    else the ar archive read here: a .deb is an ar of a control and a data tarball)."""
    if shutil.which("dpkg-deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    else:
        data = _ar_member(deb.read_bytes(), "data.tar")
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(into, filter="data")
    return into / folder


def _ar_member(blob: bytes, prefix: str) -> bytes:
    at = 8  # b"!<arch>\n"
    while at < len(blob):
        name = blob[at : at + 16].decode().strip().rstrip("/")
        size = int(blob[at + 48 : at + 58].decode().strip())
        body = blob[at + 60 : at + 60 + size]
        if name.startswith(prefix):
            return body
        at += 60 + size + (size % 2)
    raise SystemExit(f"no {prefix}* member in the package")


def make(out: Path, deb: Path | None = None, ja_deb: Path | None = None) -> dict[str, object]:
    """The vault at ``out`` from ``deb`` and ``ja_deb`` (fetched with apt when not given); what
    it holds."""
    with tempfile.TemporaryDirectory(prefix="meaning-corpus-") as tmp:
        work = Path(tmp)
        package = deb or fetch_deb(work)
        ja_package = ja_deb or fetch_deb(work, JA_PACKAGE)
        man_dir = unpack(ja_package, work / "ja", JA_DIR)
        notes = build(unpack(package, work / "x"), out / "vault", man_dir)
        digest = hashlib.sha256()
        for note in notes:
            digest.update(note.name.encode() + b"\0" + note.text.encode() + b"\0")
        facts: dict[str, object] = {
            "package": package.name,
            "ja_package": ja_package.name,
            "groff": subprocess.run(["groff", "--version"], capture_output=True, text=True, check=False).stdout.split("\n")[0],
            "notes": len(notes),
            "ja_notes": sum(1 for n in notes if n.name.startswith(JA_FOLDER + "/")),
            "bytes": sum(len(n.text.encode()) for n in notes),
            "sha256": digest.hexdigest(),
        }
    (out / "corpus.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()) if __doc__ else None)
    parser.add_argument("--deb", type=Path, help="a git-doc .deb already on disk (default: apt-get download git-doc)")
    parser.add_argument("--ja-deb", type=Path, help="a manpages-ja .deb already on disk (default: apt-get download manpages-ja)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/vaultd-meaning"), help="the vault goes to OUT/vault")
    args = parser.parse_args(argv)
    print(json.dumps(make(args.out, args.deb, args.ja_deb), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
