"""Initial tables: loops, candidates, checklists, experiences.

Revision ID: 0001
Revises:
Create Date: 2025-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Frozen copies of the model types: a migration must not change when the models do.
def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _utc() -> sa.types.TypeEngine:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "loops",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("namespace", sa.String(255), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.Column("finished_at", _utc(), nullable=True),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("backend", sa.String(64), nullable=False),
        sa.Column("request", _json(), nullable=False),
        sa.Column("checklist", _json(), nullable=True),
        sa.Column("checklist_source", sa.String(16), nullable=False),
        sa.Column("checklist_id", sa.String(255), nullable=True),
        sa.Column("stop_reason", sa.String(64), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("initial_score", sa.Float(), nullable=True),
        sa.Column("final_score", sa.Float(), nullable=True),
        sa.Column("score_gain", sa.Float(), nullable=True),
        sa.Column("usage", _json(), nullable=False),
        sa.Column("timings", _json(), nullable=False),
        sa.Column("experiences", _json(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "checklist_source IN ('generated', 'cache', 'pack', 'user', 'none')",
            name="ck_loops_checklist_source",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_loops"),
    )
    op.create_index("ix_loops_namespace", "loops", ["namespace"])
    op.create_index("ix_loops_created_at", "loops", ["created_at"])
    op.create_index("ix_loops_stop_reason", "loops", ["stop_reason"])

    op.create_table(
        "candidates",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("loop_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("parent_position", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("scores", _json(), nullable=False),
        sa.Column("total_score", sa.Float(), nullable=True),
        sa.Column("reflection", _json(), nullable=True),
        sa.Column("usage", _json(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.CheckConstraint(
            "kind IN ('draft', 'memory_rewrite', 'rewrite')", name="ck_candidates_kind"
        ),
        sa.CheckConstraint(
            "total_score IS NULL OR (total_score >= 0 AND total_score <= 1)",
            name="ck_candidates_total_score",
        ),
        sa.ForeignKeyConstraint(
            ["loop_id"], ["loops.id"], name="fk_candidates_loop_id_loops", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_candidates"),
        sa.UniqueConstraint("loop_id", "position", name="uq_candidates_loop_id_position"),
    )
    op.create_index("ix_candidates_loop_id", "candidates", ["loop_id"])

    op.create_table(
        "checklists",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("namespace", sa.String(255), nullable=False),
        sa.Column("query_hash", sa.String(128), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("body", _json(), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_checklists"),
    )
    op.create_index("ix_checklists_namespace", "checklists", ["namespace"])
    op.create_index("ix_checklists_query_hash", "checklists", ["query_hash"])

    op.create_table(
        "experiences",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("namespace", sa.String(255), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("score_trajectory", _json(), nullable=False),
        sa.Column("source_loop_id", sa.String(36), nullable=True),
        sa.Column("embedding_model", sa.String(255), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.Column("updated_at", _utc(), nullable=False),
        sa.Column("recalled_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("selected_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("gain_sum", sa.Float(), server_default="0", nullable=False),
        sa.Column("gain_count", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["source_loop_id"],
            ["loops.id"],
            name="fk_experiences_source_loop_id_loops",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_experiences"),
    )
    op.create_index("ix_experiences_namespace", "experiences", ["namespace"])
    op.create_index("ix_experiences_created_at", "experiences", ["created_at"])
    op.create_index("ix_experiences_source_loop_id", "experiences", ["source_loop_id"])


def downgrade() -> None:
    op.drop_table("experiences")
    op.drop_table("checklists")
    op.drop_table("candidates")
    op.drop_table("loops")
