"""Per-key rate and concurrency limits, in process or shared by replicas through Redis.

The rate limit is GCRA (a token bucket kept as one timestamp per key): `rate_per_minute`
requests may arrive at once, then one more every 60/rate seconds. The concurrency limit
counts permits in flight; `acquire` checks it before spending a rate token, so a request
refused for concurrency costs nothing.

In Redis a permit is a member of a sorted set scored by its expiry. Held permits are renewed
in one batch every lease/3 seconds, so a replica that dies frees its slots within one lease.
Redis being unreachable lets requests through (with a warning, and without asking Redis again
for a few seconds): the limiter protects the upstream, it must not become the outage.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from generation.errors import RateLimited

log = logging.getLogger(__name__)

_WARN_EVERY = 30.0  # seconds between repeated "Redis unreachable" warnings
# After a Redis error, requests skip the limiter this long instead of each waiting out the
# client's connect timeouts and retries.
_BYPASS_FOR = 5.0


class Permit(Protocol):
    async def release(self) -> None: ...
    async def __aenter__(self) -> Permit: ...
    async def __aexit__(self, *exc: object) -> None: ...


class Limiter(Protocol):
    async def acquire(self, key: str) -> Permit:
        """A permit to run one request for `key`; raises RateLimited when over a limit."""

    async def aclose(self) -> None: ...


class _Permit:
    __slots__ = ("_on_release",)

    def __init__(self, on_release: Callable[[], Any] | None) -> None:
        self._on_release = on_release

    async def release(self) -> None:
        on_release, self._on_release = self._on_release, None  # releasing twice is harmless
        if on_release is not None:
            result = on_release()
            if result is not None:
                await result

    async def __aenter__(self) -> _Permit:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()


_NO_PERMIT = _Permit(None)


def _rate_exceeded(rate: int, retry_after: float) -> RateLimited:
    return RateLimited(
        f"rate limit exceeded: {rate} requests per minute per API key", retry_after=retry_after
    )


def _too_many_in_flight(concurrency: int) -> RateLimited:
    return RateLimited(
        f"too many requests in flight: at most {concurrency} at a time per API key",
        retry_after=1,
    )


class NoLimiter:
    async def acquire(self, key: str) -> Permit:
        return _NO_PERMIT

    async def aclose(self) -> None:
        pass


class MemoryLimiter:
    """Limits for one process. Every check runs without an await, so it is atomic in asyncio."""

    def __init__(
        self,
        rate_per_minute: int,
        concurrency: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate_per_minute
        self.concurrency = concurrency
        self._clock = clock
        self._interval = 60.0 / rate_per_minute if rate_per_minute else 0.0
        self._tolerance = 60.0 - self._interval + 1e-6  # epsilon: the rate-th request fits
        self._tat: dict[str, float] = {}  # key -> theoretical arrival time of the next request
        self._in_flight: dict[str, int] = {}
        self._prune_at = 1024

    async def acquire(self, key: str) -> Permit:
        if self.concurrency and self._in_flight.get(key, 0) >= self.concurrency:
            raise _too_many_in_flight(self.concurrency)
        if self.rate:
            now = self._clock()
            tat = max(self._tat.get(key, now), now)
            if tat - now > self._tolerance:
                raise _rate_exceeded(self.rate, tat - self._tolerance - now)
            self._tat[key] = tat + self._interval
            if len(self._tat) > self._prune_at:
                self._prune(now)
        if not self.concurrency:
            return _NO_PERMIT
        self._in_flight[key] = self._in_flight.get(key, 0) + 1
        return _Permit(lambda: self._release(key))

    def _release(self, key: str) -> None:
        left = self._in_flight.get(key, 0) - 1
        if left > 0:
            self._in_flight[key] = left
        else:
            self._in_flight.pop(key, None)

    def _prune(self, now: float) -> None:
        # A key whose bucket has refilled is indistinguishable from a key never seen.
        self._tat = {k: tat for k, tat in self._tat.items() if tat > now}
        self._prune_at = max(1024, 2 * len(self._tat))

    async def aclose(self) -> None:
        pass


# KEYS: rate key, concurrency key. ARGV: interval_us, tolerance_us, concurrency, permit id,
# lease_us. Returns {0, 0} when granted, {1, retry_us} over the rate, {2, retry_us} when full.
# Times come from Redis, so replicas with skewed clocks agree. Numbers go back to Redis via
# %d: Lua 5.1 would print microsecond timestamps in %.14g and lose digits.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local cap = tonumber(ARGV[3])
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= cap then
    return {2, 1000000}
  end
end
if interval > 0 then
  local tat = tonumber(redis.call('GET', KEYS[1]) or now)
  if tat < now then tat = now end
  local tolerance = tonumber(ARGV[2])
  if tat - now > tolerance then
    return {1, tat - tolerance - now}
  end
  local new_tat = tat + interval
  redis.call('SET', KEYS[1], string.format('%d', new_tat),
             'PX', math.ceil((new_tat - now) / 1000))
end
if cap > 0 then
  local lease = tonumber(ARGV[5])
  redis.call('ZADD', KEYS[2], string.format('%d', now + lease), ARGV[4])
  redis.call('PEXPIRE', KEYS[2], math.ceil(lease / 1000))
end
return {0, 0}
"""

