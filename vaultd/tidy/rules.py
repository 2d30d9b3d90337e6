"""The frontmatter and section rules of ``vault.tidy`` (T01-T06), and the order they run in.

The rules port vault-mem's migration: its older writers escaped strings, spelled enums freely,
used keys the schema renamed or retired, prefixed source paths with the workspace folder, left
topics without a body section and wrote dated ``## Connections`` sections. A rule that cannot be
sure (a confidence no table maps, a key it does not know, a ``## Topics`` list that disagrees with
the frontmatter) reports and changes nothing. Escapes apply in every vault (the value read is the
same); the others are the typed profile's, since an open vault's keys are its user's own.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from protocol.issue_codes import IssueCode
from protocol.methods.tidy import TidyRule
from vaultd.policy.schema import CONFIDENCES, STATUSES, NoteType, is_schema_key, topic_names
from vaultd.tidy import sections
from vaultd.tidy.model import shown
from vaultd.tidy.redact import redact_secrets
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit, key_spans, rename_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from vaultd.tidy.model import Work

#: Old confidence spellings and the schema's value for each (vaultd's scale: speculative,
#: tentative, likely, proven; vault-mem's lowest tier, experimental, is tentative here).
CONFIDENCE_MAP: Final = {
    "confirmed": "proven",
    "verified": "proven",
    "observed": "likely",
    "experimental": "tentative",
    "possible": "speculative",
    "web_unverified": "speculative",
}
CREATED_FROM: Final = ("date", "record_date")
DECIDED_FROM: Final = ("decided_date", "decision_date", "decided")
LINK_KEYS: Final = ("related", "relatedMeetings", "github")
DROPPED_KEYS: Final = (
    "origin",
    "ideation_stage",
    "keywords",
    "priority",
    "deadline",
    "completedDate",
    "taskSourceType",
    "submission_status",
)
WORKSPACE_PREFIX: Final = "work/"
_SENTINEL: Final = "vaultd-tidy-reemit"
_WIKI_VALUE = re.compile(r"^\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]$")
_JOIN = re.compile(r"\s*[,;]\s*")


def _data(work: Work) -> dict[str, Any]:
    return work.parsed().data or {}


def _key_line(work: Work, key: str) -> int:
    span = key_spans(work.text).get(key)
    return work.line_of(span[0]) if span else 1


def _set(work: Work, key: str, value: Any) -> None:
    work.text = emit(work.text, {key: value})


def _unset(work: Work, key: str) -> None:
    work.text = emit(work.text, {}, [key])


def escapes(work: Work) -> None:
    """T01: a value written with YAML escapes or a trailing-backslash wrap, re-emitted plainly."""
    header, _ = frontmatter.split(work.text)
    if header is None or "\\" not in header or '"' not in header:
        return  # nothing escaped: the header is not even mapped to its keys
    data = _data(work)
    for key, (start, end) in key_spans(work.text).items():
        raw = work.text[start:end]
        if "\\" not in raw or '"' not in raw:
            continue
        value = data.get(key)
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) and "\n" not in v and "\r" not in v for v in items):
            work.report(IssueCode.T01, work.line_of(start), f"{key}: an escaped value over several lines; rewrite it by hand")
            continue
        before = work.text
        work.text = emit(emit(work.text, {key: _SENTINEL}), {key: value})
        if work.text != before:
            work.changed(IssueCode.T01, work.line_of(start), f"{key}: re-emitted without escapes")


def _confidence(value: str) -> str | None:
    parts = [p.strip().casefold() for p in value.split("|")]
    mapped = [CONFIDENCE_MAP.get(p, p) for p in parts]
    if not all(m in CONFIDENCES for m in mapped):
        return None
    return min(mapped, key=CONFIDENCES.index)


def enums(work: Work) -> None:
    """T02: confidence, status and type spelled the old way, mapped to the schema's values."""
    data = _data(work)
    allowed: dict[str, tuple[str, ...]] = {"confidence": CONFIDENCES, "status": STATUSES, "type": tuple(NoteType)}
    for key, values in allowed.items():
        value = data.get(key)
        if not isinstance(value, str) or value in values:
            continue
        new = _confidence(value) if key == "confidence" else (value.strip().casefold() if value.strip().casefold() in values else None)
        line = _key_line(work, key)
        if new is None:
            work.report(IssueCode.T02, line, f"{key}: {shown(value)} is not one of {', '.join(values)}; choose one by hand")
            continue
        _set(work, key, new)
        work.changed(IssueCode.T02, line, f"{key}: {shown(value)} -> {new}")


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _is_reference(item: str) -> bool:
    """A source reference rather than a note: a URL, a memory id, or a path with a folder."""
    return "://" in item or item.startswith("mem:") or ("/" in item and not any(c.isspace() for c in item))


