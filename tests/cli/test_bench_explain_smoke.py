"""bench/explain.py runs: its program compiles with the expected kept set and the explanations
it times have the full chain (the bench asserts both)."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts Python processes

ROOT = Path(__file__).resolve().parents[2]


def test_explain_bench_runs():
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "explain.py"), "--repeat", "1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "one kept leaf (s.g7.a3, 7 steps)" in r.stdout and "baseline: first launch" in r.stdout
