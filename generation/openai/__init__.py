"""The `openai` backend: any OpenAI-compatible upstream, and the structured-output dialects
those upstreams speak (`generation.openai.dialects`)."""

from generation.openai.client import OnCall, OpenAIBackend, OpenAIStats
from generation.openai.dialects import DIALECTS, Dialect

__all__ = ["DIALECTS", "Dialect", "OnCall", "OpenAIBackend", "OpenAIStats"]