def _link_key(work: Work, key: str, value: Any) -> None:
    links: list[str] = []
    sources: list[str] = []
    kept: list[Any] = []
    for item in _as_list(value):
        text = item.strip() if isinstance(item, str) else None
        wiki = _WIKI_VALUE.match(text) if text else None
        if wiki and work.resolves(wiki.group(1).strip()):
            links.append(wiki.group(1).strip())
        elif text and not wiki and _is_reference(text):
            sources.append(text)
        elif text and not wiki and work.resolves(text):
            links.append(text)
        else:
            kept.append(item)
    line = _key_line(work, key)
    if not links and not sources:
        work.report(IssueCode.T03, line, f"{key}: names no note and no source path; move it by hand")
        return
    if kept:
        _set(work, key, kept)
        work.report(IssueCode.T03, line, f"{key}: {len(kept)} value(s) name no note; kept")
    else:
        _unset(work, key)
    if sources:
        current = _as_list(_data(work).get("source"))
        joined = current + [s for s in sources if s not in current]
        _set(work, "source", joined if len(joined) > 1 else joined[0])
        work.changed(IssueCode.T03, line, f"{key}: {len(sources)} path(s) joined source")
    if links:
        present = set(sections.links_in(sections.lines_of(work.text)))
        new = [t for t in links if t not in present]
        if new:
            work.text, at = sections.add_to_section(work.text, sections.RELEVANT, [f"- [[{t}]]" for t in new], before=sections.TOPICS)
            work.changed(IssueCode.T03, at, f"{key}: {len(new)} link(s) moved to ## {sections.RELEVANT}")
        else:
            work.changed(IssueCode.T03, line, f"{key}: dropped; its links are in the body already")


def keys(work: Work) -> None:
    """T03: renamed keys get their new name, retired ones go, links and paths move where they live now."""
    for old in CREATED_FROM:
        data = _data(work)
        if old not in data:
            continue
        line = _key_line(work, old)
        if "created" not in data:
            work.text = rename_key(work.text, old, "created")
            work.changed(IssueCode.T03, line, f"{old} -> created")
        elif str(data[old]) == str(data["created"]):
            _unset(work, old)
            work.changed(IssueCode.T03, line, f"{old}: dropped, equal to created")
        else:
            work.report(IssueCode.T03, line, f"{old}: {shown(data[old])} differs from created; keep one by hand")
    data = _data(work)
    if "alias" in data:
        line = _key_line(work, "alias")
        if "aliases" in data:
            work.report(IssueCode.T03, line, "alias: the note has aliases too; merge them by hand")
        else:
            work.text = rename_key(work.text, "alias", "aliases")
            work.changed(IssueCode.T03, line, "alias -> aliases")
    for old in DECIDED_FROM:
        data = _data(work)
        if old not in data:
            continue
        line = _key_line(work, old)
        if data.get("type") != NoteType.DECISION or "decided_at" in data:
            work.report(IssueCode.T03, line, f"{old}: decided_at is for one decision note each; move it by hand")
        else:
            work.text = rename_key(work.text, old, "decided_at")
            work.changed(IssueCode.T03, line, f"{old} -> decided_at")
    for key in LINK_KEYS:
        data = _data(work)
        if key in data:
            _link_key(work, key, data[key])
    for key in DROPPED_KEYS:
        data = _data(work)
        if key in data:
            line = _key_line(work, key)
            _unset(work, key)
            work.changed(IssueCode.T03, line, f"{key}: dropped (was {shown(data[key])})")
    data = _data(work)
    for key in data:
        if not is_schema_key(key, data):
            work.report(IssueCode.T03, _key_line(work, key), f"{key}: not a key of the typed schema; rename or remove it by hand")


