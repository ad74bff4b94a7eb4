"""Time-sortable string ids, so that ordering by id follows creation order."""

from __future__ import annotations

import os
import time


def new_id() -> str:
    """A UUIDv7-shaped id as 32 hex digits: 48 bits of Unix milliseconds, then randomness.

    Python 3.11 has no `uuid.uuid7`; ids made in the same millisecond sort in random order,
    which keyset pagination tolerates because it also orders by creation time.
    """
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return f"{value:032x}"
