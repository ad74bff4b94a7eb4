"""SQLAlchemy tables. Portable across SQLite and PostgreSQL; only `store` imports them.

Changing a table means a new Alembic revision in `migrations/versions/`; a test compares
these models with the migrated schema.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeEngine

# Deterministic constraint names: PostgreSQL downgrades and SQLite batch migrations
# address constraints by name.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ID = String(36)
NAME = String(255)
RESPONSE_ID = String(64)  # "resp_" + 32 hex digits; item ids ("msg_", "fc_", or a client's)


def json_type() -> TypeEngine[Any]:
    """JSON everywhere, JSONB on PostgreSQL; Python None is SQL NULL, not JSON 'null'."""
    return JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out. SQLite keeps no offset, so it stores naive UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Loop(Base):
    __tablename__ = "loops"
    __table_args__ = (
        CheckConstraint(
            "checklist_source IN ('generated', 'cache', 'pack', 'user', 'none', 'checks')",
            name="checklist_source",
        ),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    namespace: Mapped[str] = mapped_column(NAME, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    model: Mapped[str] = mapped_column(NAME)
    backend: Mapped[str] = mapped_column(String(64))
    request: Mapped[Any] = mapped_column(json_type())
    checklist: Mapped[Any | None] = mapped_column(json_type())
    checklist_source: Mapped[str] = mapped_column(String(16))
    checklist_id: Mapped[str | None] = mapped_column(NAME)
    stop_reason: Mapped[str | None] = mapped_column(String(64), index=True)
    rounds: Mapped[int] = mapped_column(Integer)
    initial_score: Mapped[float | None] = mapped_column(Float)
    final_score: Mapped[float | None] = mapped_column(Float)
    score_gain: Mapped[float | None] = mapped_column(Float)
    usage: Mapped[Any] = mapped_column(json_type())
    timings: Mapped[Any] = mapped_column(json_type())
    experiences: Mapped[Any] = mapped_column(json_type())
    error: Mapped[str | None] = mapped_column(Text)
    # why a stage did less than asked: [{stage, cause, detail, outcome}] (loops.degradation)
    degradations: Mapped[Any | None] = mapped_column(json_type())

    candidates: Mapped[list[Candidate]] = relationship(
        back_populates="loop",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="Candidate.position",
    )


class Candidate(Base):
    __tablename__ = "candidates"
    __table_args__ = (
        UniqueConstraint("loop_id", "position"),
        CheckConstraint("kind IN ('draft', 'memory_rewrite', 'rewrite')", name="kind"),
        CheckConstraint(
            "total_score IS NULL OR (total_score >= 0 AND total_score <= 1)", name="total_score"
        ),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    loop_id: Mapped[str] = mapped_column(ID, ForeignKey("loops.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    round: Mapped[int] = mapped_column(Integer)
    parent_position: Mapped[int | None] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    scores: Mapped[Any] = mapped_column(json_type())
    total_score: Mapped[float | None] = mapped_column(Float)
    reflection: Mapped[Any | None] = mapped_column(json_type())
    usage: Mapped[Any] = mapped_column(json_type())
    latency_ms: Mapped[float] = mapped_column(Float)

    loop: Mapped[Loop] = relationship(back_populates="candidates")


class Checklist(Base):
    __tablename__ = "checklists"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    namespace: Mapped[str] = mapped_column(NAME, index=True)
    query_hash: Mapped[str] = mapped_column(String(128), index=True)
    model: Mapped[str] = mapped_column(NAME)
    source: Mapped[str] = mapped_column(String(16))
    body: Mapped[Any] = mapped_column(json_type())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Experience(Base):
    __tablename__ = "experiences"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    namespace: Mapped[str] = mapped_column(NAME, index=True)
    key: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    score_trajectory: Mapped[Any] = mapped_column(json_type())
    source_loop_id: Mapped[str | None] = mapped_column(
        ID, ForeignKey("loops.id", ondelete="SET NULL"), index=True
    )
    embedding_model: Mapped[str] = mapped_column(NAME)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    recalled_count: Mapped[int] = mapped_column(Integer, server_default="0")
    selected_count: Mapped[int] = mapped_column(Integer, server_default="0")
    gain_sum: Mapped[float] = mapped_column(Float, server_default="0")
    gain_count: Mapped[int] = mapped_column(Integer, server_default="0")
    merged_count: Mapped[int] = mapped_column(Integer, server_default="0")
    # The key's vector, float32 little-endian, for `embedding_model`; NULL until embedded.
    # Deferred: only an index rebuild reads it, and it is the bulk of a row.
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    embedding_dim: Mapped[int | None] = mapped_column(Integer)


class StoredResponse(Base):
    """A Responses API response kept for retrieval and for `previous_response_id` chains."""

    __tablename__ = "responses"
    __table_args__ = (
        CheckConstraint(
            "status IN ('completed', 'incomplete', 'failed', 'in_progress', 'cancelled', "
            "'queued')",
            name="status",
        ),
    )

    # Read by id only (and then checked against the caller's namespace): no other index, each
    # one would be written on every response.
    id: Mapped[str] = mapped_column(RESPONSE_ID, primary_key=True)
    namespace: Mapped[str] = mapped_column(NAME)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    model: Mapped[str] = mapped_column(NAME)
    status: Mapped[str] = mapped_column(String(16))
    # No foreign key: each response keeps its whole context, so deleting an earlier response
    # of a chain leaves the later ones whole.
    previous_response_id: Mapped[str | None] = mapped_column(RESPONSE_ID)
    body: Mapped[Any] = mapped_column(json_type())


class ResponseItem(Base):
    """One input or output item of a stored response, in order."""

    __tablename__ = "response_items"
    __table_args__ = (
        PrimaryKeyConstraint("response_id", "part", "position"),
        CheckConstraint("part IN ('input', 'output')", name="part"),
    )

    response_id: Mapped[str] = mapped_column(
        RESPONSE_ID, ForeignKey("responses.id", ondelete="CASCADE"))
    part: Mapped[str] = mapped_column(String(8))
    position: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[str] = mapped_column(RESPONSE_ID, index=True)
    item: Mapped[Any] = mapped_column(json_type())
