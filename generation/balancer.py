"""Least-outstanding-requests choice among upstream base URLs.

Outstanding counts requests from send until their body is fully read (a stream stays counted
until it ends), so a slow upstream accumulates work and stops being picked. Ties rotate, so idle
upstreams share the load evenly. An upstream that refused a connection sits out briefly.
"""

from __future__ import annotations

import time


class Upstream:
    __slots__ = ("url", "outstanding", "avoid_until")

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.outstanding = 0
        self.avoid_until = 0.0

    def __repr__(self) -> str:
        return f"Upstream({self.url!r}, outstanding={self.outstanding})"


class Balancer:
    def __init__(self, urls: list[str], *, avoid_seconds: float = 2.0) -> None:
        if not urls:
            raise ValueError("at least one upstream base URL is needed")
        self.upstreams = [Upstream(u) for u in urls]
        self.avoid_seconds = avoid_seconds
        self._turn = 0

    def acquire(self) -> Upstream:
        """The upstream to send the next request to, counted as outstanding until `release`."""
        ups = self.upstreams
        best = ups[0] if len(ups) == 1 else self._least_busy(ups)
        best.outstanding += 1
        return best

    def _least_busy(self, ups: list[Upstream]) -> Upstream:
        count = len(ups)
        start = self._turn % count
        self._turn += 1
        # Scanning from a rotating start makes `min` (first minimum wins) break ties in turn.
        order = ups[start:] + ups[:start]
        now = time.monotonic()
        live = [u for u in order if u.avoid_until <= now] or order
        return min(live, key=_outstanding)

    def release(self, upstream: Upstream) -> None:
        upstream.outstanding -= 1

    def avoid(self, upstream: Upstream) -> None:
        """Keep new requests away from `upstream` for a while (it refused a connection)."""
        upstream.avoid_until = time.monotonic() + self.avoid_seconds

    def recovered(self, upstream: Upstream) -> None:
        upstream.avoid_until = 0.0

    def has_alternative(self, upstream: Upstream) -> bool:
        """True when another upstream is not being avoided (a retry can go there at once)."""
        now = time.monotonic()
        return any(u is not upstream and u.avoid_until <= now for u in self.upstreams)

    def healthy_first(self) -> list[Upstream]:
        """All upstreams, the ones not being avoided first (for probes like /models)."""
        now = time.monotonic()
        return sorted(self.upstreams, key=lambda u: u.avoid_until > now)


def _outstanding(upstream: Upstream) -> int:
    return upstream.outstanding
