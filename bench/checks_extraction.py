"""How well checks are found in real requests: recall and precision of the pre-pass (and,
optionally, of the checklist agents) against hand labels on WritingBench queries.

A found check matches a label when kind and params are equal after the registry fills
nullable params (`Check.key()`), a `json_schema` schema compared as parsed JSON; each label
matches at most one found check. Recall is
matched labels / labels, precision matched found / found, micro-averaged over queries, overall
and per language. For the agents, what is scored is what a checklist carries (the pre-pass
merged with the agent's checks that survive the quote rule), and `added_by_agent` scores the
agent's own additions alone. `prepass` is scored on the development file the rules were
corrected on, `heldout`, `heldout2` and `heldout3` on queries labelled before the pre-pass
ever ran on them (see tests/data/checks/SOURCE.md), `phrasings_heldout` (kind-level, as
`outofsource`) on requests in other wordings written blind to the rules
(`phrasings_heldout.jsonl`; its errors have since corrected the rules) and
`phrasings_heldout2` to `phrasings_heldout6` on five more such sets, each written after the
rules were corrected on the one before (`phrasings_heldout2.jsonl` to `phrasings_heldout6.jsonl`;
SOURCE.md says what each has been used for since), `short` on the short
instruction-following requests of `verifiable_short.jsonl` and `phrasings` on the requests
written for the phrasings' development (`phrasings_dev.jsonl`: every kind in many wordings,
with negatives), whatever --data names. `outofsource` is the out-of-source set
(`outofsource.jsonl`: requests written blind to the phrasings, see SOURCE.md), scored exactly
and at kind level: a found check counts toward kind-level recall and precision when the
request has a label of the same kind (paired one to one per kind, exact matches first), and
parameter accuracy is the share of those kind-level pairs whose params equal the label's;
overall and per kind. Prints one JSON line.

    python -m bench.checks_extraction [--data tests/data/checks/writingbench_checks.jsonl]
        [--heldout tests/data/checks/writingbench_checks_heldout.jsonl]
        [--heldout2 tests/data/checks/writingbench_checks_heldout2.jsonl]
        [--heldout3 tests/data/checks/writingbench_checks_heldout3.jsonl]
        [--outofsource tests/data/checks/outofsource.jsonl]
        [--agent-url http://127.0.0.1:8000/v1 --agent-model NAME [--mode fused] [--limit N]
         [--structured auto|none|json_object_schema|...]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rubrics.checks.model import Check
from rubrics.checks.prepass import prepass

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "checks" / \
    "writingbench_checks.jsonl"
HELDOUT = DATA.with_name("writingbench_checks_heldout.jsonl")
HELDOUT2 = DATA.with_name("writingbench_checks_heldout2.jsonl")
HELDOUT3 = DATA.with_name("writingbench_checks_heldout3.jsonl")
SHORT = DATA.parent / "verifiable_short.jsonl"
PHRASINGS = DATA.parent / "phrasings_dev.jsonl"
OUTOFSOURCE = DATA.parent / "outofsource.jsonl"
PHRASINGS_HELDOUT = DATA.parent / "phrasings_heldout.jsonl"
PHRASINGS_HELDOUT2 = DATA.parent / "phrasings_heldout2.jsonl"
PHRASINGS_HELDOUT3 = DATA.parent / "phrasings_heldout3.jsonl"
PHRASINGS_HELDOUT4 = DATA.parent / "phrasings_heldout4.jsonl"
PHRASINGS_HELDOUT5 = DATA.parent / "phrasings_heldout5.jsonl"
PHRASINGS_HELDOUT6 = DATA.parent / "phrasings_heldout6.jsonl"


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def labels(row: dict[str, Any]) -> list[Check]:
    return [Check(kind=c["kind"], params=c["params"], source="user") for c in row["checks"]]


def key(check: Check) -> tuple[str, str]:
    """The check's identity for matching: kind and params, with a `json_schema` schema
    compared as the JSON it parses to, not as text (a label keeps the schema as the request
    writes it; the pre-pass writes it back sorted and compact)."""
    if check.kind == "json_schema":
        try:
            schema = json.loads(check.params["schema"])
        except (ValueError, KeyError, TypeError):
            return check.key()
        return check.kind, json.dumps(schema, sort_keys=True, ensure_ascii=False)
    return check.key()


def score(rows: Sequence[dict[str, Any]],
          found: Callable[[dict[str, Any]], Iterable[Check]]) -> dict[str, Any]:
    """Recall and precision overall and per language, with the counts they come from."""
    tallies: dict[str, list[int]] = {}
    for row in rows:
        wanted = [key(c) for c in labels(row)]
        got = list(dict.fromkeys(key(c) for c in found(row)))
        matched = sum(1 for key in got if key in wanted)
        for group in ("all", row["language"]):
            t = tallies.setdefault(group, [0, 0, 0, 0])
            t[0] += matched
            t[1] += len(wanted)
            t[2] += len(got)
            t[3] += 1
    return {group: {"recall": round(m / w, 3) if w else 1.0,
                    "precision": round(m / g, 3) if g else 1.0,
                    "matched": m, "labels": w, "found": g, "queries": q}
            for group, (m, w, g, q) in tallies.items()}


def _rates(kind_matched: int, exact: int, wanted: int, got: int) -> dict[str, Any]:
    return {"recall": round(kind_matched / wanted, 3) if wanted else 1.0,
            "precision": round(kind_matched / got, 3) if got else 1.0,
            "param_accuracy": round(exact / kind_matched, 3) if kind_matched else None,
            "exact_recall": round(exact / wanted, 3) if wanted else 1.0,
            "exact_precision": round(exact / got, 3) if got else 1.0,
            "kind_matched": kind_matched, "exact_matched": exact, "labels": wanted,
            "found": got}


def kind_score(rows: Sequence[dict[str, Any]],
               found: Callable[[dict[str, Any]], Iterable[Check]]) -> dict[str, Any]:
    """Kind-level recall and precision, parameter accuracy and exact recall and precision,
    overall and per kind. On each request, labels and found checks (distinct keys) of one
    kind pair one to one, exact matches first: a kind with 2 labels and 3 found checks has 2
    kind-level matches. Parameter accuracy is exact matches / kind-level matches."""
    per: dict[str, list[int]] = {}
    for row in rows:
        wanted = [key(c) for c in labels(row)]
        got = list(dict.fromkeys(key(c) for c in found(row)))
        for kind in {k for k, _ in wanted} | {k for k, _ in got}:
            w = [key for key in wanted if key[0] == kind]
            g = [key for key in got if key[0] == kind]
            exact = sum(1 for key in g if key in w)
            t = per.setdefault(kind, [0, 0, 0, 0])
            t[0] += min(len(w), len(g))
            t[1] += exact
            t[2] += len(w)
            t[3] += len(g)
    total = [sum(t[i] for t in per.values()) for i in range(4)]
    return {"all": _rates(*total),
            "per_kind": {kind: _rates(*per[kind]) for kind in sorted(per)}}


def out_of_source_figures(path: Path) -> dict[str, Any]:
    """The pre-pass on the out-of-source set: exact figures per language as for the other
    files, and the kind-level figures with parameter accuracy, overall and per kind."""
    rows = load(path)
    found = {row["id"]: prepass(row["query"]) for row in rows}

    def by_id(row: dict[str, Any]) -> Iterable[Check]:
        return found[row["id"]]

    languages = sorted({row["language"] for row in rows})
    return {"data": path.name, "queries": len(rows),
            "prepass": score(rows, by_id),
            "kind_level": {**kind_score(rows, by_id), "languages": {
                lang: kind_score([r for r in rows if r["language"] == lang], by_id)["all"]
                for lang in languages}}}


def prepass_figures(path: Path) -> dict[str, Any]:
    """The pre-pass scored on another labelled file, reported next to the --data figures."""
    return score(load(path), lambda row: prepass(row["query"]))


def held_out_figures(path: Path) -> dict[str, Any]:
    """The pre-pass on a held-out file, with the file's name and size."""
    held = load(path)
    return {"data": path.name, "queries": len(held),
            "prepass": score(held, lambda row: prepass(row["query"]))}


