"""In-process generation with transformers: the backend, its model loading, token-by-token
decoding with stop strings, and JSON Schema constrained decoding through llguidance."""

from generation.local.backend import LocalBackend
from generation.local.model import ModelLoadError

__all__ = ["LocalBackend", "ModelLoadError"]
