"""source.capture: raw copies and source notes, one journaled operation for every item.

Each file's bytes become ``<attachment folder>/<sha256>.<ext>``: created once, never rewritten
(a copy already there with the same bytes is the capture's dedup; one with other bytes was
tampered with and refuses the capture, V25). Each gets a source note in the sources folder, or
the note already recording those bytes gets the new origin and page. URLs, YouTube videos and
OCR requests become consent plans: source notes in state ``planned`` saying what would be
fetched and by which runner. Nothing is fetched or run, and the input is never changed.
"""

from __future__ import annotations

import functools
import hashlib
import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_CAPTURE_BYTES, describe
from protocol.methods.sources import (
    CaptureDetail,
    CapturedSource,
    CaptureItem,
    CaptureParams,
    SourceKind,
    SourceState,
)
from protocol.methods.writes import LogType
from vaultd.errors import InvalidParams, LimitExceeded, ValidationFailed
from vaultd.ops.create import existing_twin, new_note_path
from vaultd.ops.sources import attachments
from vaultd.ops.sources.intake import Intake, one_input, take
from vaultd.sources.identifiers import doi_key
from vaultd.sources.ledger import SOURCE, ledger_kind, slug
from vaultd.sources.media import Media, metadata, sniff
from vaultd.sources.origins import BadUrl, is_youtube, normalize_url
from vaultd.txn.engine import read_current
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.ops import OpContext

NO_RUNNER = "none configured"
_EMBEDDED = frozenset({SourceKind.PDF, SourceKind.IMAGE})


@dataclass(slots=True)
class _Sources:
    """The vault's source notes as a capture looks them up, kept up to date by the capture."""

    by_sha: dict[str, str] = field(default_factory=dict)  #: sha256 -> the source note recording those bytes
    by_origin: dict[str, str] = field(default_factory=dict)  #: normalized plan URL -> its source note


@dataclass
class _Capture:
    """The plan being built, so items of one call see each other (two of the same bytes: one copy)."""

    ctx: OpContext
    params: CaptureParams
    changes: dict[str, Change] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)  #: casefolded paths created so far
    created: list[str] = field(default_factory=list)  #: the paths created so far, for the links to them
    found: list[CapturedSource] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    total: int = 0

    @functools.cached_property
    def _sources(self) -> _Sources:
        """Made on first use: a capture that never asks does not walk every note of the vault."""
        known = _Sources()
        for path, record in self.ctx.index.notes.items():
            data = record.frontmatter
            if ledger_kind(data) != SOURCE or data is None:
                continue
            if isinstance(sha := data.get("sha256"), str):
                known.by_sha.setdefault(sha, path)
            if data.get("state") == SourceState.PLANNED.value and isinstance(origin := data.get("origin"), str):
                known.by_origin.setdefault(origin, path)
        return known

    def source_for_sha(self, sha: str) -> str | None:
        return self._sources.by_sha.get(sha)

    def remember_sha(self, sha: str, note: str) -> None:
        """A later item of the same call with the same bytes updates this note instead of making another."""
        self._sources.by_sha.setdefault(sha, note)

    def remember_origin(self, origin: str, note: str) -> None:
        self._sources.by_origin.setdefault(origin, note)

    def plan_for_origin(self, origin: str) -> str | None:
        return self._sources.by_origin.get(origin)

    def new_path(self, folder: str, title: str, tag: str) -> str:
        """A new note path in ``folder``: the title's slug, with ``tag`` added if the name is taken.

        Raises:
            ValidationFailed: VALIDATION, every tagged name for the title is taken.
        """
        base = posixpath.join(folder, slug(title))
        for candidate in (f"{base}.md", f"{base}-{tag}.md", *(f"{base}-{tag}-{i}.md" for i in range(2, 100))):
            path = new_note_path(self.ctx, candidate)
            if path.casefold() not in self.names and existing_twin(self.ctx, path) is None:
                self.names.add(path.casefold())
                return path
        raise ValidationFailed(f"no free note name for {title!r} in {folder or 'the vault root'}")

    def put(self, change: Change) -> None:
        self.changes[change.path] = change
        if change.before is None:
            self.names.add(change.path.casefold())
            self.created.append(change.path)

    def link(self, path: str, source: str, *, embed: bool = False) -> str:
        """A body link from ``source`` to ``path`` in the vault's link format, counting the files
        this capture creates (a raw copy whose name is unique is named by its name alone)."""
        return self.ctx.link(path, source, embed=embed, created=self.created)

    def property_link(self, path: str, source: str) -> str:
        return self.ctx.property_link(path, source, created=self.created)


