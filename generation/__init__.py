"""Generation backends behind one small interface (leaf package: imports nothing of ours)."""

from generation.base import Backend
from generation.errors import (
    InvalidRequest,
    NotFound,
    RedraftError,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from generation.types import ChatParams, Choice, Chunk, ChunkChoice, Completion, Message, Usage

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
