"""The WritingBench queries of the rubric pack, and the subset a run asks for."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rubrics.checklist import Checklist
from rubrics.packs.library import PackLibrary

PACK = "writingbench"
# WritingBench's domain order (D1-D6) and requirement order (R1-R3), as its tables print them.
DOMAINS = ("Academic & Engineering", "Finance & Business", "Politics & Law",
           "Literature & Arts", "Education", "Advertising & Marketing")
FOCI = ("style", "format", "length")
LANGUAGES = ("en", "zh", "all")


class UsageError(ValueError):
    """Bad input from the command line: the CLI prints the message and exits with status 2."""


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    query: str
    language: str
    domain1: str
    domain2: str
    focus: Mapping[str, tuple[str, ...]]  # requirement -> the criteria it is judged on (C)
    checklist: Checklist

    @property
    def ref(self) -> str:
        return f"{PACK}:{self.id}"

    @property
    def criteria(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.checklist.dimensions)


def load_queries(library: PackLibrary | None = None) -> list[EvalQuery]:
    """Every query of the WritingBench pack, in pack order."""
    out = []
    for entry in (library or PackLibrary()).entries(PACK):
        if not entry.query or entry.domain1 not in DOMAINS:
            continue
        out.append(EvalQuery(id=entry.ref.partition(":")[2], query=entry.query,
                             language=entry.language or "en", domain1=entry.domain1,
                             domain2=entry.domain2 or "", focus=dict(entry.focus),
                             checklist=entry.checklist))
    return out


def domain_name(value: str) -> str:
    """`D3`, `3` or a domain's name (any case) -> the domain's name."""
    key = value.strip().casefold().removeprefix("d")
    if key.isdigit() and 1 <= int(key) <= len(DOMAINS):
        return DOMAINS[int(key) - 1]
    for name in DOMAINS:
        if name.casefold() == value.strip().casefold():
            return name
    raise UsageError(f"unknown --domain {value!r}; use D1..D6 or one of: {', '.join(DOMAINS)}")


def select(queries: Sequence[EvalQuery], *, language: str = "all", domain: str | None = None,
           limit: int | None = None, sample: int | None = None,
           seed: int = 0) -> list[EvalQuery]:
    """Filter by language and domain, then take the first `limit` or a seeded `sample`."""
    if language not in LANGUAGES:
        raise UsageError(f"--language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    if limit is not None and sample is not None:
        raise UsageError("use --limit or --sample, not both")
    for flag, value in (("--limit", limit), ("--sample", sample)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be at least 1")
    picked = [q for q in queries if language == "all" or q.language == language]
    if domain is not None:
        name = domain_name(domain)
        picked = [q for q in picked if q.domain1 == name]
    if not picked:
        raise UsageError("no WritingBench query matches --language/--domain")
    if sample is not None:
        ids = set(random.Random(seed).sample([q.id for q in picked], min(sample, len(picked))))
        return [q for q in picked if q.id in ids]
    return picked[:limit] if limit is not None else picked
