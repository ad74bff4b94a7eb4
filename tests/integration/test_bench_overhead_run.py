"""The overhead benchmark end to end: real subprocesses, one JSON line, nothing left running."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_short_run_prints_one_json_line_and_stops_its_servers() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.overhead", "--duration", "0.3", "--warmup", "0.1",
         "--concurrency", "1,4"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    for side in ("direct", "through", "through_responses"):
        for level in ("c1", "c4"):
            assert result[side][level]["errors"] == 0
            assert result[side][level]["requests"] > 0
    assert result["through"]["c4"]["cpu_ms_per_req"]["proxy"] > 0
    assert result["through_responses"]["c4"]["cpu_ms_per_req"]["proxy"] > 0
    assert "added_p50_ms_c1" in result and "ratio_rps_c4" in result
    assert result["responses_vs_chat_rps_c4"] == round(
        result["through_responses"]["c4"]["rps"] / result["through"]["c4"]["rps"], 3)
    # Both servers are gone once the benchmark returns.
    ports = [int(p) for p in re.findall(r"(?:upstream|through): http://127\.0\.0\.1:(\d+)",
                                        proc.stderr)]
    assert len(ports) == 2
    for port in ports:
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
