"""template.list: the notes of the vault's templates folder, as Obsidian's template picker lists
them (the folder from ``templates.json``, read on each call). ``template.insert`` is an operation
(:mod:`vaultd.ops.template_insert`)."""

from __future__ import annotations

import anyio

from protocol.methods import templates
from protocol.methods.templates import MAX_TEMPLATES_LISTED, TemplateInfo, TemplateListParams, TemplateListResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.obsidian.settings import read_settings


@handles(templates.TEMPLATE_LIST)
async def template_list(ctx: CallContext, params: TemplateListParams) -> TemplateListResult:
    """The templates the caller may see, by name; none when the vault has no templates folder."""
    live, view = await live_view(ctx, params.vault)
    settings = await anyio.to_thread.run_sync(read_settings, live.root)
    folder = settings.templates.folder
    if not folder:
        return TemplateListResult(folder="", templates=[], truncated=False)
    prefix = folder + "/"
    paths = sorted(p for p in live.index.notes if p.startswith(prefix) and view.visible(p))
    found = [TemplateInfo(name=p[len(prefix) : -3], path=p, size=live.index.notes[p].size) for p in paths[:MAX_TEMPLATES_LISTED]]
    return TemplateListResult(folder=folder, templates=found, truncated=len(paths) > MAX_TEMPLATES_LISTED)
