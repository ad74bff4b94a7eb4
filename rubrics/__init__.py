"""Checklists (rubrics) for the MRPO loop: the domain, the coding agents that build them, the
packs they can come from, the judge that scores against them, and their cache.

Imports only the `generation` leaf package.
"""

from rubrics.agents import BuiltChecklist, build_checklist
from rubrics.cache import (
    ChecklistCache,
    MemoryChecklistCache,
    RedisChecklistCache,
    checklist_cache_key,
)
from rubrics.checklist import (
    ANY,
    GENERATED,
    Band,
    Checklist,
    ChecklistInvalid,
    Dimension,
    DimensionScore,
    Evaluation,
    Limits,
    checklist_id,
    from_json,
    to_json,
)
from rubrics.evaluate import EvaluationResult, evaluate
from rubrics.packs import PackEntry, PackLibrary
from rubrics.repair import repair_checklist
from rubrics.writingbench import from_writingbench, to_writingbench

__all__ = [
    "ANY", "GENERATED", "Band", "BuiltChecklist", "Checklist", "ChecklistCache",
    "ChecklistInvalid", "Dimension", "DimensionScore", "Evaluation", "EvaluationResult",
    "Limits", "MemoryChecklistCache", "PackEntry", "PackLibrary", "RedisChecklistCache",
    "build_checklist", "checklist_cache_key", "checklist_id", "evaluate", "from_json",
    "from_writingbench", "repair_checklist", "to_json", "to_writingbench",
]
