"""What the store raises. `store` is a leaf package, so `app` maps these to HTTP errors."""

from __future__ import annotations


class StoreError(Exception):
    """Base of the store's own errors."""


class Conflict(StoreError):
    """A write broke a constraint: a duplicate id or position, a value out of range."""


class InvalidCursor(StoreError, ValueError):
    """A pagination cursor that this store did not issue (or one that was altered)."""
