"""Generation backends behind one small interface (leaf package: imports nothing of ours)."""

from llm.base import Backend
from llm.errors import (
    InvalidRequest,
    NotFound,
    RedraftError,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from llm.types import ChatParams, Choice, Chunk, ChunkChoice, Completion, Message, Usage

__all__ = [
    "Backend",
    "ChatParams",
    "Choice",
    "Chunk",
    "ChunkChoice",
    "Completion",
    "InvalidRequest",
    "Message",
    "NotFound",
    "RedraftError",
    "UpstreamError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "Usage",
]
