"""The vocabulary of memtiers: tiers, kinds, a memory as given and a memory as stored."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tiers.errors import InvalidInput
from tiers.text import measure
from tiers.text.timeparse import as_utc, parse_duration, parse_time

MAX_CONTENT_CHARS = 8_000
MAX_BATCH = 1_000
MAX_TAGS = 32
MAX_METADATA_KEYS = 32
MAX_SUPERSEDES = 16

MetaValue = str | int | float | bool


class Tier(StrEnum):
    """Where a memory lives: carried every turn, searched on demand, or kept for when it is asked for."""

    HOT = "hot"
    WARM = "warm"
    COLD = "cold"


class Kind(StrEnum):
    """What a memory states; the durable kinds are protected from demotion to cold."""

    IDENTITY = "identity"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    RELATIONSHIP = "relationship"
    HEALTH = "health"
    DECISION = "decision"
    TASK = "task"
    EVENT = "event"
    NOTE = "note"
    HISTORY = "history"


DURABLE_KINDS = frozenset({Kind.IDENTITY, Kind.PREFERENCE, Kind.CONSTRAINT, Kind.RELATIONSHIP, Kind.HEALTH})
KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$"


class MemoryIn(BaseModel):
    """One memory as an agent gives it to `remember`."""

    model_config = ConfigDict(extra="forbid")

    content: Annotated[str, Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="The memory itself.")]
    tags: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(max_length=MAX_TAGS)] = []
    metadata: Annotated[dict[str, MetaValue], Field(description="Flat map, returned unchanged.")] = {}
    source: Annotated[str | None, Field(max_length=2_000, description="URL, file or message id.")] = None
    occurred_at: Annotated[str | None, Field(description="ISO 8601 time it happened; default now.")] = None
    forget_after: Annotated[
        str | None, Field(description="ISO 8601 duration (P30D) or time; after it the memory goes cold.")
    ] = None
    kind: Annotated[
        Kind | None,
        Field(description="What it states; identity/preference/constraint/relationship/health are kept warm."),
    ] = None
    key: Annotated[
        str | None,
        Field(pattern=KEY_PATTERN, description="Profile key: also put this fact in the hot profile."),
    ] = None
    supersedes: Annotated[
        list[Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]],
        Field(max_length=MAX_SUPERSEDES, description="Ids of earlier memories this one replaces (kept as history)."),
    ] = []

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is blank; give the text to remember")
        return value

    @field_validator("metadata")
    @classmethod
    def _flat(cls, value: dict[str, MetaValue]) -> dict[str, MetaValue]:
        if len(value) > MAX_METADATA_KEYS:
            raise ValueError(f"metadata has {len(value)} keys; at most {MAX_METADATA_KEYS}")
        for key, item in value.items():
            if not key or len(key) > 64:
                raise ValueError("metadata keys are 1 to 64 characters")
            if isinstance(item, str) and len(item) > 1_000:
                raise ValueError(f"metadata {key!r} is over 1,000 characters")
        return value

    # pydantic reports only ValueErrors as validation errors: an InvalidInput escaping a validator
    # would reach the model of a batch call as a bare "Error executing tool", its message hidden.

    @field_validator("occurred_at")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        try:
            if value is not None:
                parse_time(value, "occurred_at")
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("forget_after")
    @classmethod
    def _deadline(cls, value: str | None) -> str | None:
        try:
            if value is not None and value.strip().upper().startswith("P"):
                parse_duration(value, "forget_after")
            elif value is not None:
                parse_time(value, "forget_after")
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None
        return value


@dataclass(frozen=True)
class Record:
    """A memory as stored in the warm or cold tier."""

    id: str
    content: str
    tier: Tier
    kind: Kind
    protected: bool
    occurred_at: datetime
    created_at: datetime
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    forget_after: datetime | None = None
    superseded_by: str | None = None
    superseded_at: datetime | None = None


def record_from_dict(row: dict[str, Any]) -> Record:
    """A record from a stored row (the tier tables' columns, as Python values)."""
    return Record(
        id=row["id"],
        content=row["content"],
        tier=Tier(row["tier"]),
        kind=Kind(row["kind"]),
        protected=bool(row["protected"]),
        occurred_at=as_utc(row["occurred_at"]),
        created_at=as_utc(row["created_at"]),
        tags=tuple(row["tags"] or ()),
        metadata=json.loads(row["metadata"]) if row["metadata"] not in (None, "", "{}") else {},
        source=row["source"],
        forget_after=as_utc(row["forget_after"]) if row["forget_after"] else None,
        superseded_by=row["superseded_by"],
        superseded_at=as_utc(row["superseded_at"]) if row["superseded_at"] else None,
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROS = pa.timestamp("us", tz="UTC")


def records_of(
    table: pa.Table | pa.RecordBatch, ids: list[str] | None = None, tier: Tier | None = None
) -> list[Record]:
    """Records from rows of the tier tables' columns (and `id` and `tier`, unless given), a column at a time.

    What `record_from_dict` makes of each row, in less than half the time: a recall's hits are made here,
    and Arrow turns an aware timestamp into a datetime far slower than the microseconds it is stored as.
    """
    n = table.num_rows
    ids = table.column("id").to_pylist() if ids is None else ids
    tiers = [tier] * n if tier is not None else [Tier(t) for t in table.column("tier").to_pylist()]
    occurred, created, forget, superseded_at = (
        [None if v is None else _EPOCH + timedelta(microseconds=v) for v in _micros(table.column(name))]
        for name in ("occurred_at", "created_at", "forget_after", "superseded_at")
    )
    columns = zip(
        ids,
        table.column("content").to_pylist(),
        tiers,
        table.column("kind").to_pylist(),
        table.column("protected").to_pylist(),
        occurred,
        created,
        table.column("tags").to_pylist(),
        table.column("metadata").to_pylist(),
        table.column("source").to_pylist(),
        forget,
        table.column("superseded_by").to_pylist(),
        superseded_at,
        strict=True,
    )
    return [
        Record(
            rid,
            content,
            in_tier,
            Kind(kind),
            bool(protected),
            at,
            made,
            tuple(tags or ()),
            json.loads(metadata) if metadata not in (None, "", "{}") else {},
            source,
            until,
            by,
            when,
        )
        for rid, content, in_tier, kind, protected, at, made, tags, metadata, source, until, by, when in columns
    ]


def _micros(column: pa.Array | pa.ChunkedArray) -> list[int | None]:
    """A timestamp column as microseconds since the epoch in UTC (naive ones taken as UTC, as `as_utc` does)."""
    if column.type != _MICROS:
        column = column.cast(pa.timestamp("us", tz=getattr(column.type, "tz", None))).cast(_MICROS)
    return column.cast(pa.int64()).to_pylist()


_SPACE = re.compile(r"\s+")


def content_hash(content: str) -> str:
    """Hash of the content with case and spacing folded: the same memory said again."""
    folded = _SPACE.sub(" ", content.strip().lower())
    return hashlib.sha256(folded.encode()).hexdigest()[:32]


def tokens_of(text: str) -> int:
    """Tokens the model reads for `text`, by script: 4 characters a token in Latin script (tiers/text/measure.py)."""
    return measure.tokens(text)