def _fields(ctx: OpContext, item: CaptureItem, *, title: str, kind: SourceKind, pages: list[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "ledger": SOURCE,
        "type": "reference",
        "title": title,
        "description": f"{kind.value} source recorded {ctx.today}",
        "source_kind": kind.value,
    }
    for key, value in (("authority", item.authority.value), ("independence", item.independence), ("citekey", item.citekey)):
        if value is not None:
            fields[key] = value
    if item.doi is not None:
        fields["doi"] = doi_key(item.doi)
    if item.arxiv_id is not None:
        fields["arxiv_id"] = item.arxiv_id
    fields["review"] = "unreviewed"
    fields["synthetic"] = item.synthetic
    if pages:
        fields["pages"] = pages
    return fields


def _capture_file(run: _Capture, item: CaptureItem, page: str | None) -> None:
    """Capture one file's bytes: the raw copy, deduplicated, and its source note.

    Raises:
        LimitExceeded: LIMIT, the operation's captured bytes would pass ``MAX_CAPTURE_BYTES``.
        InvalidParams: INVALID_PARAMS, an OCR plan for a file that is not an image or a PDF.
    """
    ctx = run.ctx
    got: Intake = take(ctx, item)
    run.total += len(got.data)
    if run.total > MAX_CAPTURE_BYTES:
        raise LimitExceeded(f"the capture holds {run.total} bytes; at most {describe(MAX_CAPTURE_BYTES)} in one operation")
    sha = hashlib.sha256(got.data).hexdigest()
    media: Media = sniff(got.data, got.name)
    meta = metadata(got.data, media)
    if meta.problem:
        run.warnings.append(Issue(code=IssueCode.V09, severity=Severity.WARNING, message=meta.problem))
    origin = item.origin or got.origin or "sent content"
    title = (
        item.title
        or meta.fields.get("doc_title")
        or (posixpath.splitext(got.name)[0] if got.name and got.name != "stdin" else f"Captured {media.kind.value}")
    )
    existing = run.source_for_sha(sha)
    roles = ctx.entry.folder_roles()
    note_path = existing or run.new_path(ctx.entry.intake_folder(), title, sha[:8])
    run.remember_sha(sha, note_path)
    if roles.raw is not None:  # the vault names its raw folder: every raw copy goes there
        folder = roles.raw.strip("/")
    else:
        folder, warning = attachments.attachment_folder(attachments.configured(ctx.root), posixpath.dirname(note_path))
        if warning:
            run.warnings.append(Issue(code=IssueCode.V04, severity=Severity.WARNING, message=warning))
    raw = posixpath.join(folder, f"{sha}.{media.ext}" if media.ext else sha)
    deduplicated = _raw_copy(run, raw, got.data, sha)
    raw_link = run.property_link(raw, note_path)
    if existing is None and note_path not in run.changes:
        fields = _fields(ctx, item, title=title, kind=media.kind, pages=[run.property_link(page, note_path)] if page else [])
        fields.update(
            {
                "sha256": sha,
                "size": len(got.data),
                "media_type": media.media_type,
                "captured": ctx.today,
                "origin": origin,
                "raw": raw_link,
                "state": SourceState.ACTIVE.value,
                **meta.fields,
                "created": ctx.today,
            }
        )
        shown = run.link(raw, note_path, embed=media.kind in _EMBEDDED)
        body = f"# {title}\n\n{shown}\n\nCaptured {ctx.today} from {origin}.\n"
        run.put(Change(path=note_path, before=None, after=emit(body, fields).encode("utf-8")))
    else:
        _add_origin(run, note_path, origin, page)
    run.found.append(
        CapturedSource(
            note=note_path,
            kind=media.kind,
            raw=raw,
            sha256=sha,
            size=len(got.data),
            media_type=media.media_type,
            deduplicated=deduplicated,
            metadata=meta.fields,
        )
    )
    if item.ocr:
        if media.kind not in (SourceKind.IMAGE, SourceKind.PDF):
            raise InvalidParams("an OCR plan is for an image or a PDF")
        # The plan's origin is the raw copy's link as its source note records it (the plan lands in
        # the same sources folder, so the link reads the same from there).
        _plan(
            run,
            item,
            SourceKind.OCR_PLAN,
            f"OCR of {title}",
            raw_link,
            page,
            what=lambda note: f"text recognition (OCR) of {run.link(raw, note)}",
        )


def _raw_copy(run: _Capture, raw: str, data: bytes, sha: str) -> bool:
    """Plan the raw copy unless those bytes are already there; True when they were (dedup).

    Raises:
        ValidationFailed: VALIDATION (V25), the raw file at that name holds other bytes than its
            name says.
    """
    if raw in run.changes:
        return True
    current = read_current(run.ctx.root, raw, MAX_CAPTURE_BYTES)
    if current is None:
        run.put(Change(path=raw, before=None, after=data))
        return False
    if hashlib.sha256(current).hexdigest() != sha:
        message = (
            f"{raw} does not hold the bytes its name says (changed since it was captured); restore it or move it away, then capture again"
        )
        raise ValidationFailed(f"refused: {message}", issues=[Issue(code=IssueCode.V25, path=raw, message=message)])
    return True


def _add_origin(run: _Capture, note_path: str, origin: str, page: str | None) -> None:
    """The note already recording these bytes gets the new origin and page (the path of the note
    the capture is for; nothing if it has them)."""
    change = run.changes.get(note_path)
    if change is not None:
        before, current = change.before, change.after
    else:
        before = current = run.ctx.read(note_path)
    if current is None:
        return
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError:
        return  # the source note is not text any more: nothing added, the index reports it
    data = frontmatter.parse(text).data or {}
    updates: dict[str, Any] = {}
    origins = [o for o in data.get("origins", []) if isinstance(o, str)] if isinstance(data.get("origins"), list) else []
    if origin != data.get("origin") and origin not in origins:
        updates["origins"] = [*origins, origin]
    pages = [p for p in data.get("pages", []) if isinstance(p, str)] if isinstance(data.get("pages"), list) else []
    page_link = run.property_link(page, note_path) if page else None
    if page_link and page_link not in pages:
        updates["pages"] = [*pages, page_link]
    if updates:
        run.changes[note_path] = Change(path=note_path, before=before, after=emit(text, updates).encode("utf-8"))


def _plan(
    run: _Capture, item: CaptureItem, kind: SourceKind, title: str, origin: str, page: str | None, *, what: Callable[[str], str]
) -> None:
    """A consent plan's note; ``what`` says, for the plan's note path, what would be run (a link
    in it is written from that note)."""
    ctx = run.ctx
    existing = run.plan_for_origin(origin)
    runner = run.params.runner or NO_RUNNER
    if existing is not None:
        _add_origin(run, existing, origin, page)
        run.found.append(CapturedSource(note=existing, kind=kind, deduplicated=True))
        return
    note_path = run.new_path(ctx.entry.intake_folder(), title, hashlib.sha256(origin.encode()).hexdigest()[:8])
    fields = _fields(ctx, item, title=title, kind=kind, pages=[run.property_link(page, note_path)] if page else [])
    fields.update({"origin": origin, "state": SourceState.PLANNED.value, "runner": runner, "created": ctx.today})
    body = (
        f"# {title}\n\n"
        f"A consent plan, recorded {ctx.today}: nothing has been fetched or run.\n\n"
        f"- What: {what(note_path)}\n- By: {runner}\n\n"
        "vaultd never runs it. Once the runner has produced a file, capture that file with its origin "
        "(`vaultctl capture FILE --origin ...`) and mark this plan superseded.\n"
    )
    run.put(Change(path=note_path, before=None, after=emit(body, fields).encode("utf-8")))
    run.remember_origin(origin, note_path)
    run.found.append(CapturedSource(note=note_path, kind=kind))


def _capture_url(run: _Capture, item: CaptureItem, page: str | None) -> None:
    """Record a URL as a consent plan: a note of what to fetch and by whom; vaultd fetches and runs
    nothing.

    Raises:
        InvalidParams: INVALID_PARAMS, the URL is not usable, or an OCR plan came with it.
    """
    assert item.url is not None
    try:
        url = normalize_url(item.url)
    except BadUrl as exc:
        raise InvalidParams(f"url: {exc}") from exc
    if item.ocr:
        raise InvalidParams("an OCR plan is for a captured image or PDF, not a URL")
    kind = SourceKind.YOUTUBE_PLAN if is_youtube(url) else SourceKind.URL_PLAN
    what = f"the video at {url} (YouTube)" if kind is SourceKind.YOUTUBE_PLAN else f"the page at {url}"
    _plan(run, item, kind, item.title or f"Fetch {url}", url, page, what=lambda _note: what)


def plan_capture(ctx: OpContext, params: CaptureParams) -> Plan:
    run = _Capture(ctx, params)
    page = ctx.find(params.note) if params.note else None
    for item in params.items:
        if one_input(item) == "url":
            _capture_url(run, item, page)
        else:
            _capture_file(run, item, page)
    changes = list(run.changes.values())
    files = sum(1 for s in run.found if s.raw is not None)
    plans = len(run.found) - files
    return Plan(
        op="source.capture",
        changes=changes,
        summary=f"captured {files} file(s) and {plans} plan(s) into {ctx.entry.intake_folder()}",
        warnings=run.warnings,
        log_type=LogType.INGEST.value,
        detail=CaptureDetail(sources=run.found),
    )


def capture_detail(ctx: OpContext, plan: Plan) -> CaptureDetail:
    detail = plan.detail
    return detail if isinstance(detail, CaptureDetail) else CaptureDetail(sources=[])
