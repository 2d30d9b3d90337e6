"""The vault registry's methods and the registry entry's shape (also the config file's)."""

from __future__ import annotations

import enum
from typing import Annotated, Literal, Union

import msgspec

from protocol.errors import Issue
from protocol.methods.common import Empty, Fingerprint, Params, Result, VaultId
from protocol.methods.editions import VolumesSettings
from protocol.methods.gate import ORG_DEFAULT, PERSONAL_DEFAULT, AgentPolicy, AgentPolicyChange
from protocol.methods.git_settings import DEFAULT_QUIET_S, GitMode, QuietSeconds, RemoteUrl, SyncInterval
from protocol.methods.indexing import BuildProgress, MeaningCoverage
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.specs import MAX_SPEC_SOURCES, SpecSource
from protocol.methods.views import ViewName


class Kind(enum.StrEnum):
    PERSONAL = "personal"
    ORG = "org"


class WritePolicy(enum.StrEnum):
    """Which channels may write: ``mcp`` allows CLI and MCP, ``cli`` the CLI only, ``none`` nobody."""

    MCP = "mcp"
    CLI = "cli"
    NONE = "none"


class SchemaProfile(enum.StrEnum):
    OPEN = "open"  #: structure only
    TYPED = "typed"  #: note types, required keys and enums


class DeadLinks(enum.StrEnum):
    """What a write meets when it adds a link to a note that does not exist yet (a forward link)."""

    WARN = "warn"  #: written, with a V03 warning in the receipt (the open profile's default)
    REFUSE = "refuse"  #: refused with V03, nothing written (the typed profile's default)


PiiAction = Literal["allow", "warn", "deny"]


