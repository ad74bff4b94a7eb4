"""A seeded random-instance upstream: every structured call is answered with a random instance
of the JSON Schema it was sent — what a constrained decoder guarantees, and nothing more.

Names, scores, counts and texts are random within the schema's enums, bounds, `minItems`,
`maxItems`, `minLength` and `maxLength`; a text may be blank (spaces) when the schema allows
it. Plain-text calls (drafts, rewrites) get a few random sentences. redraft must turn such
answers into finished loops without a retry: that is what its schemas and repairs are for.

    responder = RandomResponder(seed=7)        # for bench.fakes.upstream (responder=...)
    text = RandomInstance(7).text_for(schema)  # for a test backend

It imports nothing of ours, so the fake upstream can load it when run by path.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

WORDS = ("clear", "draft", "reader", "tone", "detail", "section", "example", "brief", "warm",
         "plan", "evidence", "structure", "audience", "length", "format", "voice", "claim",
         "point", "step", "offer", "season", "shop", "customer", "update", "friendly")
LONG_TEXT = 0.1  # share of texts drawn at their full maxLength
BLANK_TEXT = 0.05  # share of texts that are only spaces (when minLength allows any text)
SPARE_ITEMS = 4  # items an array without maxItems may have beyond its minItems


class RandomInstance:
    """Random JSON values valid for a schema (the subset structured-output decoders accept:
    objects, arrays, strings, integers, numbers, booleans, enum, const, anyOf, $ref)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text_for(self, schema: dict[str, Any]) -> str:
        return json.dumps(self.value(schema, schema), ensure_ascii=False)

    def value(self, schema: dict[str, Any], root: dict[str, Any]) -> Any:
        if "$ref" in schema:
            return self.value(_resolve(root, schema["$ref"]), root)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.value(self.rng.choice(schema[key]), root)
        kind = schema.get("type", "object")
        if isinstance(kind, list):
            kind = self.rng.choice(kind)
        return getattr(self, f"_{kind}")(schema, root)

    def _object(self, schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get("required") or ())
        return {name: self.value(sub, root) for name, sub in (schema.get("properties") or {}
                                                               ).items()
                if name in required or self.rng.random() < 0.5}

    def _array(self, schema: dict[str, Any], root: dict[str, Any]) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", low + SPARE_ITEMS))
        return [self.value(schema.get("items") or {}, root)
                for _ in range(self.rng.randint(low, high))]

    def _string(self, schema: dict[str, Any], root: dict[str, Any]) -> str:
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", max(low, 200)))
        roll = self.rng.random()
        if roll < BLANK_TEXT:
            return " " * low
        size = high if roll < BLANK_TEXT + LONG_TEXT else self.rng.randint(low, min(high, 60))
        words: list[str] = []
        while len(" ".join(words)) < size:
            words.append(self.rng.choice(WORDS))
        return " ".join(words)[:size].ljust(low)

    def _integer(self, schema: dict[str, Any], root: dict[str, Any]) -> int:
        low = int(schema.get("minimum", -1000))
        return self.rng.randint(low, int(schema.get("maximum", low + 2000)))

    def _number(self, schema: dict[str, Any], root: dict[str, Any]) -> float:
        low = float(schema.get("minimum", -1000.0))
        return self.rng.uniform(low, float(schema.get("maximum", low + 2000.0)))

    def _boolean(self, schema: dict[str, Any], root: dict[str, Any]) -> bool:
        return self.rng.random() < 0.5

    def _null(self, schema: dict[str, Any], root: dict[str, Any]) -> None:
        return None

    def prose(self) -> str:
        """A few random sentences: a draft or a rewrite from a model that knows nothing."""
        sentences = []
        for _ in range(self.rng.randint(2, 5)):
            words = [self.rng.choice(WORDS) for _ in range(self.rng.randint(4, 12))]
            sentences.append(" ".join(words).capitalize() + ".")
        return " ".join(sentences)


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


# How redraft's follow-up to an unusable structured answer opens (generation.structured.RETRY).
RETRY_OPENING = "Your previous answer could not be used"


class RandomResponder:
    """`responder(request_body, choice_index)` for the fake upstream: random instances."""

    def __init__(self, seed: int = 0) -> None:
        self.instances = RandomInstance(seed)
        # "structured" / "text" -> calls answered; "retry" -> calls that were a retry
        self.counts: Counter[str] = Counter()

    def reset(self) -> None:
        self.counts.clear()

    def __call__(self, req: dict[str, Any], index: int = 0) -> str | None:
        last = (req.get("messages") or [{}])[-1]
        if last.get("role") == "user" and str(last.get("content")).startswith(RETRY_OPENING):
            self.counts["retry"] += 1
        fmt = req.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            self.counts["structured"] += 1
            schema = (fmt.get("json_schema") or {}).get("schema") or {}
            return self.instances.text_for(schema)
        self.counts["text"] += 1
        return self.instances.prose()
