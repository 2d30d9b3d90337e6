"""The vault registry's methods and the registry entry's shape (also the config file's)."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

import msgspec

from protocol.methods.common import Empty, Fingerprint, Params, Result, VaultId
from protocol.methods.gate import ORG_DEFAULT, PERSONAL_DEFAULT, AgentPolicy
from protocol.methods.spec import Effect, Trait, spec


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
    #: Frontmatter keys whose links name a note's parents in the topic map; several parents allowed.
    parent_keys: Annotated[list[ParentKey], msgspec.Meta(max_length=8)] = msgspec.field(default_factory=lambda: list(DEFAULT_PARENT_KEYS))

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


class VaultHealth(msgspec.Struct, kw_only=True):
    id: str
    path: str
    state: VaultState
    message: str = ""
    notes: int = 0
    pending_proposals: int = 0  #: agent proposals waiting for a person (filled by daemon.status)


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


class VaultInfo(Result):
    entry: VaultEntry
    health: VaultHealth


class VaultListResult(Result):
    vaults: list[VaultInfo]


class VaultRemoveParams(Params):
    id: VaultId
    confirm: Annotated[bool, msgspec.Meta(description="Apply the removal previewed before.")] = False
    fingerprint: Fingerprint | None = None


class VaultRemoveResult(Result):
    """A preview (``applied`` false, with the fingerprint to confirm) or the done removal."""

    applied: bool
    fingerprint: str
    entry: VaultEntry
    note: str = "Unregisters the vault; its files are never deleted."


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
VAULT_REMOVE = spec(
    "vault.remove",
    VaultRemoveParams,
    VaultRemoveResult,
    "Unregister a vault (two-step: preview, then confirm with the fingerprint). Never deletes files.",
    Effect.DESTRUCTIVE,
    Trait.TWO_STEP,
)
SPECS = (VAULT_ADD, VAULT_LIST, VAULT_REMOVE)
