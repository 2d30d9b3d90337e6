"""File rules: attachments nothing uses (L12), and broken links in ``.canvas`` (L14) and ``.base``
(L15) files.

A canvas is JSON Canvas 1.0: its ``file`` cards name vault-relative paths exactly (with an
optional ``#heading`` or ``#^block`` subpath), its ``text`` cards hold Markdown whose wiki-links
resolve as a note's do, its group backgrounds name images, and its edges name cards by id.
A base is YAML: any string may hold wiki-links, and its filter and formula expressions name notes
in ``link("...")`` and ``file.hasLink("...")`` and folders in ``file.inFolder("...")``.
A file private to the caller counts as existing and is never named. Both are read through bounded
parsers (:mod:`vaultd.vault.json_text`, :mod:`vaultd.vault.yaml_bounds`): a file nested too deep
or an alias bomb is one finding, found in one linear pass.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import yaml  # type: ignore[import-untyped]

from protocol.methods.lint import LintCode
from vaultd.lint.model import Document, Finding, LintInput
from vaultd.vault import json_text, markdown
from vaultd.vault.link_targets import ResolutionStatus, check_anchor
from vaultd.vault.yaml_bounds import YamlRefused, load_base

if TYPE_CHECKING:
    from collections.abc import Iterator

DOCUMENT_SUFFIXES = (".canvas", ".base")
MAX_DOCUMENT_FINDINGS = 200  #: per file; past it the file gets one finding with the count
# The argument runs to the next quote of its kind: a character class, not a lazy ``.+?`` with a
# backreference, so a long line of unclosed calls costs one pass, not one pass per call.
_QUOTED_ARG = r"""\(\s*(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)')"""
_BASE_LINK = re.compile(r"(?:\blink|\bfile\.hasLink)" + _QUOTED_ARG)
_BASE_FOLDER = re.compile(r"\bfile\.inFolder" + _QUOTED_ARG)


def _arg(m: re.Match[str]) -> str:
    return m.group("dq") if m.group("dq") is not None else m.group("sq")


def is_document(path: str) -> bool:
    return path.lower().endswith(DOCUMENT_SUFFIXES)


def unused_attachment_findings(inp: LintInput, canvas_files: set[str]) -> Iterator[Finding]:
    for path in inp.snap.attachments:
        inp.deadline.tick()
        if is_document(path) or path in inp.snap.linked_files or path in canvas_files:
            continue
        yield Finding(LintCode.L12, path, "no note or canvas links or embeds this attachment")


def _resolves(inp: LintInput, target: str, source: str) -> str | None:
    """None when ``target`` names one file, else why it does not."""
    if inp.resolve is None:
        return None
    res = inp.resolve(target, source)
    if res.status is ResolutionStatus.RESOLVED:
        return None
    return "names several files" if res.status is ResolutionStatus.AMBIGUOUS else "names no note or file"


def _text_links(inp: LintInput, text: str, source: str) -> Iterator[str]:
    for link in markdown.scan(text).links:
        if link.target.strip():
            problem = _resolves(inp, link.target, source)
            if problem:
                yield f"[[{link.target}]] {problem}"


def parse_document(path: str, text: str) -> Document:
    """A canvas's or a base's data, or the finding that says why it cannot be read (bounded)."""
    if path.lower().endswith(".canvas"):
        try:
            return Document(json_text.load(text) if text.strip() else {})
        except json.JSONDecodeError as exc:
            return Document(problem=f"not valid JSON (line {exc.lineno}): {exc.msg}")
        except ValueError as exc:
            return Document(problem=f"not read: {exc}")
    try:
        return Document(load_base(text))
    except YamlRefused as exc:
        return Document(problem=f"not read: the base {exc}" + (f" (line {exc.line + 1})" if exc.line is not None else ""))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return Document(problem="not valid YAML" + (f" (line {mark.line + 1})" if mark is not None else ""))


def canvas_problems(inp: LintInput, path: str, doc: Document, referenced: set[str]) -> Iterator[str]:
    """Every problem of one canvas; ``referenced`` collects the files its cards name."""
    if doc.problem is not None:
        yield doc.problem
        return
    data = doc.data
    if not isinstance(data, dict):
        yield "not a JSON Canvas document: the top level must be an object"
        return
    nodes = data.get("nodes", [])
    edges = data.get("edges", [])
    if not isinstance(nodes, list) or not isinstance(edges, list):
        yield "not a JSON Canvas document: nodes and edges must be arrays"
        return
    ids: set[str] = set()
    for node in nodes:
        inp.deadline.tick()
        if not isinstance(node, dict) or not isinstance(node.get("id"), str):
            yield "a card has no id"
            continue
        ids.add(node["id"])
        kind = node.get("type")
        if kind == "file":
            yield from _file_card(inp, node, referenced)
        elif kind == "text" and isinstance(node.get("text"), str):
            for problem in _text_links(inp, node["text"], path):
                yield f"card {node['id']}: {problem}"
        elif kind == "group" and isinstance(node.get("background"), str):
            referenced.add(node["background"])
            if not inp.exists(node["background"]):
                yield f"group {node['id']}: its background {node['background']} does not exist"
    for edge in edges:
        inp.deadline.tick()
        if not isinstance(edge, dict):
            continue
        for end in ("fromNode", "toNode"):
            if edge.get(end) not in ids:
                yield f"edge {edge.get('id', '?')}: {end} {edge.get(end)!r} names no card"


def _file_card(inp: LintInput, node: dict[str, Any], referenced: set[str]) -> Iterator[str]:
    file = node.get("file")
    if not isinstance(file, str) or not file:
        yield f"card {node['id']}: a file card without a file"
        return
    referenced.add(file)
    if not inp.exists(file):
        yield f"card {node['id']}: {file} does not exist"
        return
    subpath = node.get("subpath")
    record = inp.snap.notes.get(file)
    if isinstance(subpath, str) and subpath.startswith("#") and record is not None:
        problem = check_anchor(subpath[1:], record.headings, record.blocks)
        if problem:
            yield f"card {node['id']}: {file}{subpath}: {problem}"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)


