"""JSON answers for the local backend: llguidance-constrained decoding, or validate-and-retry.

With llguidance installed, a token mask computed from the schema's grammar is applied before
every sampling step, so even a random model can only write JSON the schema accepts. Without
it, the backend generates freely and checks the answer with `schema_problem`.

A mask alone does not make the JSON end before `max_tokens`: a small model fills a string up
to its `maxLength` (1,000 characters for a quoted piece of evidence) and the answer is cut
inside it. So each grammar carries a closing reserve, the token count of the shortest
document the schema accepts (with a margin); once no more than that many tokens are left,
tokens made only of JSON punctuation get a bonus (closing quotes and brackets the most), so
the decoder ends strings, stops adding array items and closes the document in time.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from generation.base import JsonSchema
from generation.errors import InvalidRequest
from generation.types import ChatParams


def requested_schema(params: ChatParams, schema: JsonSchema | None) -> JsonSchema | None:
    """The schema to decode under: the explicit one, else the request's response_format."""
    if schema is not None:
        return schema
    response_format = params.response_format or {}
    kind = response_format.get("type")
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        return spec.get("schema") or {"type": "object"}
    if kind == "json_object":
        return {"type": "object"}
    return None


def build_ll_tokenizer(tokenizer: Any, vocab_width: int, eos_ids: frozenset[int]) -> Any | None:
    """llguidance's view of the tokenizer (slow: ~1 s on big vocabularies, so cache it).

    None when llguidance is not installed or cannot wrap this tokenizer (slow tokenizers).
    """
    try:
        import llguidance.hf
    except ImportError:
        return None
    try:
        return llguidance.hf.from_tokenizer(
            tokenizer, n_vocab=vocab_width, eos_token=sorted(eos_ids) or None
        )
    except ValueError:
        return None


def compile_grammar(ll_tokenizer: Any, schema: JsonSchema) -> str:
    """The llguidance grammar for `schema`; a schema it cannot compile is a bad request."""
    import llguidance

    try:
        # Compact JSON: with free whitespace a weak model can pad forever instead of closing
        # braces. Lenient: skip keywords llguidance does not implement (e.g. "format").
        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            schema, defaults={"whitespace_flexible": False, "lenient": True})
    except ValueError as exc:
        raise InvalidRequest(f"invalid JSON schema: {exc}", param="response_format") from exc
    is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar, ll_tokenizer)
    if is_error:
        raise InvalidRequest(f"unsupported JSON schema: {messages[0]}", param="response_format")
    return grammar


CLOSERS = frozenset('"]}')
PUNCTUATION = CLOSERS | frozenset(",:[{")
_CLOSING_BONUS = 1e4  # beyond any logit: an allowed punctuation token always wins


@dataclass(frozen=True, slots=True)
class ClosingTables:
    """What closing mode adds to the logits, read once from the vocabulary's token strings
    (JSON punctuation, quotes and backslashes are spelled as themselves there, in byte-level
    BPE and SentencePiece vocabularies alike)."""

    outside: Any  # [vocab] outside a string: 2x closing brackets, 1x other punctuation
    inside: Any  # [vocab] inside a string: tokens that end it (start with a quote)
    quoting: dict[int, str]  # tokens holding a quote or a backslash: they move string state


def closing_tables(tokenizer: Any, vocab_width: int) -> ClosingTables:
    import torch

    outside, inside = torch.zeros(vocab_width), torch.zeros(vocab_width)
    quoting: dict[int, str] = {}
    for piece, token in tokenizer.get_vocab().items():
        if not piece or token >= vocab_width:
            continue
        if '"' in piece or "\\" in piece:
            quoting[token] = piece
        if set(piece) <= PUNCTUATION:
            outside[token] = _CLOSING_BONUS * (2 if set(piece) <= frozenset("]}") else 1)
            if piece.startswith('"'):
                inside[token] = _CLOSING_BONUS
    return ClosingTables(outside, inside, quoting)


def minimal_json(schema: Any) -> str:
    """The shortest JSON text `schema` accepts, near enough: required properties only, the
    fewest array items (at least one: an item the decoder has opened must still be closed),
    the shortest enum value, the smallest allowed string, the bounds of numbers."""
    if not isinstance(schema, dict):
        return "null"
    for key in ("enum", "const"):
        if key in schema:
            values = schema[key] if key == "enum" else [schema[key]]
            return min((json.dumps(v, separators=(",", ":")) for v in values), key=len,
                       default="null")
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return min((minimal_json(s) for s in schema[key]), key=len)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = kind[0] if kind else "null"
    if kind == "object":
        props = schema.get("properties") or {}
        required = [k for k in props if k in (schema.get("required") or ())]
        return "{" + ",".join(f"{json.dumps(k)}:{minimal_json(props[k])}" for k in required) + "}"
    if kind == "array":
        count = max(int(schema.get("minItems", 0)), 1)
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        return "[" + ",".join([minimal_json(schema.get("items"))] * count) + "]"
    if kind == "string":
        return json.dumps("x" * int(schema.get("minLength", 0)))
    if kind in ("integer", "number"):
        return str(schema.get("minimum", schema.get("exclusiveMinimum", 0)))
    return {"boolean": "false", "null": "null"}.get(kind, "null")


