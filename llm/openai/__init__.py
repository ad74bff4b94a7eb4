"""The `openai` backend: any OpenAI-compatible upstream, and the structured-output dialects
those upstreams speak (`llm.openai.dialects`)."""

from llm.openai.client import OnCall, OpenAIBackend, OpenAIStats
from llm.openai.dialects import DIALECTS, Dialect

__all__ = ["DIALECTS", "Dialect", "OnCall", "OpenAIBackend", "OpenAIStats"]