def base_problems(inp: LintInput, path: str, doc: Document) -> Iterator[str]:
    if doc.problem is not None:
        yield doc.problem
        return
    seen: set[str] = set()
    for text in _strings(doc.data):
        inp.deadline.tick()
        found = [(f"[[{lk.target}]]", lk.target) for lk in markdown.links_in_value(text, 1) if lk.target.strip()]
        found += [(f'link("{_arg(m)}")', _arg(m).strip()) for m in _BASE_LINK.finditer(text)]
        for written, target in found:
            problem = _resolves(inp, target.removeprefix("[[").removesuffix("]]"), path)
            if problem and written not in seen:
                seen.add(written)
                yield f"{written} {problem}"
        for m in _BASE_FOLDER.finditer(text):
            folder = _arg(m).strip("/")
            if folder and folder not in seen and not inp.exists(folder + "/"):
                seen.add(folder)
                yield f'file.inFolder("{_arg(m)}") names no folder of the vault'


def document_findings(inp: LintInput) -> tuple[list[Finding], set[str]]:
    """L14 and L15 findings, and the files canvases reference (they count as used)."""
    findings: list[Finding] = []
    referenced: set[str] = set()
    for path in sorted(inp.documents):
        inp.deadline.check()
        doc = inp.documents[path]
        code = LintCode.L14 if path.lower().endswith(".canvas") else LintCode.L15
        problems = canvas_problems(inp, path, doc, referenced) if code is LintCode.L14 else base_problems(inp, path, doc)
        listed = 0
        extra = 0
        for problem in problems:
            if listed < MAX_DOCUMENT_FINDINGS:
                findings.append(Finding(code, path, problem))
                listed += 1
            else:
                extra += 1
        if extra:
            findings.append(Finding(code, path, f"{extra} more problems in this file"))
    return findings, referenced