def closing_reserve(tokenizer: Any, schema: JsonSchema) -> int:
    """Tokens kept for closing the document: its shortest form's token count, plus half and
    eight more for what the decoder still has open when closing mode begins."""
    count = len(tokenizer(minimal_json(schema), add_special_tokens=False)["input_ids"])
    return math.ceil(count * 1.5) + 8


class JsonConstraint:
    """One sample's matcher: masks logits to the tokens the grammar allows next, and in
    closing mode favours the punctuation that ends the document soonest."""

    def __init__(self, ll_tokenizer: Any, grammar: str, reserve: int = 0,
                 tables: ClosingTables | None = None) -> None:
        import llguidance
        import torch

        self._torch = torch
        self._matcher = llguidance.LLMatcher(ll_tokenizer, grammar, log_level=0)
        self._shifts = torch.arange(32, dtype=torch.int32)
        self.reserve = reserve if tables is not None else 0
        self._tables = tables
        # Whether the text so far ends inside a JSON string (and right after a backslash).
        self._in_string = self._escaped = False

    def mask(self, logits: Any, closing: bool = False) -> None:
        torch = self._torch
        words = torch.frombuffer(bytearray(self._matcher.compute_bitmask()), dtype=torch.int32)
        # [words] -> [words, 32] bits, little-endian within each word, as llguidance packs them.
        allowed = ((words.unsqueeze(-1) >> self._shifts) & 1).flatten().bool()
        width = logits.shape[-1]
        if allowed.numel() < width:
            allowed = torch.cat([allowed, allowed.new_zeros(width - allowed.numel())])
        if closing and self._tables is not None:
            # Inside a string its closing quote wins; `}}` there would only be more text.
            bonus = self._tables.inside if self._in_string else self._tables.outside
            logits += bonus[:width].to(logits.device)
        logits.masked_fill_(~allowed[:width].to(logits.device), float("-inf"))

    def consume(self, token: int) -> None:
        self._matcher.consume_token(token)
        piece = self._tables.quoting.get(token) if self._tables is not None else None
        if piece is None:
            self._escaped = False  # any other token's first character ends an escape
            return
        for char in piece:
            if self._escaped:
                self._escaped = False
            elif self._in_string and char == "\\":
                self._escaped = True
            elif char == '"':
                self._in_string = not self._in_string

    @property
    def done(self) -> bool:
        return bool(self._matcher.is_stopped())


def schema_problem(text: str, schema: JsonSchema) -> str | None:
    """Why `text` is not JSON matching `schema`, or None when it is.

    Uses `jsonschema` when installed; otherwise checks types, required keys, enums, nested
    properties and array items, which is what the callers' schemas use.
    """
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"not valid JSON ({exc})"
    try:
        import jsonschema
    except ImportError:
        return _basic_problem(value, schema, "$")
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        return exc.message
    except jsonschema.SchemaError:
        return _basic_problem(value, schema, "$")
    return None


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "integer": (int,),
    "number": (int, float), "boolean": (bool,), "null": (type(None),),
}


def _basic_problem(value: Any, schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        # bool is an int subclass in Python, never a JSON number.
        ok = any(isinstance(value, _TYPES.get(k, object)) and not
                 (isinstance(value, bool) and k in ("integer", "number")) for k in kinds)
        if not ok:
            return f"{where} should be of type {' or '.join(kinds)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} should be one of {schema['enum']}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{where} is missing the required key {key!r}"
        for key, sub in (schema.get("properties") or {}).items():
            if key in value and (problem := _basic_problem(value[key], sub, f"{where}.{key}")):
                return problem
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            if problem := _basic_problem(item, schema["items"], f"{where}[{i}]"):
                return problem
    return None


def reminder(schema: JsonSchema, problem: str) -> str:
    return (
        f"Your previous answer was rejected: {problem}. Reply again with only a JSON value "
        f"matching this JSON Schema, no prose and no code fences:\n{json.dumps(schema)}"
    )
