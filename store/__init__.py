"""Persistence: SQLAlchemy models, engines, repositories, migrations (leaf package).

Upper layers use the records and repositories; ORM rows never leave this package.
"""

from store.checklists import ChecklistRepository
from store.db import make_engine, make_sessionmaker, ping
from store.errors import Conflict, InvalidCursor, StoreError
from store.experiences import ExperienceRepository
from store.loops import LoopRepository
from store.records import (
    CANDIDATE_KINDS,
    CHECKLIST_SOURCES,
    CandidateRecord,
    ChecklistRecord,
    ExperienceRecord,
    IndexEntry,
    LoopRecord,
    LoopSummary,
    Page,
    ResponseRecord,
    new_id,
)
from store.repositories import Store
from store.responses import ResponseRepository

__all__ = [
    "CANDIDATE_KINDS",
    "CHECKLIST_SOURCES",
    "CandidateRecord",
    "ChecklistRecord",
    "ChecklistRepository",
    "Conflict",
    "ExperienceRecord",
    "ExperienceRepository",
    "IndexEntry",
    "InvalidCursor",
    "LoopRecord",
    "LoopRepository",
    "LoopSummary",
    "Page",
    "ResponseRecord",
    "ResponseRepository",
    "Store",
    "StoreError",
    "make_engine",
    "make_sessionmaker",
    "new_id",
    "ping",
]
