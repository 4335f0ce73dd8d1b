"""Acceptance: every kernel variant the language-semantics suite compiles also lowers to PTX,
and `ptxas -arch=sm_90` accepts it.

The suite runs once more in a subprocess with the `tests._support.ptx_sweep` plugin, which
lowers each variant it compiles through `qd.ptx`'s path with the same arguments; the CPU
results are still checked by the suite's own assertions. Hypothesis properties run at their
full budget only (`[examples-full]`; the `[examples-few]` copies would add nothing new).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._support.ptx import PTXAS

pytestmark = pytest.mark.slow  # the semantics suite once more, in a Python process of its own

ROOT = Path(__file__).resolve().parents[2]


def test_semantics_suite_lowers_to_ptx(tmp_path):
    out = tmp_path / "sweep.jsonl"
    env = dict(os.environ, QD_PTX_SWEEP=str(out))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p",
                        "tests._support.ptx_sweep", "-k", "not examples-few", "tests/semantics"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) >= 300, f"only {len(recs)} variants were compiled: the shim did not see the launches"
    bad = [f"{x['test']} {x['kernel']}: {x['error']}" for x in recs if x["error"]]
    assert not bad, "\n".join(bad[:20])
    if PTXAS is not None:
        assert sum(1 for x in recs if x.get("ptxas")) >= 100