class PiiSurfaces(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    notes: PiiAction | None = None
    log: PiiAction | None = None


PiiRule = PiiAction | PiiSurfaces


class PiiPattern(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
    regex: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
    action: PiiRule = "deny"


class PiiPolicy(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Per-category actions; an omitted category takes the vault default (allow personal, deny org)."""

    email: PiiRule | None = None
    phone: PiiRule | None = None
    patterns: Annotated[list[PiiPattern], msgspec.Meta(max_length=32)] = []
    allow: Annotated[list[Annotated[str, msgspec.Meta(max_length=256)]], msgspec.Meta(max_length=64)] = []


PiiSetting = Literal["allow", "deny"] | PiiPolicy
DenyPath = Annotated[str, msgspec.Meta(min_length=1, max_length=512, description="A vault-relative glob.")]
LogPath = Annotated[
    str,
    msgspec.Meta(
        min_length=4,
        max_length=1024,
        pattern=r"^(?!/)(?!.*(?:^|/)\.{1,2}(?:/|$))(?!.*//)[^\x00-\x1f\x7f\\]+\.md$",
        description="Where vaultd keeps the vault's operation log: a vault-relative .md path (default log.md).",
    ),
]
PrivatePath = DenyPath  #: the same glob, matched the same way; hides notes from agents instead
ParentKey = Annotated[
    str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$", description="A frontmatter key whose links name a note's parents.")
]
DEFAULT_PARENT_KEYS = ("up", "parent")  #: the topic map's parent keys: ``up``, and Breadcrumbs' ``parent``
StampKey = Annotated[
    str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$", description="A frontmatter key that records when a note was last edited.")
]


FolderPath = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=512,
        pattern=r"^(?!/)(?!.*(?:^|/)\.{1,2}(?:/|$))(?!.*//)[^\x00-\x1f\x7f\\]+$",
        description="A vault-relative folder.",
    ),
]


class SourcesSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Where the source and claim ledgers live. Raw copies go where Obsidian puts attachments
    (``.obsidian/app.json`` ``attachmentFolderPath``, relative to the source note when it says so)."""

    folder: FolderPath = "sources"  #: source notes
    claims: FolderPath = "claims"  #: claim notes


MAX_CANON_TABLES = 16  #: canonical tables a vault may name


class CanonTable(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A note holding a Markdown table whose chosen column lists the canonical names of things;
    a note a promotion writes is told the rows whose names it mentions (V19)."""

    note: Annotated[
        str,
        msgspec.Meta(
            min_length=4,
            max_length=512,
            pattern=r"^(?!/)(?!.*(?:^|/)\.{1,2}(?:/|$))(?!.*//)[^\x00-\x1f\x7f\\]+\.md$",
            description="The note's vault-relative path, ending in .md.",
        ),
    ]
    column: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=128, description="The header of the column of names; omitted, the first.")]
        | None
    ) = None

    def __str__(self) -> str:
        return self.note if self.column is None else f"{self.note}#{self.column}"


MAX_PROJECTS = 256  #: project ids a vault's registry may declare (a repeated id counts each time)
ProjectId = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[a-z0-9][a-z0-9-]{0,63}$", description="A log project id: a lowercase letter or digit, then up to 63 of a-z, 0-9, '-'."
    ),
]


#: Domains every vault has; a vault's ``domains`` add to them.
BUILTIN_DOMAINS = ("ai-practice", "operations", "people", "projects", "research", "teaching")
MAX_DOMAINS = 16  #: ids a vault may declare (a repeated id counts each time)
DomainId = Annotated[
    str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="A domain id: a lowercase letter, then up to 31 of a-z, 0-9, '-'.")
]


class FolderRoles(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """What some folders of the vault are for, so capture, lint and the agent gate treat them by it.

    Every role is optional and unset means today's behaviour: capture files source notes in the
    sources folder and raw copies where Obsidian puts attachments, and no folder is held back.
    """

    intake: FolderPath | None = None  #: the inbox: where capture files new source notes (unset: the sources folder)
    raw: FolderPath | None = None  #: where capture keeps raw copies; a file there is never changed once captured
    wiki: FolderPath | None = None  #: the notes written from sources (reported)
    meta: FolderPath | None = None  #: notes about the vault itself (reported)
    journal: Annotated[
        list[FolderPath], msgspec.Meta(max_length=16)
    ] = []  #: the user's journals: agents never write, lint reads as links only
    user_only: Annotated[list[FolderPath], msgspec.Meta(max_length=16)] = []  #: folders agents never write

    def agent_closed(self) -> list[str]:
        """The folders no agent may write: the user-only ones and the journals."""
        return [*self.user_only, *self.journal]


def in_folder(path: str, folder: str) -> bool:
    """Whether the vault-relative ``path`` lies in ``folder`` (the folder itself counts)."""
    folder = folder.strip("/")
    return path == folder or path.startswith(folder + "/")


class VaultEntry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One registered vault, as stored in config.json and as returned by the vault methods."""

    id: VaultId
    path: str
    kind: Kind = Kind.PERSONAL
    write: WritePolicy = WritePolicy.MCP
    schema: SchemaProfile = SchemaProfile.OPEN
    pii: PiiSetting | None = None  #: None: the kind's default
    deny_paths: Annotated[list[DenyPath], msgspec.Meta(max_length=64)] = []
    private_paths: Annotated[list[PrivatePath], msgspec.Meta(max_length=64)] = []  #: unseen over MCP
    log_path: LogPath | None = None  #: None: log.md, when that is free or already vaultd's log
    #: Keys an authored edit stamps with today's date: the first the note already has; in the typed
    #: profile the first of them is added when the note has none. Empty: never stamp.
    stamp_keys: Annotated[list[StampKey], msgspec.Meta(max_length=8)] = msgspec.field(default_factory=lambda: ["updated"])
    agents: AgentPolicy | None = None  #: None: the kind's default (see :meth:`agent_policy`)
    dead_links: DeadLinks | None = None  #: None: the profile's default (see :meth:`dead_link_rule`)
    sources: SourcesSettings | None = None  #: None: the default folders
    #: Frontmatter keys whose links name a note's parents in the topic map; several parents allowed.
    parent_keys: Annotated[list[ParentKey], msgspec.Meta(max_length=8)] = msgspec.field(default_factory=lambda: list(DEFAULT_PARENT_KEYS))

    git: GitMode = GitMode.OFF  #: how vaultd records the vault's history in its git repository
    remote: RemoteUrl | None = None  #: the remote vault.sync pushes to; origin must name exactly this
    snapshot_quiet_s: QuietSeconds = DEFAULT_QUIET_S
    sync_interval_s: SyncInterval | None = None  #: None: no background sync (vault.sync only)
    #: Spec sources the vault reads beside its notes (spec.add, spec.remove).
    specs: Annotated[list[SpecSource], msgspec.Meta(max_length=MAX_SPEC_SOURCES)] = []
    #: Notes vaultd generates in the vault and keeps current (opt-in; see protocol.methods.views).
    views: Annotated[list[ViewName], msgspec.Meta(max_length=4)] = []
    #: The vault folder vaultd writes each ended agent session's record into, as a note (opt-in;
    #: None: records stay in vaultd's home only). Agents may not write there.
    session_notes: FolderPath | None = None
    volumes: VolumesSettings | None = None  #: None: no journal volumes (see edition.configure)
    #: Domains on top of the built-ins, checked on every note's ``domain`` (V16).
    domains: Annotated[list[DomainId], msgspec.Meta(max_length=MAX_DOMAINS)] = []
    roles: FolderRoles | None = None  #: None: no folder has a role (today's behaviour)
    git_raw: bool = False  #: whether git checkpoints commit the raw copies capture keeps (off: left out)
    #: The project registry: the ids a log event's ``project`` may name ("-" always may). Empty: no
    #: registry, any well-formed id goes.
    projects: Annotated[list[ProjectId], msgspec.Meta(max_length=MAX_PROJECTS)] = []
    #: Canonical tables a promotion's new note is matched against (advisory, V19).
    canon_tables: Annotated[list[CanonTable], msgspec.Meta(max_length=MAX_CANON_TABLES)] = []

    def dead_link_rule(self) -> DeadLinks:
        """Whether a new link to no note is refused: so in the typed profile, warned in the open one."""
        if self.dead_links is not None:
            return self.dead_links
        return DeadLinks.REFUSE if self.schema is SchemaProfile.TYPED else DeadLinks.WARN

    def sources_settings(self) -> SourcesSettings:
        return self.sources or SourcesSettings()

    def effective_domains(self) -> list[str]:
        """The built-ins and the declared domains, each once, sorted."""
        return sorted({*BUILTIN_DOMAINS, *self.domains})

    def folder_roles(self) -> FolderRoles:
        return self.roles or FolderRoles()

    def intake_folder(self) -> str:
        """Where capture files new source notes: the intake role's folder, else the sources folder."""
        return self.folder_roles().intake or self.sources_settings().folder

    def agent_policy(self) -> AgentPolicy:
        """What agents (the ``mcp`` channel) may do here."""
        if self.agents is not None:
            return self.agents
        return ORG_DEFAULT if self.kind is Kind.ORG else PERSONAL_DEFAULT


class VaultState(enum.StrEnum):
    READY = "ready"
    INDEXING = "indexing"
    LOCKED = "locked"  #: another process holds the vault lock
    MISSING = "missing"  #: the folder is gone or no longer a folder
    ERROR = "error"


class SpecSourceHealth(msgspec.Struct, kw_only=True):
    """A registered spec source as status sees it: a source whose folder is gone reads as nothing."""

    id: str
    path: str
    missing: bool = False  #: the folder (or file) is gone: every read of it fails until it is back or removed


class VaultHealth(msgspec.Struct, kw_only=True):
    id: str
    path: str
    state: VaultState
    message: str = ""
    notes: int = 0
    pending_proposals: int = 0  #: agent proposals waiting for a person (filled by daemon.status)
    running_work: list[str] = []  #: agents' running work documents, one line each (filled by daemon.status)
    edited_views: list[str] = []  #: generated views a person edited: left alone (filled by daemon.status)
    progress: BuildProgress | None = None  #: while a build runs (state indexing, or a rebuild)
    meaning: MeaningCoverage | None = None  #: passage vectors, once the meaning filler runs for this vault
    domains: Annotated[list[str], msgspec.Meta(description="The domains a note's domain may name: the built-ins and the vault's own.")] = []
    roles: FolderRoles | None = None  #: the folders with a role, when the vault names any
    specs: list[SpecSourceHealth] = []  #: the vault's registered spec sources, each marked when its folder is gone


class VaultAddParams(Params):
    id: VaultId
    path: Annotated[str, msgspec.Meta(min_length=1, max_length=4096, description="An absolute folder path.")]
    kind: Annotated[Kind, msgspec.Meta(description="personal or org; an org vault denies personal data (PII) by default.")] = Kind.PERSONAL
    write: Annotated[
        WritePolicy, msgspec.Meta(description="Which channels may write: mcp (the CLI and agents), cli (the CLI only), none.")
    ] = WritePolicy.MCP
    schema: Annotated[SchemaProfile, msgspec.Meta(description="open (structure only) or typed (note types, required keys and enums).")] = (
        SchemaProfile.OPEN
    )
    pii: Annotated[
        PiiSetting | None, msgspec.Meta(description="allow, deny, or a policy per category and surface; omitted: the kind's default.")
    ] = None
    deny_paths: Annotated[list[DenyPath], msgspec.Meta(max_length=64, description="Vault-relative globs no write may touch.")] = []
    private_paths: Annotated[
        list[PrivatePath], msgspec.Meta(max_length=64, description="Vault-relative globs of notes agents (MCP) can neither see nor write.")
    ] = []
    log_path: LogPath | None = None
    agents: Annotated[
        AgentPolicy | None,
        msgspec.Meta(description="What agents (MCP) may apply, propose or not do, per operation class; omitted: the kind's default."),
    ] = None
    stamp_keys: (
        Annotated[
            list[StampKey], msgspec.Meta(max_length=8, description="Keys an edit stamps with today's date (default: updated); [] for none.")
        ]
        | None
    ) = None
    parent_keys: (
        Annotated[
            list[ParentKey],
            msgspec.Meta(
                min_length=1,
                max_length=8,
                description="Frontmatter keys whose links name a note's parents in the topic map (default: up, parent).",
            ),
        ]
        | None
    ) = None
    dead_links: Annotated[
        DeadLinks | None,
        msgspec.Meta(
            description="A write that adds a link to no note yet (a forward link): warn (written, reported) or refuse; "
            "omitted: refuse in the typed profile, warn in the open one."
        ),
    ] = None
    sources: Annotated[
        SourcesSettings | None, msgspec.Meta(description="Folders of the source and claim ledgers; omitted: sources/ and claims/.")
    ] = None
    git: Annotated[
        GitMode,
        msgspec.Meta(description="off, checkpoint (a commit per operation) or snapshot (and hand edits after a quiet period)."),
    ] = GitMode.OFF
    remote: RemoteUrl | None = None
    snapshot_quiet_s: QuietSeconds = DEFAULT_QUIET_S
    sync_interval_s: SyncInterval | None = None
    domains: Annotated[
        list[DomainId],
        msgspec.Meta(max_length=MAX_DOMAINS, description="Domains a note may name on top of the built-ins (at most 16)."),
    ] = []
    roles: Annotated[
        FolderRoles | None,
        msgspec.Meta(description="Folders with a role: intake, raw, wiki, meta, journal, user_only; omitted: none."),
    ] = None
    git_raw: Annotated[bool, msgspec.Meta(description="Let git checkpoints commit the raw copies capture keeps.")] = False
    projects: Annotated[
        list[ProjectId],
        msgspec.Meta(max_length=MAX_PROJECTS, description="The log project ids the vault declares; omitted: no registry, any id goes."),
    ] = []
    canon_tables: Annotated[
        list[CanonTable],
        msgspec.Meta(max_length=MAX_CANON_TABLES, description="Notes whose table lists canonical names, matched on promotion."),
    ] = []


class VaultInfo(Result):
    entry: VaultEntry
    health: VaultHealth
    warnings: Annotated[
        list[Issue],
        msgspec.Meta(
            description="What registering or changing the git settings found for the person to look at (R09: the repository's own "
            "git config names a command git runs; vaultd never runs it)."
        ),
    ] = []


class VaultListResult(Result):
    vaults: list[VaultInfo]


class VaultRemoveParams(Params):
    id: VaultId
    confirm: Annotated[bool, msgspec.Meta(description="Apply the removal previewed before.")] = False
    fingerprint: Fingerprint | None = None


class VaultRemovePreview(Result, tag_field="outcome", tag="preview"):
    """The removal not done yet: confirm with the fingerprint."""

    fingerprint: str
    entry: VaultEntry
    note: str = "Unregisters the vault; its files are never deleted."


class VaultRemoved(Result, tag_field="outcome", tag="applied"):
    """The vault is unregistered; its files are where they were."""

    entry: VaultEntry
    note: str = "Unregisters the vault; its files are never deleted."


VaultRemoveResult = Union[VaultRemovePreview, VaultRemoved]  # noqa: UP007 - typing.Union, as the table's checks read unions
"""``outcome`` says which, as in a write receipt."""


class VaultSetParams(Params):
    """Settings to change; an omitted one keeps its value. The path, id and log path stay."""

    id: VaultId
    kind: Annotated[Kind | None, msgspec.Meta(description="personal or org; an org vault denies personal data (PII) by default.")] = None
    write: Annotated[
        WritePolicy | None, msgspec.Meta(description="Which channels may write: mcp (the CLI and agents), cli (the CLI only), none.")
    ] = None
    schema: Annotated[
        SchemaProfile | None, msgspec.Meta(description="open (structure only) or typed (note types, required keys and enums).")
    ] = None
    pii: Annotated[PiiSetting | None, msgspec.Meta(description="allow, deny, or a policy per category and surface.")] = None
    pii_default: Annotated[bool, msgspec.Meta(description="Drop the vault's own PII policy: the kind's default applies.")] = False
    deny_paths: (
        Annotated[list[DenyPath], msgspec.Meta(max_length=64, description="The new list of globs no write may touch ([] for none).")] | None
    ) = None
    private_paths: (
        Annotated[
            list[PrivatePath],
            msgspec.Meta(max_length=64, description="The new list of globs of notes agents (MCP) can neither see nor write ([] for none)."),
        ]
        | None
    ) = None
    stamp_keys: (
        Annotated[list[StampKey], msgspec.Meta(max_length=8, description="The new keys an edit stamps with today's date ([] for none).")]
        | None
    ) = None
    dead_links: Annotated[
        DeadLinks | None, msgspec.Meta(description="A write adding a link to no note yet: warn (written, reported) or refuse.")
    ] = None
    parent_keys: (
        Annotated[
            list[ParentKey],
            msgspec.Meta(min_length=1, max_length=8, description="The new frontmatter keys whose links name a note's parents (topic map)."),
        ]
        | None
    ) = None
    views: (
        Annotated[list[ViewName], msgspec.Meta(max_length=4, description="The generated views to keep in the vault ([] for none).")] | None
    ) = None
    session_notes: Annotated[
        FolderPath | None,
        msgspec.Meta(
            description="The vault folder vaultd writes each ended agent session's record into, as a note (agents may not write there)."
        ),
    ] = None
    no_session_notes: Annotated[bool, msgspec.Meta(description="Write no session notes into the vault (the default).")] = False
    agents: Annotated[
        AgentPolicyChange | None,
        msgspec.Meta(
            description="Cells of the agent policy to change (apply, propose or refuse per operation class; guard; session_context)."
        ),
    ] = None
    agents_default: Annotated[
        bool, msgspec.Meta(description="Start from the kind's default agent policy (then apply agents, if given).")
    ] = False
    domains: (
        Annotated[
            list[DomainId],
            msgspec.Meta(max_length=MAX_DOMAINS, description="The new domains on top of the built-ins ([] for the built-ins only)."),
        ]
        | None
    ) = None
    roles: Annotated[FolderRoles | None, msgspec.Meta(description="The new folder roles (the whole set; {} for none).")] = None
    git_raw: Annotated[bool | None, msgspec.Meta(description="Whether git checkpoints commit the raw copies capture keeps.")] = None
    projects: (
        Annotated[
            list[ProjectId],
            msgspec.Meta(
                max_length=MAX_PROJECTS,
                description="The log project ids the vault declares (the whole registry; [] for none: any id goes).",
            ),
        ]
        | None
    ) = None
    canon_tables: (
        Annotated[
            list[CanonTable],
            msgspec.Meta(
                max_length=MAX_CANON_TABLES,
                description="The canonical tables promotions are matched against (the whole list; [] for none).",
            ),
        ]
        | None
    ) = None
    confirm: Annotated[bool, msgspec.Meta(description="Apply the change previewed before.")] = False
    fingerprint: Fingerprint | None = None


class SettingChange(Result):
    """One setting the change touches, shown as text, and whether it gives anyone more room."""

    setting: Annotated[str, msgspec.Meta(description="The setting: 'write', 'deny_paths', 'pii.notes.email', 'agents.move', ...")]
    before: str
    after: str
    loosens: Annotated[bool, msgspec.Meta(description="True when the change lets agents or channels do more, or screens less.")]


class VaultSetPreview(Result, tag_field="outcome", tag="preview"):
    """The change not made yet: confirm with the fingerprint."""

    fingerprint: str
    changes: list[SettingChange]
    entry: Annotated[VaultEntry, msgspec.Meta(description="The registry entry as the change would leave it.")]


class VaultSetApplied(Result, tag_field="outcome", tag="applied"):
    """The change is made and in effect."""

    changes: list[SettingChange]
    entry: Annotated[VaultEntry, msgspec.Meta(description="The registry entry as the change leaves it.")]


VaultSetResult = Union[VaultSetPreview, VaultSetApplied]  # noqa: UP007 - typing.Union, as the table's checks read unions
"""``outcome`` says which, as in a write receipt."""


VAULT_ADD = spec(
    "vault.add",
    VaultAddParams,
    VaultInfo,
    "Register an existing folder as a vault and index it. Never writes a note.",
    Effect.WRITE,
)
VAULT_LIST = spec(
    "vault.list",
    Empty,
    VaultListResult,
    "The registered vaults with their policies and health.",
    Effect.READ,
    Trait.MCP,
)
VAULT_REMOVE: MethodSpec[VaultRemoveParams, VaultRemoveResult] = MethodSpec(
    "vault.remove",
    VaultRemoveParams,
    VaultRemoveResult,
    "Unregister a vault (two-step: preview, then confirm with the fingerprint). Never deletes files.",
    Effect.DESTRUCTIVE,
    Trait.TWO_STEP,
)
VAULT_SET: MethodSpec[VaultSetParams, VaultSetResult] = MethodSpec(
    "vault.set",
    VaultSetParams,
    VaultSetResult,
    "Change a vault's policies (write, kind, schema, PII, deny and private paths, stamps, parent keys, agent policy): a preview "
    "listing every loosened setting, then confirm with the fingerprint. Applied live.",
    Effect.DESTRUCTIVE,
    Trait.TWO_STEP,
)
SPECS = (VAULT_ADD, VAULT_LIST, VAULT_REMOVE, VAULT_SET)
