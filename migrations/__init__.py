"""Alembic migrations; applied by `store.migrate` (no alembic.ini needed)."""
