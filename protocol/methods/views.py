"""Generated views: notes vaultd writes into a vault that opts in, and keeps current.

A vault's ``views`` setting names them: ``home`` (``Home.md``: links to the other views and the
vault's folders with their note counts) ``waiting`` (``Waiting for you.md``: the pending
proposals and the running work, with links to the notes they touch) and ``topics``
(``Topics.md``: the topic navigator, the topic map's tree from its roots, three levels deep). vaultd regenerates each
through the write path when what it shows changes, a moment after the vault goes quiet. Each is
marked as generated: its frontmatter's ``vaultd_view`` holds the sha256 of the body vaultd wrote,
so a view a person has edited since is left alone and reported (``vaultctl status``,
``vaultctl views``, lint's L21), never overwritten.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.receipts import WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec
from protocol.methods.writes import WriteParams

VIEW_KEY = "vaultd_view"  #: the frontmatter key marking a generated view: the sha256 of its body as written


class ViewName(enum.StrEnum):
    HOME = "home"
    WAITING = "waiting"
    TOPICS = "topics"


VIEW_PATHS: dict[ViewName, str] = {ViewName.HOME: "Home.md", ViewName.WAITING: "Waiting for you.md", ViewName.TOPICS: "Topics.md"}


class ViewRefreshParams(WriteParams, kw_only=True):
    pass


class ViewRefreshDetail(msgspec.Struct, kw_only=True):
    written: Annotated[list[str], msgspec.Meta(description="Views written now (created or brought up to date).")] = []
    edited: Annotated[list[str], msgspec.Meta(description="Views a person edited since vaultd wrote them: left as they are.")] = []


VIEW_REFRESH: MethodSpec[ViewRefreshParams, WriteReceipt[ViewRefreshDetail]] = MethodSpec(
    "view.refresh",
    ViewRefreshParams,
    receipt_type(ViewRefreshDetail),
    "Regenerate the vault's generated views now (they also follow changes by themselves); edited ones are left alone.",
    Effect.IDEMPOTENT_WRITE,
)
SPECS = (VIEW_REFRESH,)
