"""spec.add, spec.remove, spec.list and the spec reads (get, graph, grep, validate).

A source is registered on its vault's entry in the registry, under the vault's writer like every
settings change, so no operation plans with one list of sources and applies with another. Every
read walks the source afresh (bounded by :mod:`vaultd.specs.documents`), so a spec edited in its
repository counts at once; writes of specs inside the vault are operations
(:mod:`vaultd.ops.spec_write`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.methods import specs as methods
from protocol.methods.specs import (
    NoteRef,
    SpecAddParams,
    SpecGetParams,
    SpecGetResult,
    SpecGraphParams,
    SpecGraphResult,
    SpecGrepParams,
    SpecGrepResult,
    SpecHit,
    SpecListParams,
    SpecListResult,
    SpecNode,
    SpecRemoveParams,
    SpecSource,
    SpecSourceInfo,
    SpecValidateParams,
    SpecValidateResult,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import Ambiguous, ConfigError, InvalidParams, NotFound, ValidationFailed
from vaultd.policy.visibility import Visibility
from vaultd.specs import checks, graph, registered
from vaultd.specs.documents import headings, page, section

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.common import Channel
    from protocol.methods.vaults import VaultEntry
    from vaultd.registry.config import Config
    from vaultd.runtime import VaultRuntime
    from vaultd.specs.documents import SpecDoc, SpecSet

MAX_EXCERPT = 200


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def canonical_source(raw: str) -> str:
    """The source's canonical absolute path: an existing folder or Markdown file.

    Raises:
        InvalidParams: INVALID_PARAMS, the path is relative or holds a NUL byte.
        NotFound: NOT_FOUND, nothing is there.
        ValidationFailed: VALIDATION, it is neither a folder nor a Markdown file.
    """
    if "\x00" in raw or not os.path.isabs(raw):
        raise InvalidParams(f"a spec source's path must be absolute: {raw!r}")
    try:
        resolved = str(Path(raw).resolve(strict=True))
        st = os.stat(resolved)
    except (OSError, RuntimeError) as exc:
        raise NotFound(f"nothing at {raw}") from exc
    if stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and resolved.lower().endswith(".md")):
        return resolved
    raise ValidationFailed(f"{raw} is neither a folder nor a Markdown file")


def check_source(config: Config, entry: VaultEntry, source: SpecSource, home: Path) -> None:
    """Refuse a source that would let a read see what its vault may not: another vault's notes,
    the home, or a folder holding a vault; and a repeated id or path.

    Raises:
        ConfigError: VALIDATION, the id or path is taken, or the path overlaps a vault or the home.
    """
    for other in entry.specs:
        if other.id == source.id:
            raise ConfigError(f"vault {entry.id!r} already has a spec source {source.id!r} (at {other.path})")
        if other.path == source.path:
            raise ConfigError(f"{source.path} is already spec source {other.id!r}")
    for vault in config.vaults:
        if vault.id != entry.id and _inside(source.path, vault.path):
            raise ConfigError(f"{source.path} is inside vault {vault.id!r}; register it on that vault")
        if _inside(vault.path, source.path) and source.path != vault.path:
            raise ConfigError(f"{source.path} holds vault {vault.id!r}; register a folder of specs, not one around a vault")
        if source.path == vault.path and vault.id != entry.id:
            raise ConfigError(f"{source.path} is vault {vault.id!r}")
    home_real = str(home.resolve())
    if _inside(home_real, source.path) or _inside(source.path, home_real):
        raise ConfigError(f"{source.path} overlaps the vaultd home {home_real}")
    rel = registered.inside_rel(entry, source)
    if rel and any(part.startswith(".") for part in rel.split("/")):
        raise ConfigError(f"{rel} is a hidden folder of the vault (vaultd's state, .obsidian, .git, the trash); specs live elsewhere")


def _info(entry: VaultEntry, source: SpecSource, found: SpecSet | None) -> SpecSourceInfo:
    return SpecSourceInfo(
        vault=entry.id,
        source=source,
        inside=registered.inside_rel(entry, source) is not None,
        specs=len(found.docs) if found else 0,
        skipped=found.skipped[:50] if found else [],
    )


def _entry_of(config: Config, vault_id: str) -> VaultEntry:
    """The vault's entry in the registry as read now.

    Raises:
        NotFound: NOT_FOUND, the vault is no longer registered.
    """
    for e in config.vaults:
        if e.id == vault_id:
            return e
    raise NotFound(f"no vault {vault_id!r} is registered")


async def _save(ctx: CallContext, runtime: VaultRuntime, change: Callable[[Config, VaultEntry], VaultEntry]) -> VaultEntry:
    """Apply ``change`` (entry -> entry, checked against the registry) under the vault's writer.

    Raises:
        NotFound: NOT_FOUND, the vault is no longer registered.
    """
    vault_id = runtime.entry.id
    saved: list[VaultEntry] = []

    def update(config: Config) -> Config:
        entry = _entry_of(config, vault_id)
        after = change(config, entry)
        saved.append(after)
        return msgspec.structs.replace(config, vaults=[after if e.id == vault_id else e for e in config.vaults])

    async with runtime.writer:
        await anyio.to_thread.run_sync(ctx.host.config.update, update)
        runtime.entry = saved[0]
    return saved[0]


@handles(methods.SPEC_ADD)
async def spec_add(ctx: CallContext, params: SpecAddParams) -> SpecSourceInfo:
    """Register a spec source on a vault; its specs are read once now, so a source over the
    bounds is refused here rather than at its first read.

    Raises:
        ConfigError: VALIDATION, the id or path is taken or overlaps a vault or the home.
        NotFound: NOT_FOUND, nothing is at the path, or the vault is gone.
        LimitExceeded: LIMIT, the source is over the read bounds.
    """
    runtime = ctx.host.vault(params.vault)
    path = await anyio.to_thread.run_sync(canonical_source, params.path)
    source = SpecSource(id=params.id, path=path)
    # Checked before the first read too, so a folder around a vault or the home is never walked.
    config = await anyio.to_thread.run_sync(ctx.host.config.load)
    check_source(config, _entry_of(config, runtime.entry.id), source, ctx.host.home)
    found = await anyio.to_thread.run_sync(registered.read, runtime.entry, source, ctx.channel)

    def change(config: Config, entry: VaultEntry) -> VaultEntry:
        """The entry with the source added, checked against the registry as it is at save time.

        Raises:
            ConfigError: VALIDATION, the source is taken or overlaps, or the vault has its most sources.
        """
        check_source(config, entry, source, ctx.host.home)
        if len(entry.specs) >= methods.MAX_SPEC_SOURCES:
            raise ConfigError(f"vault {entry.id!r} has {methods.MAX_SPEC_SOURCES} spec sources, the most it may")
        return msgspec.structs.replace(entry, specs=[*entry.specs, source])

    entry = await _save(ctx, runtime, change)
    return _info(entry, source, found)


@handles(methods.SPEC_REMOVE)
async def spec_remove(ctx: CallContext, params: SpecRemoveParams) -> SpecSourceInfo:
    """Unregister a spec source; its files stay where they are.

    Raises:
        NotFound: NOT_FOUND, the vault has no such source.
    """
    runtime = ctx.host.vault(params.vault)
    gone = registered.chosen(runtime.entry, params.id)[0]

    def change(config: Config, entry: VaultEntry) -> VaultEntry:
        del config
        registered.chosen(entry, params.id)
        return msgspec.structs.replace(entry, specs=[s for s in entry.specs if s.id != params.id])

    entry = await _save(ctx, runtime, change)
    return _info(entry, gone, None)


@handles(methods.SPEC_LIST)
async def spec_list(ctx: CallContext, params: SpecListParams) -> SpecListResult:
    runtime = ctx.host.vault(params.vault)
    entry = runtime.entry
    out = []
    for source in entry.specs:
        try:
            found: SpecSet | None = await anyio.to_thread.run_sync(registered.read, entry, source, ctx.channel)
        except (NotFound, ValidationFailed):
            found = None
        out.append(_info(entry, source, found))
    return SpecListResult(sources=out)


async def _read_all(
    ctx: CallContext, vault: str | None, source: str | None, *, none_ok: bool = False
) -> tuple[VaultRuntime, list[SpecSet]]:
    """Every source the call names, read; ``none_ok``: a vault with no source at all reads as
    none (a search over nothing finds nothing) rather than NOT_FOUND."""
    runtime = ctx.host.vault(vault)
    entry = runtime.entry
    if none_ok and source is None and not entry.specs:
        return runtime, []
    sets = [await anyio.to_thread.run_sync(registered.read, entry, s, ctx.channel) for s in registered.chosen(entry, source)]
    return runtime, sets


def _find(sets: list[SpecSet], spec_id: str) -> tuple[SpecSet, SpecDoc]:
    """The source and spec with ``spec_id``, else the one spec whose title (or H1) is it, in any case.

    Raises:
        NotFound: NOT_FOUND, no spec has that id or title.
        Ambiguous: AMBIGUOUS, several specs have it; name the source, or use the id.
    """
    hits = [(s, doc) for s in sets if (doc := s.by_id().get(spec_id)) is not None]
    if not hits:
        wanted = spec_id.lstrip("#").strip().casefold()
        hits = [(s, doc) for s in sets for doc in s.by_id().values() if _heading_of(doc).casefold() == wanted]
    if not hits:
        raise NotFound(f"no spec has the id or title {spec_id!r}; see 'vaultctl spec grep'")
    if len(hits) > 1:
        raise Ambiguous(
            f"{len(hits)} specs answer to {spec_id!r}; name the source, or use the id",
            candidates=[f"{s.source}:{doc.id}" for s, doc in hits][:20],
        )
    return hits[0]


def _heading_of(doc: SpecDoc) -> str:
    """What a spec is called: its title, else its first H1."""
    title = doc.scalar("title")
    if title:
        return title.strip()
    first = next((text for level, _, text in headings(doc.body) if level == 1), "")
    return first


def _notes_naming(runtime: VaultRuntime, channel: Channel, ids: set[str]) -> list[NoteRef]:
    """Vault notes whose ``specs`` property names one of ``ids``, that the caller may see."""
    live = runtime.live
    if live is None:
        return []
    view = Visibility.of(runtime.entry, channel)
    out = []
    for path, note in live.index.notes.items():
        named = (note.frontmatter or {}).get("specs")
        values = named if isinstance(named, list) else [named]
        for value in values:
            if isinstance(value, str) and (target := value.strip().removeprefix("[[").removesuffix("]]")) in ids and view.visible(path):
                out.append(NoteRef(note=path, spec=target))
    return sorted(out, key=lambda r: (r.spec, r.note))[: methods.MAX_SPEC_ROWS + 1]  # one past: the caller can tell it was cut


@handles(methods.SPEC_GET)
async def spec_get(ctx: CallContext, params: SpecGetParams) -> SpecGetResult:
    """A spec by id: its metadata, references both ways, children, the notes naming it, its
    freshness, and on request its body (or one section) a page at a time.

    Raises:
        NotFound: NOT_FOUND, no such spec, or no such section.
        Ambiguous: AMBIGUOUS, several sources have the id.
        InvalidParams: INVALID_PARAMS, the offset is not a character's start.
    """
    runtime, sets = await _read_all(ctx, params.vault, params.source)
    specs, doc = _find(sets, params.id)
    assert doc.id is not None
    all_edges = await anyio.to_thread.run_sync(graph.edges, specs)
    fresh = await anyio.to_thread.run_sync(checks.freshness, specs, [doc])
    rows = methods.MAX_SPEC_ROWS
    lists = (
        [e for e in all_edges if e.source == doc.id],
        [e for e in all_edges if e.target == doc.id],
        graph.children(all_edges, doc.id),
        [r.note for r in _notes_naming(runtime, ctx.channel, {doc.id})],
        [text for _, _, text in headings(doc.body)],
    )
    outgoing, backlinks, children, notes, sections = lists
    result = SpecGetResult(
        source=specs.source,
        id=doc.id,
        path=doc.path,
        sha256=doc.sha256,
        frontmatter=doc.meta,
        outgoing=outgoing[:rows],
        backlinks=backlinks[:rows],
        children=children[:rows],
        notes=notes[:rows],
        sections=sections[:rows],
        freshness=fresh[0] if fresh else None,
        truncated=any(len(items) > rows for items in lists),
    )
    if not params.body and params.section is None:
        return result
    text = doc.body
    if params.section is not None:
        part = section(text, params.section)
        if part is None:
            raise NotFound(f"spec {doc.id!r} has no heading {params.section!r}; its headings are in sections")
        text = part
    body, next_offset, size = page(text, params.offset, params.max_bytes)
    return msgspec.structs.replace(result, body=body, offset=params.offset, next_offset=next_offset, size=size)


@handles(methods.SPEC_GRAPH)
async def spec_graph(ctx: CallContext, params: SpecGraphParams) -> SpecGraphResult:
    """The specs around one, to a depth, and the vault notes that name them.

    Raises:
        NotFound: NOT_FOUND, no such spec.
        Ambiguous: AMBIGUOUS, several sources have the id.
        LimitExceeded: LIMIT, the source names more references than a graph holds.
    """
    runtime, sets = await _read_all(ctx, params.vault, params.source)
    specs, doc = _find(sets, params.id)
    assert doc.id is not None
    all_edges = await anyio.to_thread.run_sync(graph.edges, specs)
    docs = specs.by_id()
    reached, inside, truncated = graph.slice_of(docs, all_edges, doc.id, params.direction, params.edge, params.depth, params.limit)
    nodes = [
        SpecNode(
            id=i,
            source=specs.source,
            path=docs[i].path,
            type=docs[i].scalar("type"),
            title=docs[i].scalar("title"),
            status=docs[i].scalar("status"),
            depth=d,
        )
        for i, d in sorted(reached.items(), key=lambda kv: (kv[1], kv[0]))
    ]
    notes = _notes_naming(runtime, ctx.channel, set(reached))
    rows = methods.MAX_SPEC_ROWS
    return SpecGraphResult(
        nodes=nodes, edges=inside[: rows * 4], notes=notes[:rows], truncated=truncated or len(inside) > rows * 4 or len(notes) > rows
    )


def _match(doc: SpecDoc, params: SpecGrepParams) -> tuple[bool, int | None, str]:
    tags = doc.meta.get("tags")
    if params.type is not None and doc.meta.get("type") != params.type.value:
        return False, None, ""
    if params.status is not None and doc.meta.get("status") != params.status.value:
        return False, None, ""
    if params.tag is not None and not (isinstance(tags, list) and params.tag in tags):
        return False, None, ""
    if params.parent is not None and params.parent not in doc.links(methods.EdgeKind.PARENT):
        return False, None, ""
    query = params.query
    if not query.strip():
        return True, None, doc.scalar("title") or doc.path
    if params.literal:
        where = doc.text.find(query)
        if where < 0:
            return False, None, ""
    else:
        words = query.casefold().split()
        folded = doc.text.casefold()
        if not all(w in folded for w in words):
            return False, None, ""
        where = folded.find(words[0])
    line_no = doc.text.count("\n", 0, where) + 1
    start = doc.text.rfind("\n", 0, where) + 1
    end = doc.text.find("\n", where)
    return True, line_no, doc.text[start : end if end >= 0 else len(doc.text)].strip()[:MAX_EXCERPT]


@handles(methods.SPEC_GREP)
async def spec_grep(ctx: CallContext, params: SpecGrepParams) -> SpecGrepResult:
    """Specs matching words (or a literal substring) and metadata filters, a page at a time."""
    _, sets = await _read_all(ctx, params.vault, params.source, none_ok=True)
    hits: list[SpecHit] = []
    total = 0
    for specs in sets:
        for doc in specs.docs:
            if doc.id is None:
                continue
            found, line_no, excerpt = _match(doc, params)
            if not found:
                continue
            total += 1
            if params.offset < total <= params.offset + params.limit:
                hits.append(
                    SpecHit(
                        source=specs.source,
                        id=doc.id,
                        path=doc.path,
                        title=doc.scalar("title"),
                        type=doc.scalar("type"),
                        status=doc.scalar("status"),
                        line=line_no,
                        excerpt=excerpt,
                    )
                )
    after = params.offset + len(hits)
    return SpecGrepResult(hits=hits, total=total, next_offset=after if after < total else None)


@handles(methods.SPEC_VALIDATE)
async def spec_validate(ctx: CallContext, params: SpecValidateParams) -> SpecValidateResult:
    """Every problem of the vault's specs (or one source's), errors first, and their freshness."""
    _, sets = await _read_all(ctx, params.vault, params.source)
    found: list[methods.SpecFinding] = []
    fresh: list[methods.Freshness] = []
    skipped: list[str] = []
    for specs in sets:
        found += checks.findings(specs)
        now = await anyio.to_thread.run_sync(checks.freshness, specs, specs.docs)
        fresh += now
        found += checks.stale_findings(specs, now, params.require_fresh)
        skipped += [f"{specs.source}: {s}" for s in specs.skipped]
    found.sort(key=lambda f: (f.severity != checks.ERROR, f.source, f.path))
    errors = sum(1 for f in found if f.severity == checks.ERROR)
    return SpecValidateResult(
        ok=errors == 0,
        errors=errors,
        warnings=len(found) - errors,
        specs=sum(len(s.docs) for s in sets),
        findings=found[: params.limit],
        freshness=fresh[: methods.MAX_SPEC_ROWS],
        skipped=skipped[: methods.MAX_SPEC_ROWS],
        truncated=len(found) > params.limit or len(fresh) > methods.MAX_SPEC_ROWS or len(skipped) > methods.MAX_SPEC_ROWS,
    )
