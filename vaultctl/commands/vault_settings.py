"""vault set and vault policy: change a vault's policies without editing config.json.

Both are the one method ``vault.set``: the first call shows every setting that would change, each
loosened one marked, and prints the exact command that confirms it; the confirming call carries
the fingerprint, so a policy is never relaxed by a command whose effect was not shown. Changes
apply live: the daemon uses them from the next call on.
"""

from __future__ import annotations

import json
import shlex
from typing import Annotated

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.methods import vaults
from protocol.methods.common import Empty
from protocol.methods.gate import AgentPolicyChange, Gate, OpClass
from protocol.methods.vaults import (
    FolderRoles,
    Kind,
    SchemaProfile,
    VaultEntry,
    VaultSetParams,
    VaultSetPreview,
    VaultSetResult,
    WritePolicy,
)
from protocol.methods.views import ViewName
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, call, emit, fail
from vaultctl.commands.vault_options import (
    CanonTableOpt,
    DeadLinksOpt,
    DenyPathOpt,
    DomainOpt,
    GitRawOpt,
    ParentKeyOpt,
    PiiOpt,
    PrivateOpt,
    RoleOpt,
    StampKeyOpt,
    canon_tables,
    folder_roles,
    pii_setting,
    stamp_keys,
)
from vaultctl.terminal import Escaped, command_line

IdArg = Annotated[str, typer.Argument(metavar="ID", help=doc(VaultSetParams, "id"))]
ConfirmOpt = Annotated[bool, typer.Option("--confirm", help=doc(VaultSetParams, "confirm"))]
FingerprintOpt = Annotated[str | None, typer.Option(help="The fingerprint the preview printed.")]

_CLASS_HELP = {
    OpClass.CREATE: "note.create",
    OpClass.APPEND: "note.append",
    OpClass.PATCH: "note.patch",
    OpClass.SET_FRONTMATTER: "note.set_frontmatter",
    OpClass.LINK: "note.link",
    OpClass.MOVE: "note.move (a rename rewrites backlinks)",
    OpClass.DELETE: "note.delete",
    OpClass.MERGE: "note.merge",
    OpClass.SUPERSEDE: "note.supersede",
    OpClass.WIDE: "any operation changing more than wide_files files",
    OpClass.UNDO_OWN: "op.undo of the agent session's own operation",
    OpClass.UNDO_OTHERS: "op.undo of anyone else's operation",
    OpClass.CAPTURE: "source.capture: raw copies and source notes",
    OpClass.CLAIM: "claim.add and claim.update",
    OpClass.VERDICT: "any write that accepts or rejects a claim",
    OpClass.FILE_READ: "file.read of a file (apply: allowed)",
    OpClass.FILE_WRITE: "file.write: a canvas, base or text file",
    OpClass.FILE_MOVE: "file.move and file.rename (embeds rewritten)",
    OpClass.FILE_DELETE: "file.delete: a file to .trash",
}


def _preview_text(vault_id: str, r: VaultSetResult, confirm_cmd: list[str]) -> str:
    if not r.changes:
        return f"vault {vault_id}: nothing to change; its settings are already so"
    rows = [(c.setting, c.before, c.after, "LOOSENS" if c.loosens else "") for c in r.changes]
    lines: list[str] = [render.table(["setting", "before", "after", ""], rows)]
    loosened = [c.setting for c in r.changes if c.loosens]
    if not isinstance(r, VaultSetPreview):
        lines.insert(0, f"vault {vault_id}: {len(r.changes)} setting(s) changed; in effect now")
        return render.compose(lines)
    lines.insert(0, f"vault {vault_id}: {len(r.changes)} setting(s) would change")
    if loosened:
        lines.append(f"{len(loosened)} loosened ({', '.join(loosened)}): agents or channels may do more, or less is screened")
    cmd = command_line([*confirm_cmd, "--confirm", "--fingerprint", r.fingerprint])
    lines.append(Escaped(f"to confirm, run:\n  {cmd}"))
    return render.compose(lines)


def _submit(params: VaultSetParams, confirm_cmd: list[str], as_json: bool) -> None:
    result = call(vaults.VAULT_SET, params)
    emit(result, as_json, lambda r: _preview_text(params.id, r, confirm_cmd))