# KEYS: concurrency keys; ARGV[1]: lease_us, ARGV[i + 1]: the permit held under KEYS[i].
# XX: a permit that already expired (the event loop stalled past its lease) stays gone.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local lease = tonumber(ARGV[1])
local expiry = string.format('%d', now + lease)
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', expiry, ARGV[i + 1])
  redis.call('PEXPIRE', key, math.ceil(lease / 1000))
end
return #KEYS
"""


class RedisLimiter:
    """Limits shared by every replica that uses the same Redis and prefix."""

    def __init__(
        self,
        redis: Redis,
        rate_per_minute: int,
        concurrency: int,
        prefix: str = "redraft:limit:",
        *,
        lease_seconds: float = 60.0,
    ) -> None:
        self.rate = rate_per_minute
        self.concurrency = concurrency
        self._redis = redis
        self._prefix = prefix
        self._interval_us = 60_000_000 // rate_per_minute if rate_per_minute else 0
        self._tolerance_us = 60_000_000 - self._interval_us
        self._lease_us = int(lease_seconds * 1_000_000)
        self._renew_every = lease_seconds / 3
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self._held: dict[str, str] = {}  # permit id -> concurrency key
        self._renewer: asyncio.Task[None] | None = None
        self._warned_at = -_WARN_EVERY
        self._bypass_until = 0.0

    def _keys(self, key: str) -> tuple[str, str]:
        # The hash tag keeps both keys of one API key in one Redis Cluster slot.
        base = f"{self._prefix}{{{key}}}"
        return f"{base}:rate", f"{base}:conc"

    async def acquire(self, key: str) -> Permit:
        if self._bypass_until and time.monotonic() < self._bypass_until:
            return _NO_PERMIT
        rate_key, conc_key = self._keys(key)
        permit_id = os.urandom(8).hex()
        try:
            outcome, retry_us = await self._acquire(
                keys=[rate_key, conc_key],
                args=[
                    self._interval_us,
                    self._tolerance_us,
                    self.concurrency,
                    permit_id,
                    self._lease_us,
                ],
            )
        except RedisError as exc:
            self._bypass_until = time.monotonic() + _BYPASS_FOR
            self._warn(exc)
            return _NO_PERMIT
        if outcome == 1:
            raise _rate_exceeded(self.rate, int(retry_us) / 1_000_000)
        if outcome == 2:
            raise _too_many_in_flight(self.concurrency)
        if not self.concurrency:
            return _NO_PERMIT
        self._held[permit_id] = conc_key
        if self._renewer is None:
            self._renewer = asyncio.create_task(self._renew_held())
        return _Permit(lambda: self._release(permit_id))

    async def _release(self, permit_id: str) -> None:
        conc_key = self._held.pop(permit_id, None)
        if conc_key is None:
            return
        try:
            await self._redis.zrem(conc_key, permit_id)
        except RedisError as exc:
            self._warn(exc)  # the lease frees the slot later

    async def _renew_held(self) -> None:
        try:
            while self._held:
                await asyncio.sleep(self._renew_every)
                held = list(self._held.items())
                if not held:
                    continue
                try:
                    await self._renew(
                        keys=[conc_key for _, conc_key in held],
                        args=[self._lease_us, *(permit_id for permit_id, _ in held)],
                    )
                except RedisError as exc:
                    self._warn(exc)
        finally:
            self._renewer = None

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned_at >= _WARN_EVERY:
            self._warned_at = now
            log.warning("rate limiter: Redis unreachable, letting requests through: %s", exc)

    async def aclose(self) -> None:
        """Stop renewing and hand back every permit still held."""
        if self._renewer is not None:
            self._renewer.cancel()
            try:
                await self._renewer
            except asyncio.CancelledError:
                pass
        for permit_id in list(self._held):
            await self._release(permit_id)


def build_limiter(rate_per_minute: int, concurrency: int, redis: Redis | None) -> Limiter:
    if not rate_per_minute and not concurrency:
        return NoLimiter()
    if redis is not None:
        return RedisLimiter(redis, rate_per_minute, concurrency)
    return MemoryLimiter(rate_per_minute, concurrency)
