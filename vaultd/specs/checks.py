"""What is wrong with a source's specs, and whether the code each covers moved on since it was verified.

A finding's identity (code, spec, field, target) is what a write compares before and after: a
spec write is refused only for an error it introduces, never for one the source already had.
Freshness asks the source's git repository, through vaultd's hardened git runner, how many commits
touched a spec's ``paths`` since its ``verified-against`` commit, and whether any are uncommitted.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.methods.specs import EdgeKind, Freshness, SpecCode, SpecFinding, SpecStatus, SpecType
from vaultd.errors import VaultError
from vaultd.git import command
from vaultd.specs.documents import LIST_LINKS

if TYPE_CHECKING:
    from vaultd.specs.documents import SpecDoc, SpecSet

ERROR, WARNING = "error", "warning"
RANK = {t.value: i for i, t in enumerate(SpecType)}
STRING_LISTS = ("covers", "tags", "paths", *(k.value for k in LIST_LINKS))
MAX_FRESHNESS_CHECKS = 500  #: git is asked about at most this many specs per call
_SHA = re.compile(r"^[0-9a-f]{40}$")


def _finding(specs: SpecSet, doc: SpecDoc, severity: str, code: SpecCode, message: str, **more: Any) -> SpecFinding:
    return SpecFinding(severity=severity, code=code, source=specs.source, path=doc.path, id=doc.id, message=message, **more)


def findings(specs: SpecSet) -> list[SpecFinding]:
    """Every problem of the source's specs but staleness, errors and warnings, in path order."""
    out: list[SpecFinding] = []
    for path, why in specs.unreadable:
        out.append(SpecFinding(severity=ERROR, code=SpecCode.UNREADABLE, source=specs.source, path=path, message=f"{path}: {why}"))
    known = specs.by_id()
    for doc in specs.docs:
        out += _shape(specs, doc)
        if doc.id is not None and known[doc.id] is not doc:
            first = known[doc.id].path
            out.append(_finding(specs, doc, ERROR, SpecCode.DUPLICATE, f"id {doc.id!r} is already {first}'s", field="id", target=first))
            continue
        if doc.id is None:
            continue
        for kind in (EdgeKind.PARENT, EdgeKind.SUPERSEDED_BY, *LIST_LINKS):
            for target in doc.links(kind):
                if target not in known:
                    message = f"{kind.value} names {target!r}, which no spec has as its id"
                    out.append(_finding(specs, doc, ERROR, SpecCode.DANGLING, message, field=kind.value, target=target))
        out += _rank_and_cycle(specs, doc, known)
        out += _replacement(specs, doc, known)
    return out


def _shape(specs: SpecSet, doc: SpecDoc) -> list[SpecFinding]:
    out: list[SpecFinding] = []
    for key in ("id", "type", "title"):
        value = doc.meta.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            out.append(_finding(specs, doc, ERROR, SpecCode.MISSING, f"{key} is missing", field=key))
    kind = doc.meta.get("type")
    if kind is not None and kind not in RANK:
        out.append(_finding(specs, doc, ERROR, SpecCode.BAD_VALUE, f"type must be one of {', '.join(RANK)}", field="type"))
    status = doc.meta.get("status")
    if status is not None and status not in {s.value for s in SpecStatus}:
        out.append(_finding(specs, doc, ERROR, SpecCode.BAD_VALUE, "status must be draft, active or deprecated", field="status"))
    for key in STRING_LISTS:
        value = doc.meta.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)):
            out.append(_finding(specs, doc, ERROR, SpecCode.BAD_VALUE, f"{key} must be a list of non-empty strings", field=key))
    for key in ("parent", "superseded-by"):
        value = doc.meta.get(key)
        if value is not None and not (isinstance(value, str) and value.strip()):
            out.append(_finding(specs, doc, ERROR, SpecCode.BAD_VALUE, f"{key} must be one spec id", field=key))
    stamp = doc.meta.get("verified-against")
    if stamp is not None and not (isinstance(stamp, str) and _SHA.match(stamp)):
        out.append(_finding(specs, doc, ERROR, SpecCode.BAD_VALUE, "verified-against must be a full commit sha", field="verified-against"))
    return out


def _rank_and_cycle(specs: SpecSet, doc: SpecDoc, known: dict[str, SpecDoc]) -> list[SpecFinding]:
    out: list[SpecFinding] = []
    parents = doc.links(EdgeKind.PARENT)
    if not parents or parents[0] not in known:
        return out
    parent = known[parents[0]]
    mine, theirs = RANK.get(str(doc.meta.get("type"))), RANK.get(str(parent.meta.get("type")))
    if mine is not None and theirs is not None and theirs >= mine:
        message = f"its parent {parent.id!r} is a {parent.meta.get('type')}, not wider than a {doc.meta.get('type')}"
        out.append(_finding(specs, doc, ERROR, SpecCode.RANK, message, field="parent", target=parent.id))
    seen: set[str | None] = set()
    current: SpecDoc | None = parent
    while current is not None and current.id not in seen:  # a loop above it is its ancestors' finding
        if current.id == doc.id:
            out.append(_finding(specs, doc, ERROR, SpecCode.CYCLE, "its parents lead back to it", field="parent", target=parent.id))
            break
        seen.add(current.id)
        up = current.links(EdgeKind.PARENT)
        current = known.get(up[0]) if up else None
    return out


