"""Stored Responses API responses and their input and output items.

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-03 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Frozen copies of the model types: a migration must not change when the models do.
def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _utc() -> sa.types.TypeEngine:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "responses",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("namespace", sa.String(255), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("previous_response_id", sa.String(64), nullable=True),
        sa.Column("body", _json(), nullable=False),
        sa.CheckConstraint(
            "status IN ('completed', 'incomplete', 'failed', 'in_progress', 'cancelled', "
            "'queued')",
            name="ck_responses_status",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_responses"),
    )

    op.create_table(
        "response_items",
        sa.Column("response_id", sa.String(64), nullable=False),
        sa.Column("part", sa.String(8), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("item", _json(), nullable=False),
        sa.CheckConstraint("part IN ('input', 'output')", name="ck_response_items_part"),
        sa.ForeignKeyConstraint(
            ["response_id"], ["responses.id"], name="fk_response_items_response_id_responses",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("response_id", "part", "position", name="pk_response_items"),
    )
    op.create_index("ix_response_items_item_id", "response_items", ["item_id"])


def downgrade() -> None:
    op.drop_table("response_items")
    op.drop_table("responses")
