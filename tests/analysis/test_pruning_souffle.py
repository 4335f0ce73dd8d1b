"""The end-to-end pruning suite again, with the rules evaluated by the `souffle` backend.

With a real `souffle` on PATH this checks Soufflé's answers; without one, a stand-in binary
(evaluating with the embedded engine) still drives the backend's whole path: compile facts
written as TSV, the command line, and the outputs read back into pruning plans.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import souffle_standin

pytestmark = pytest.mark.slow  # starts Python processes

TESTS = pathlib.Path(__file__).resolve().parents[1]
SUITE = ["semantics/test_pruning_809.py", "analysis/test_explain.py", "analysis/test_incremental_analysis.py"]


def run_suite(path_prefix: str | None, **extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QD_DATALOG_ENGINE="souffle", **extra)
    if path_prefix:
        env["PATH"] = path_prefix + os.pathsep + env.get("PATH", "")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *(str(TESTS / f) for f in SUITE)], env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(shutil.which("souffle") is None, reason="no souffle binary on PATH")
def test_pruning_suite_through_souffle():
    r = run_suite(None)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


@pytest.mark.skipif(shutil.which("souffle") is not None, reason="a real souffle is installed")
def test_pruning_suite_through_the_souffle_backend_with_a_stand_in(tmp_path):
    souffle_standin.install(tmp_path)
    log = tmp_path / "runs.log"
    r = run_suite(str(tmp_path), SOUFFLE_STANDIN_LOG=str(log))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout
    assert len(log.read_text().split()) >= 20  # every kernel compile went through the backend
