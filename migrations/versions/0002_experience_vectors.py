"""Experiences keep their key embedding, and count the near duplicates folded into them.

Storing the vector (float32 little-endian, `embedding_dim` values) lets a replica rebuild its
vector index from SQL without running the embedding model again.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: a plain ALTER on PostgreSQL, and on SQLite the table copy that dropping a
    # column needs on the way down.
    with op.batch_alter_table("experiences") as batch:
        batch.add_column(sa.Column("embedding", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("embedding_dim", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column("merged_count", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("experiences") as batch:
        batch.drop_column("merged_count")
        batch.drop_column("embedding_dim")
        batch.drop_column("embedding")
