"""Journal volumes and their editions.

A vault may keep **journal volumes**: each folder directly under the volumes folder (set with
``edition.configure``) is one volume, and every Markdown note under it is one of its entries,
in path order. ``edition.publish`` gathers a volume's entries into one **edition** note in the
editions folder: a heading per entry, its body without its frontmatter. An edition records the
hash of what it gathered (each entry's path and trimmed body), so publishing a volume with no
change since its latest edition is refused. A person publishes, by command or on the schedule
they set; agents may read a volume's entries but never write under it nor publish (G05).

The word *journal* alone names vaultd's transaction journal; these are *volumes* and *editions*.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.receipts import WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, spec
from protocol.methods.writes import WriteParams

MAX_VOLUME_ENTRIES = 2000  #: entries one edition gathers
MAX_VOLUMES_LISTED = 500

VolumeName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=255,
        pattern=r"^[^/\\.\x00][^/\\\x00]*$",
        description="A volume: a folder's name directly under the volumes folder.",
    ),
]


class Schedule(enum.StrEnum):
    DAILY = "daily"  #: at most one edition a day
    WEEKLY = "weekly"  #: when the latest is seven days old or more
    MONTHLY = "monthly"  #: at most one edition a calendar month


class VolumesSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Where a vault keeps its journal volumes and their editions, and when editions publish themselves."""

    folder: str = "Journals"  #: each folder directly under it is a volume
    editions: str = "Editions"  #: where edition notes go
    schedule: Schedule | None = None  #: None: by command only


class EditionConfigureParams(Params, kw_only=True):
    vault: OptionalVault = None
    folder: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="The volumes folder (default: Journals).")] | None = None
    editions: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="The editions folder (default: Editions).")] | None = (
        None
    )
    schedule: Annotated[
        Schedule | None, msgspec.Meta(description="Publish changed volumes daily, weekly or monthly; omitted: by command only.")
    ] = None
    off: Annotated[bool, msgspec.Meta(description="The vault keeps no volumes (its folders become plain notes again).")] = False


class EditionConfigureResult(Result):
    vault: str
    volumes: VolumesSettings | None


class EditionListParams(Params, kw_only=True):
    vault: OptionalVault = None


class VolumeInfo(msgspec.Struct, kw_only=True):
    volume: Annotated[str, msgspec.Meta(description="The folder's name.")]
    name: Annotated[str, msgspec.Meta(description="The volume's name, as its editions are titled.")]
    entries: int
    latest: Annotated[str | None, msgspec.Meta(description="The latest edition note.")] = None
    changed: Annotated[bool, msgspec.Meta(description="Its entries differ from the latest edition (or it has none yet).")]


class EditionListResult(Result):
    volumes: list[VolumeInfo]
    settings: VolumesSettings | None


class EditionPublishParams(WriteParams, kw_only=True):
    volume: VolumeName


class EditionDetail(msgspec.Struct, kw_only=True):
    edition: Annotated[str, msgspec.Meta(description="The edition note written.")]
    entries: int
    volume_hash: str


EDITION_CONFIGURE = spec(
    "edition.configure",
    EditionConfigureParams,
    EditionConfigureResult,
    "Set where a vault keeps its journal volumes and editions, and their publishing schedule (a person only).",
    Effect.IDEMPOTENT_WRITE,
)
EDITION_LIST = spec(
    "edition.list",
    EditionListParams,
    EditionListResult,
    "The vault's journal volumes: entries, latest edition, and whether it changed since.",
    Effect.READ,
)
EDITION_PUBLISH: MethodSpec[EditionPublishParams, WriteReceipt[EditionDetail]] = MethodSpec(
    "edition.publish",
    EditionPublishParams,
    receipt_type(EditionDetail),
    "Gather a journal volume's entries into a new edition note (a person only); refused when nothing changed since the last.",
    Effect.WRITE,
)
SPECS = (EDITION_CONFIGURE, EDITION_LIST, EDITION_PUBLISH)
