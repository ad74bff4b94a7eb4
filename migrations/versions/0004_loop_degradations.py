"""Loops keep why a stage did less than asked: stage, cause, detail and what the loop did;
and a loop scored by the request's own checks records its checklist source as "checks".

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


SOURCES_BEFORE = "'generated', 'cache', 'pack', 'user', 'none'"
SOURCES_AFTER = SOURCES_BEFORE + ", 'checks'"
CONSTRAINT = "ck_loops_checklist_source"


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    with op.batch_alter_table("loops") as batch:
        batch.add_column(sa.Column("degradations", json, nullable=True))
        batch.drop_constraint(CONSTRAINT, type_="check")
        batch.create_check_constraint(CONSTRAINT, f"checklist_source IN ({SOURCES_AFTER})")


def downgrade() -> None:
    op.execute("DELETE FROM loops WHERE checklist_source = 'checks'")
    with op.batch_alter_table("loops") as batch:
        batch.drop_constraint(CONSTRAINT, type_="check")
        batch.create_check_constraint(CONSTRAINT, f"checklist_source IN ({SOURCES_BEFORE})")
        batch.drop_column("degradations")