def _source_items(value: str) -> list[str]:
    """A source string as the references it holds: prefix stripped, joined workspace paths split."""
    parts = [p for p in _JOIN.split(value.strip()) if p]
    if len(parts) > 1 and all("://" not in p and not p.startswith("mem:") and not any(c.isspace() for c in p) for p in parts):
        return [p.removeprefix(WORKSPACE_PREFIX) for p in parts]
    return [value.removeprefix(WORKSPACE_PREFIX) if "://" not in value and not value.startswith("mem:") else value]


def sources_rule(work: Work) -> None:
    """T04: ``source`` without the workspace prefix, joined paths split into a list."""
    value = _data(work).get("source")
    if value is None:
        return
    items = [item for v in _as_list(value) for item in (_source_items(v) if isinstance(v, str) else [v])]
    new: Any = items if isinstance(value, list) or len(items) > 1 else items[0]
    if new != value:
        line = _key_line(work, "source")
        _set(work, "source", new)
        work.changed(IssueCode.T04, line, f"source: {len(items)} reference(s) without the {WORKSPACE_PREFIX} prefix, one each")


def topics(work: Work) -> None:
    """T05: frontmatter topics without a ``## Topics`` section get one; a disagreeing one is reported."""
    names = topic_names(_data(work).get("topics"))
    if not names:
        return
    section = sections.find(work.text, sections.TOPICS)
    if section is None:
        work.text, at = sections.add_to_section(work.text, sections.TOPICS, [f"- [[{n}]]" for n in names])
        work.changed(IssueCode.T05, at, f"## {sections.TOPICS} added, listing {len(names)} topic(s)")
        return
    listed = sections.links_in(sections.lines_of(work.text)[section.start + 1 : section.end])
    if {n.casefold() for n in listed} != {n.casefold() for n in names}:
        work.report(IssueCode.T05, section.start + 1, f"## {sections.TOPICS} lists other maps than topics; make them agree by hand")


def connections(work: Work) -> None:
    """T06: each ``## Connections (...)`` section folded into ``## Relevant Notes``."""
    while True:
        section = next((s for s in sections.sections(work.text) if s.title.casefold().startswith("connections")), None)
        if section is None:
            return
        line = section.start + 1
        work.text, body = sections.remove_section(work.text, section)
        relevant = sections.find(work.text, sections.RELEVANT)
        present = set(sections.links_in(sections.lines_of(work.text)[relevant.start + 1 : relevant.end])) if relevant else set()
        moved = []
        for raw in body:
            text = raw.rstrip("\r\n")
            targets = sections.links_in([text])
            if targets and all(t in present for t in targets):
                continue
            present.update(targets)
            moved.append(text)
        while moved and not moved[0].strip():
            moved.pop(0)
        while moved and not moved[-1].strip():
            moved.pop()
        if moved:
            work.text, _ = sections.add_to_section(work.text, sections.RELEVANT, moved, before=sections.TOPICS)
        work.changed(IssueCode.T06, line, f"## {section.title} folded into ## {sections.RELEVANT} ({len(moved)} line(s) moved)")


#: Every rule in the order it runs: secrets first (so no later rule moves or echoes one), then keys
#: (a renamed key may then be re-spelled), values, and the body's sections last.
ORDER: Final[tuple[tuple[TidyRule, Callable[[Work], None], bool], ...]] = (
    (TidyRule.SECRETS, redact_secrets, False),
    (TidyRule.KEYS, keys, True),
    (TidyRule.ENUMS, enums, True),
    (TidyRule.SOURCES, sources_rule, True),
    (TidyRule.ESCAPES, escapes, False),
    (TidyRule.CONNECTIONS, connections, True),
    (TidyRule.TOPICS, topics, True),
)


def tidy(work: Work, rules: Iterable[TidyRule]) -> None:
    """Run the chosen rules over one note, in :data:`ORDER`; the typed profile's only in a typed vault.

    Raises:
        ValidationFailed: VALIDATION (V01), the note's header cannot be edited in place.
    """
    chosen = set(rules)
    for rule, run, typed_only in ORDER:
        if rule in chosen and (work.typed or not typed_only):
            run(work)
