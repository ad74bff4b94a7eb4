"""JSON answers for the local backend: llguidance-constrained decoding, or validate-and-retry.

With llguidance installed, a token mask computed from the schema's grammar is applied before
every sampling step, so even a random model can only write JSON the schema accepts. Without
it, the backend generates freely and checks the answer with `schema_problem`.
"""

from __future__ import annotations

import json
from typing import Any

from llm.base import JsonSchema
from llm.errors import InvalidRequest
from llm.types import ChatParams


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


class JsonConstraint:
    """One sample's matcher: masks logits to the tokens the grammar allows next."""

    def __init__(self, ll_tokenizer: Any, grammar: str) -> None:
        import llguidance
        import torch

        self._torch = torch
        self._matcher = llguidance.LLMatcher(ll_tokenizer, grammar, log_level=0)
        self._shifts = torch.arange(32, dtype=torch.int32)

    def mask(self, logits: Any) -> None:
        torch = self._torch
        words = torch.frombuffer(bytearray(self._matcher.compute_bitmask()), dtype=torch.int32)
        # [words] -> [words, 32] bits, little-endian within each word, as llguidance packs them.
        allowed = ((words.unsqueeze(-1) >> self._shifts) & 1).flatten().bool()
        width = logits.shape[-1]
        if allowed.numel() < width:
            allowed = torch.cat([allowed, allowed.new_zeros(width - allowed.numel())])
        logits.masked_fill_(~allowed[:width].to(logits.device), float("-inf"))

    def consume(self, token: int) -> None:
        self._matcher.consume_token(token)

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