def _replacement(specs: SpecSet, doc: SpecDoc, known: dict[str, SpecDoc]) -> list[SpecFinding]:
    targets = doc.links(EdgeKind.SUPERSEDED_BY)
    if not targets:
        return []
    target = targets[0]
    if target == doc.id:
        return [
            _finding(specs, doc, ERROR, SpecCode.REPLACEMENT, "superseded-by names the spec itself", field="superseded-by", target=target)
        ]
    if doc.meta.get("status") != SpecStatus.DEPRECATED.value:
        message = "superseded-by is set but the spec is not deprecated"
        return [_finding(specs, doc, ERROR, SpecCode.REPLACEMENT, message, field="superseded-by", target=target)]
    if target in known and known[target].meta.get("status") == SpecStatus.DEPRECATED.value:
        message = f"its replacement {target!r} is deprecated too"
        return [_finding(specs, doc, WARNING, SpecCode.REPLACEMENT, message, field="superseded-by", target=target)]
    return []


def identity(finding: SpecFinding) -> tuple[str, str, str, str]:
    """What makes two findings the same problem, whatever the file's other changes."""
    return (finding.code.value, finding.id or finding.path, finding.field or "", finding.target or "")


def introduced(before: list[SpecFinding], after: list[SpecFinding]) -> list[SpecFinding]:
    """The errors ``after`` has that ``before`` had not: what a write would break."""
    old = {identity(f) for f in before}
    return [f for f in after if f.severity == ERROR and identity(f) not in old]


def freshness(specs: SpecSet, docs: list[SpecDoc]) -> list[Freshness]:
    """Freshness of each spec of ``docs`` that has a stamp (``verified-against`` and ``paths``)."""
    out: list[Freshness] = []
    top: str | None = None
    asked = False
    for doc in docs:
        stamp, paths = doc.meta.get("verified-against"), doc.meta.get("paths")
        if doc.id is None or not isinstance(stamp, str) or not _SHA.match(stamp):
            continue
        if len(out) >= MAX_FRESHNESS_CHECKS:
            break
        if not (isinstance(paths, list) and paths and all(isinstance(p, str) and _relative(p) for p in paths)):
            out.append(Freshness(id=doc.id, verified_against=stamp, commits_since=None, stale=False, note="paths must list relative paths"))
            continue
        if not asked:
            asked, top = True, _toplevel(specs.root)
        if top is None:
            out.append(
                Freshness(id=doc.id, verified_against=stamp, commits_since=None, stale=False, note="the source is not in a git repository")
            )
            continue
        out.append(_fresh(Path(top), doc.id, stamp, paths))
    return out


def _relative(path: str) -> bool:
    return bool(path) and not path.startswith("/") and ".." not in path.split("/") and "\x00" not in path


def _toplevel(root: str) -> str | None:
    folder = root if os.path.isdir(root) else os.path.dirname(root)
    try:
        return command.line(Path(folder), "rev-parse", "--show-toplevel") or None
    except VaultError:
        return None


def _fresh(top: Path, spec_id: str, stamp: str, paths: list[str]) -> Freshness:
    try:
        count = int(command.line(top, "rev-list", "--count", f"{stamp}..HEAD", "--", *paths))
        dirty = command.run(top, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths, limit=1024 * 1024).stdout
    except VaultError:
        return Freshness(id=spec_id, verified_against=stamp, commits_since=None, stale=False, note="the commit is not in the repository")
    except ValueError:
        return Freshness(id=spec_id, verified_against=stamp, commits_since=None, stale=False, note="git gave no count")
    changed = len([e for e in dirty.split(b"\0") if e])
    return Freshness(id=spec_id, verified_against=stamp, commits_since=count, changed_files=changed, stale=count > 0 or changed > 0)


def stale_findings(specs: SpecSet, fresh: list[Freshness], require_fresh: bool) -> list[SpecFinding]:
    by_id = specs.by_id()
    out = []
    for f in fresh:
        if f.stale and f.id in by_id:
            message = f"{f.commits_since} commits and {f.changed_files} uncommitted changes touch its paths since {f.verified_against[:12]}"
            out.append(_finding(specs, by_id[f.id], ERROR if require_fresh else WARNING, SpecCode.STALE, message, field="verified-against"))
    return out
