"""Running a tool: call the daemon, bound the result, turn refusals into tool errors.

A refusal is a tool *result* with ``isError: true`` rather than a JSON-RPC error, because the
model has to see it: an issue list says which rule a write broke, a candidate list which note
was meant, and the model can correct the call.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.methods.common import Empty, Params
from protocol.methods.vaults import VAULT_LIST, Kind, VaultListResult
from vaultctl.client import CallError
from vaultctl.mcp.budget import DEFAULT_BUDGET, fit, fit_error
from vaultctl.mcp.errors import PAGING_FIELDS, ToolFailure, too_large
from vaultctl.mcp.schemas import VaultChoice

if TYPE_CHECKING:
    from collections.abc import Mapping

    from protocol.methods.spec import AnySpec
    from vaultctl.mcp.daemon_connection import DaemonConnection

log = logging.getLogger("vaultctl.mcp")

_encoder = msgspec.json.Encoder()
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})  #: what models take as image content


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool call produced: the structured value, its text form, and whether it failed."""

    structured: msgspec.Raw | dict[str, Any]
    text: str
    is_error: bool
    image: dict[str, Any] | None = None  #: an image a file read returned whole, as MCP image content

    @classmethod
    def failed(cls, failure: ToolFailure, budget: int = DEFAULT_BUDGET) -> ToolOutcome:
        """The error result, its issue and candidate lists cut to ``budget`` (the cut issues are
        counted in ``issues_omitted``, as the daemon counts those past its own bound)."""
        body = fit_error(failure.structured(), budget)
        return cls(body, _encoder.encode(body).decode(), True)

    def as_result(self, *, structured: bool) -> dict[str, Any]:
        """The ``tools/call`` result body; ``structured`` False for clients before 2025-06-18.

        An error result carries its ``{code, message, issues, issues_omitted, candidates}`` as JSON in the text
        content and no ``structuredContent``: the spec asks clients to validate structured content
        against the tool's ``outputSchema`` (MCP 2025-06-18, server/tools, "Output Schema"), which
        describes the tool's result, not a refusal, and strict clients (the TypeScript SDK, the
        Inspector) throw on the mismatch and hide the refusal from the user.
        """
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.text}]}
        if self.image is not None:
            result["content"].append(self.image)
        if structured and not self.is_error:
            result["structuredContent"] = self.structured
        result["isError"] = self.is_error
        return result


def run_tool(
    daemon: DaemonConnection, spec: AnySpec, params: Params, budget: int = DEFAULT_BUDGET, carry: Mapping[str, Any] | None = None
) -> ToolOutcome:
    """Call the daemon for one tool call, the result fitted to ``budget`` (:mod:`vaultctl.mcp.budget`);
    every failure comes back as an error outcome. ``carry``: the call's arguments that are not the
    method's (a family's selector), repeated in a fitted result's ``next``."""
    try:
        raw = daemon.call(spec, params)
        fitted = fit(spec, params, raw, budget, lambda smaller: daemon.call(spec, smaller), carry)
    except CallError as exc:
        return ToolOutcome.failed(ToolFailure(exc.data), budget)
    except ToolFailure as exc:
        return ToolOutcome.failed(exc, budget)
    if fitted.raw is None:
        return ToolOutcome.failed(too_large(fitted.full, budget, paging_fields(spec)), budget)
    if spec.name == "file.read":
        return _image_outcome(fitted.raw) or ToolOutcome(msgspec.Raw(fitted.raw), fitted.raw.decode(), False)
    return ToolOutcome(msgspec.Raw(fitted.raw), fitted.raw.decode(), False)


def _image_outcome(raw: bytes) -> ToolOutcome | None:
    """A whole image read by ``file.read`` as MCP image content (a model sees it as an image),
    its text form without the base64 a second time; None for anything else."""
    body = msgspec.json.decode(raw)
    if not (
        isinstance(body, dict)
        and body.get("encoding") == "base64"
        and body.get("mime") in _IMAGE_TYPES
        and body.get("offset") == 0
        and body.get("next_offset") is None
    ):
        return None
    image = {"type": "image", "data": body["content"], "mimeType": body["mime"]}
    text = _encoder.encode({**body, "content": "(the image follows as image content)"}).decode()
    return ToolOutcome(msgspec.Raw(raw), text, False, image)


def paging_fields(spec: AnySpec) -> list[str]:
    """The params of ``spec`` that make a result smaller, in the order to suggest them."""
    fields = spec.params.__struct_fields__
    return [name for name in PAGING_FIELDS if name in fields]


def vault_choice(daemon: DaemonConnection) -> VaultChoice | None:
    """The registered vaults and the default one, or None when the daemon cannot say.

    The tool list must not fail because of this: without it the ``vault`` argument keeps its
    plain pattern schema and the daemon still checks the id.
    """
    try:
        raw = daemon.call(VAULT_LIST, Empty())
    except (CallError, ToolFailure) as exc:
        log.warning("tools/list without the vault enum: %s", exc)
        return None
    vaults = msgspec.json.decode(raw, type=VaultListResult).vaults
    ids = tuple(v.entry.id for v in vaults)
    default = next((v.entry.id for v in vaults if v.entry.kind == Kind.PERSONAL), None)
    return VaultChoice(ids=ids, default=default)