def set_settings(
    vault_id: IdArg,
    kind: Annotated[Kind | None, typer.Option(help=doc(VaultSetParams, "kind"))] = None,
    write: Annotated[WritePolicy | None, typer.Option(help=doc(VaultSetParams, "write"))] = None,
    schema: Annotated[SchemaProfile | None, typer.Option(help=doc(VaultSetParams, "schema"))] = None,
    pii: PiiOpt = None,
    deny_path: DenyPathOpt = None,
    no_deny_paths: Annotated[bool, typer.Option("--no-deny-paths", help="Clear the deny paths.")] = False,
    private: PrivateOpt = None,
    no_private: Annotated[bool, typer.Option("--no-private", help="Clear the private paths.")] = False,
    stamp_key: StampKeyOpt = None,
    parent_key: ParentKeyOpt = None,
    dead_links: DeadLinksOpt = None,
    views: Annotated[
        str | None,
        typer.Option("--views", metavar="VIEWS", help="The generated views to keep in the vault: home,waiting,topics ('' for none)."),
    ] = None,
    session_notes: Annotated[
        str | None, typer.Option("--session-notes", metavar="FOLDER", help=doc(VaultSetParams, "session_notes"))
    ] = None,
    no_session_notes: Annotated[bool, typer.Option("--no-session-notes", help=doc(VaultSetParams, "no_session_notes"))] = False,
    domain: DomainOpt = None,
    no_domains: Annotated[bool, typer.Option("--no-domains", help="Declare no domains of the vault's own (the built-ins stay).")] = False,
    role: RoleOpt = None,
    no_roles: Annotated[bool, typer.Option("--no-roles", help="Give no folder a role.")] = False,
    git_raw: GitRawOpt = None,
    project: Annotated[
        list[str] | None,
        typer.Option("--project", metavar="ID", help=doc(VaultSetParams, "projects") + " Repeatable: the whole registry."),
    ] = None,
    no_projects: Annotated[bool, typer.Option("--no-projects", help="Keep no project registry: a log event may name any project.")] = False,
    canon_table: CanonTableOpt = None,
    no_canon_tables: Annotated[bool, typer.Option("--no-canon-tables", help="Name no canonical tables.")] = False,
    confirm: ConfirmOpt = False,
    fingerprint: FingerprintOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a vault's policies: a preview marking every loosened setting, then --confirm --fingerprint F."""
    if domain and no_domains:
        fail("--domain and --no-domains go alone", ExitStatus.USAGE)
    if role and no_roles:
        fail("--role and --no-roles go alone", ExitStatus.USAGE)
    if session_notes is not None and no_session_notes:
        fail("--session-notes and --no-session-notes go alone", ExitStatus.USAGE)
    if project and no_projects:
        fail("--project and --no-projects go alone", ExitStatus.USAGE)
    if canon_table and no_canon_tables:
        fail("--canon-table and --no-canon-tables go alone", ExitStatus.USAGE)
    if deny_path and no_deny_paths:
        fail("--deny-path and --no-deny-paths go alone", ExitStatus.USAGE)
    if private and no_private:
        fail("--private and --no-private go alone", ExitStatus.USAGE)
    pii_value, pii_default = pii_setting(pii)
    params = VaultSetParams(
        id=vault_id,
        kind=kind,
        write=write,
        schema=schema,
        pii=pii_value,
        pii_default=pii_default,
        deny_paths=[] if no_deny_paths else deny_path,
        private_paths=[] if no_private else private,
        stamp_keys=stamp_keys(stamp_key),
        parent_keys=parent_key or None,
        dead_links=dead_links,
        views=_views(views),
        session_notes=session_notes,
        no_session_notes=no_session_notes,
        domains=[] if no_domains else domain,
        roles=FolderRoles() if no_roles else folder_roles(role),
        git_raw=git_raw,
        projects=[] if no_projects else project,
        canon_tables=[] if no_canon_tables else canon_tables(canon_table),
        confirm=confirm,
        fingerprint=fingerprint,
    )
    cmd = ["vaultctl", "vault", "set", vault_id]
    for flag, value in (("--kind", kind), ("--write", write), ("--schema", schema), ("--pii", pii), ("--dead-links", dead_links)):
        if value is not None:
            cmd += [flag, str(value)]
    cmd += ["--no-deny-paths"] if no_deny_paths else [a for g in deny_path or [] for a in ("--deny-path", g)]
    cmd += ["--no-private"] if no_private else [a for g in private or [] for a in ("--private", g)]
    cmd += [a for k in stamp_key or [] for a in ("--stamp-key", k)]
    cmd += [a for k in parent_key or [] for a in ("--parent-key", k)]
    cmd += ["--views", views] if views is not None else []
    cmd += ["--session-notes", session_notes] if session_notes is not None else []
    cmd += ["--no-session-notes"] if no_session_notes else []
    cmd += ["--no-domains"] if no_domains else [a for d in domain or [] for a in ("--domain", d)]
    cmd += ["--no-roles"] if no_roles else [a for r in role or [] for a in ("--role", r)]
    cmd += [] if git_raw is None else ["--git-raw" if git_raw else "--no-git-raw"]
    cmd += ["--no-projects"] if no_projects else [a for p in project or [] for a in ("--project", p)]
    cmd += ["--no-canon-tables"] if no_canon_tables else [a for t in canon_table or [] for a in ("--canon-table", t)]
    _submit(params, cmd, as_json)


def _views(text: str | None) -> list[ViewName] | None:
    if text is None:
        return None
    try:
        return [ViewName(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        fail(f"--views takes {', '.join(v.value for v in ViewName)} (comma-separated), not {text!r}", ExitStatus.USAGE)


def _cell(text: str) -> tuple[OpClass, Gate]:
    name, sep, gate = text.partition("=")
    try:
        return OpClass(name.strip()), Gate(gate.strip())
    except ValueError:
        classes = ", ".join(c.value for c in OpClass)
        fail(f"{text!r}: write CLASS=GATE, CLASS one of {classes} and GATE apply, propose or refuse", ExitStatus.USAGE)


def _policy_text(entry: VaultEntry) -> str:
    policy = entry.agent_policy()
    default = msgspec.structs.replace(entry, agents=None).agent_policy()
    rows = [(c.value, policy.gate(c), default.gate(c), _CLASS_HELP[c]) for c in OpClass]
    lines: list[str] = [
        f"vault {entry.id} ({entry.kind}): what agents (the mcp channel) may do; people are never gated",
        render.table(["class", "agents", "default", "covers"], rows),
        render.fields(
            "hooks and bounds",
            [
                ("wide_files", policy.wide_files),
                ("guard", "on: agent hosts' own edit tools are refused on this vault" if policy.guard else "off"),
                ("session_context", "on: a session-start hook tells the agent about this vault" if policy.session_context else "off"),
                ("hot", ", ".join(policy.hot) + f" (at most {policy.hot_bytes} bytes)" if policy.hot else "off"),
            ],
        ),
        f"change a cell: vaultctl vault policy {shlex.quote(entry.id)} CLASS=apply|propose|refuse (a preview first)",
    ]
    return render.compose(lines)


def policy(
    vault_id: IdArg,
    cells: Annotated[list[str] | None, typer.Argument(metavar="[CLASS=GATE]...", help="Cells to change, e.g. move=apply.")] = None,
    wide_files: Annotated[
        int | None, typer.Option("--wide-files", min=1, max=1024, help="An operation changing more files is 'wide'.")
    ] = None,
    guard: Annotated[
        bool | None, typer.Option("--guard/--no-guard", help="Refuse agent hosts' own edit tools on this vault's files (the hook).")
    ] = None,
    session_context: Annotated[
        bool | None,
        typer.Option("--session-context/--no-session-context", help="Let the session-start hook tell agents about this vault."),
    ] = None,
    hot: Annotated[
        str | None,
        typer.Option("--hot", metavar="PARTS", help="The hot session context: ops,proposals,daily,pinned (comma-separated; '' for none)."),
    ] = None,
    hot_pinned: Annotated[str | None, typer.Option("--hot-pinned", metavar="PATH", help="The note the 'pinned' part shows.")] = None,
    hot_bytes: Annotated[int | None, typer.Option("--hot-bytes", min=0, max=8000, help="The hot summary's bound, in bytes.")] = None,
    default: Annotated[bool, typer.Option("--default", help="Go back to the kind's default policy (then apply any cells given).")] = False,
    confirm: ConfirmOpt = False,
    fingerprint: FingerprintOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the agent policy, or change it: a preview listing every loosened cell, then --confirm --fingerprint F."""
    changes: dict[str, object] = {c.value: g.value for c, g in (_cell(text) for text in cells or [])}
    for key, value in (("wide_files", wide_files), ("guard", guard), ("session_context", session_context)):
        if value is not None:
            changes[key] = value
    if hot is not None:
        changes["hot"] = [part.strip() for part in hot.split(",") if part.strip()]
    if hot_pinned is not None:
        changes["hot_pinned"] = hot_pinned
    if hot_bytes is not None:
        changes["hot_bytes"] = hot_bytes
    if not changes and not default:
        listed = call(vaults.VAULT_LIST, Empty()).vaults
        entry = next((v.entry for v in listed if v.entry.id == vault_id), None)
        if entry is None:
            fail(f"no vault {vault_id!r} is registered; see 'vaultctl vault list'", ExitStatus.REFUSED)
        if as_json:
            print(json.dumps({"vault": entry.id, "agents": msgspec.to_builtins(entry.agent_policy(), builtin_types=None)}))
            return
        render.say(_policy_text(entry))
        return
    try:
        agents = msgspec.convert(changes, AgentPolicyChange) if changes else None
    except msgspec.ValidationError as exc:
        fail(f"not a policy change: {exc}", ExitStatus.USAGE)
    params = VaultSetParams(id=vault_id, agents=agents, agents_default=default, confirm=confirm, fingerprint=fingerprint)
    cmd = ["vaultctl", "vault", "policy", vault_id, *(cells or [])]
    if wide_files is not None:
        cmd += ["--wide-files", str(wide_files)]
    if guard is not None:
        cmd.append("--guard" if guard else "--no-guard")
    if session_context is not None:
        cmd.append("--session-context" if session_context else "--no-session-context")
    if hot is not None:
        cmd += ["--hot", hot]
    if hot_pinned is not None:
        cmd += ["--hot-pinned", hot_pinned]
    if hot_bytes is not None:
        cmd += ["--hot-bytes", str(hot_bytes)]
    if default:
        cmd.append("--default")
    _submit(params, cmd, as_json)