class _Recorder:
    """The backend the agents talk to, keeping each answer that had a `checks` field to fill
    (what the agent said, before the quote rule and the merge)."""

    def __init__(self, backend: Any) -> None:
        self.backend, self.answers = backend, []  # type: ignore[var-annotated]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    async def chat(self, messages: Any, params: Any, schema: Any = None) -> Any:
        completion = await self.backend.chat(messages, params, schema=schema)
        if schema is None or "checks" in (schema.get("properties") or {}):
            self.answers.append(completion.text)
        return completion


def _said(answers: Sequence[str]) -> list[dict[str, Any]]:
    """The check items in the last of a query's answers that parses with a `checks` list."""
    from generation.structured import parse_json

    for text in reversed(answers):
        try:
            items = parse_json(text).get("checks")
        except (ValueError, AttributeError):
            continue
        if isinstance(items, list):
            return [i for i in items if isinstance(i, dict)]
    return []


async def _agent_checks(rows: Sequence[dict[str, Any]], url: str, model: str, mode: str,
                        structured: str) -> tuple[dict[str, tuple[Check, ...]], dict[str, Any]]:
    """What each query's checklist carries, and a tally of what the agent said: the items
    it wrote and why each was kept or dropped (`agent_verdict`, then the merge)."""
    from generation.openai import OpenAIBackend
    from generation.types import ChatParams
    from rubrics.agents import build_checklist
    from rubrics.checks.extract import agent_verdict

    backend = OpenAIBackend([url], model=model, structured=structured)
    await backend.start()
    recorder = _Recorder(backend)
    verdicts: dict[str, int] = {}
    tally: dict[str, Any] = {"structured": backend.structured_status(),
                             "degraded": 0, "queries_with_items": 0, "items": 0,
                             "verdicts": verdicts}
    try:
        out: dict[str, tuple[Check, ...]] = {}
        for row in rows:
            recorder.answers = []
            built = await build_checklist(recorder, [{"role": "user", "content": row["query"]}],
                                          ChatParams(model=model, temperature=0.0),
                                          mode=mode)  # type: ignore[arg-type]
            # a degraded checklist is the generic pack, still carrying the checks that stand
            out[row["id"]] = built.checklist.checks
            tally["degraded"] += built.degraded
            items = _said(recorder.answers)
            tally["queries_with_items"] += bool(items)
            tally["items"] += len(items)
            found = prepass(row["query"])
            carried = {c.key() for c in out[row["id"]]}
            for item in items:
                check, why = agent_verdict(item, row["query"], found)
                if why == "kept" and check is not None:
                    tally.setdefault("kept", []).append(
                        {"id": row["id"], "kind": check.kind, "params": check.params,
                         "quote": check.quote})
                if why == "kept" and check is not None and check.key() not in carried:
                    why = "merged away (the pre-pass read that slot otherwise)"
                if why == "unknown kind":
                    why = f"unknown kind {str(item.get('kind'))[:40]!r}"
                verdicts[why] = verdicts.get(why, 0) + 1
        return out, tally
    finally:
        await backend.aclose()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--heldout", type=Path, default=HELDOUT,
                   help="labelled queries the pre-pass was never corrected on")
    p.add_argument("--heldout2", type=Path, default=HELDOUT2,
                   help="a second such file, drawn after the first one's errors were seen")
    p.add_argument("--heldout3", type=Path, default=HELDOUT3,
                   help="a third such file, drawn after the second one's errors were seen")
    p.add_argument("--outofsource", type=Path, default=OUTOFSOURCE,
                   help="requests written blind to the pre-pass phrasings (kind-level figures)")
    p.add_argument("--phrasings-heldout", type=Path, default=PHRASINGS_HELDOUT,
                   help="requests written blind to the rules, in other wordings, held out "
                        "from their development (kind-level figures)")
    p.add_argument("--phrasings-heldout2", type=Path, default=PHRASINGS_HELDOUT2,
                   help="a second such file, written after the first one's errors were "
                        "corrected (kind-level figures)")
    p.add_argument("--phrasings-heldout3", type=Path, default=PHRASINGS_HELDOUT3,
                   help="a third, written after the second one was measured (kind-level "
                        "figures)")
    p.add_argument("--phrasings-heldout4", type=Path, default=PHRASINGS_HELDOUT4,
                   help="a fourth, written blind to every other set (kind-level figures)")
    p.add_argument("--phrasings-heldout5", type=Path, default=PHRASINGS_HELDOUT5,
                   help="a fifth, written blind to every other set, weighted to language and "
                        "case (kind-level figures)")
    p.add_argument("--phrasings-heldout6", type=Path, default=PHRASINGS_HELDOUT6,
                   help="a sixth, written blind to every other set once the fifth was "
                        "measured (kind-level figures)")
    p.add_argument("--agent-url", help="an OpenAI-compatible base URL for the checklist agents")
    p.add_argument("--agent-model", help="the model the agents run on")
    p.add_argument("--mode", default="fused", choices=("fused", "three_agent"))
    p.add_argument("--limit", type=int, default=0, help="only the first N queries (agents)")
    p.add_argument("--structured", default="auto",
                   help="the agents' structured-output form (auto probes the upstream; none, "
                        "json_object_schema, json_schema, ...)")
    args = p.parse_args(argv)
    rows = load(args.data)
    report: dict[str, Any] = {
        "bench": "checks_extraction", "data": str(args.data.name), "queries": len(rows),
        "match": "kind and params equal (Check.key; a json_schema's schema as parsed JSON); "
                 "each label matched once",
        "prepass": score(rows, lambda row: prepass(row["query"])),
        "short": prepass_figures(SHORT),
        "phrasings": prepass_figures(PHRASINGS),
    }
    for key, path in (("heldout", args.heldout), ("heldout2", args.heldout2),
                      ("heldout3", args.heldout3)):
        if path.is_file():
            report[key] = held_out_figures(path)
    if args.outofsource.is_file():
        report["outofsource"] = out_of_source_figures(args.outofsource)
    for key, path in (("phrasings_heldout", args.phrasings_heldout),
                      ("phrasings_heldout2", args.phrasings_heldout2),
                      ("phrasings_heldout3", args.phrasings_heldout3),
                      ("phrasings_heldout4", args.phrasings_heldout4),
                      ("phrasings_heldout5", args.phrasings_heldout5),
                      ("phrasings_heldout6", args.phrasings_heldout6)):
        if path.is_file():
            report[key] = out_of_source_figures(path)
    if args.agent_url and args.agent_model:
        subset = rows[:args.limit] if args.limit else rows
        found, said = asyncio.run(_agent_checks(subset, args.agent_url, args.agent_model,
                                                args.mode, args.structured))
        # the merged checks a checklist carries, and the part of them only the agent found
        report["agent"] = {"model": args.agent_model, "mode": args.mode, "said": said,
                           **score(subset, lambda row: found[row["id"]]),
                           "added_by_agent": score(subset, lambda row: [
                               c for c in found[row["id"]] if c.source == "agent"])["all"]}
    print(json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    main()
