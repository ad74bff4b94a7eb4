"""Keyset pagination, newest first, on (created_at, id).

A cursor is the position of the last row served; the next page starts strictly after it,
so rows written meanwhile never shift a page (offsets would). Cursors are opaque strings.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Select, and_, or_
from sqlalchemy.orm import QueryableAttribute

from store.errors import InvalidCursor

MAX_LIMIT = 1000

Q = TypeVar("Q", bound=Select[*tuple[Any, ...]])


def encode_cursor(created_at: datetime, row_id: str) -> str:
    raw = json.dumps([created_at.isoformat(), row_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, row_id = json.loads(raw)
        created_at = datetime.fromisoformat(stamp)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidCursor(f"invalid cursor {cursor!r}") from exc
    if created_at.tzinfo is None or not isinstance(row_id, str):
        raise InvalidCursor(f"invalid cursor {cursor!r}")
    return created_at, row_id


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


def paginate(
    query: Q,
    created_col: QueryableAttribute[datetime],
    id_col: QueryableAttribute[str],
    limit: int,
    cursor: str | None,
) -> Q:
    """Order newest first, start after `cursor`, and fetch one extra row to detect a next page."""
    if cursor is not None:
        created_at, row_id = decode_cursor(cursor)
        query = query.where(
            or_(created_col < created_at, and_(created_col == created_at, id_col < row_id))
        )
    return query.order_by(created_col.desc(), id_col.desc()).limit(check_limit(limit) + 1)


def split_page(rows: Sequence[Any], limit: int) -> tuple[Sequence[Any], bool]:
    """The rows of this page, and whether another page follows."""
    return rows[:limit], len(rows) > limit
