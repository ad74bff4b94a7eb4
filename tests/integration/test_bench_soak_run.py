"""A short soak: a minute of mixed loop, streamed and plain traffic against `redraft serve`
on its embedded defaults (memory bank on), after 45 s of the same load unmeasured (RSS climbs
for about a minute while caches and allocator arenas fill, then holds). The ten-minute
figures are in the README; this checks, loosely enough for two shared cores, that nothing
fails and nothing keeps growing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_minute_of_mixed_load_has_no_errors_and_flat_memory() -> None:
    cmd = [sys.executable, "-m", "bench.soak", "--warmup", "45", "--duration", "60",
           "--concurrency", "32", "--mix", "loop=0.25,stream=0.125", "--sample-every", "1",
           "--drain", "5"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=420)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])

    assert figures["errors"] == 0, figures["first_errors"]
    kinds = figures["requests_by_kind"]
    assert kinds.get("loop", 0) >= 20 and kinds.get("stream", 0) >= 10 and kinds.get("plain")
    # RSS swings by about ±10 % between samples (freed pages go back every 10 s), so a 30 s
    # least-squares slope carries a few % of noise; a steady leak of ~3 MB/s still fails.
    assert figures["rss_growth_last_half_pct"] < 10.0, figures["rss_mb"]
    assert figures["open_fds_slope_per_min_last_half"] < 30, figures["open_fds"]
    assert figures["open_fds_max"] < 400
