"""Random mutations of valid kernels: qd runs each mutant or raises a located qd error.

The run is seeded and bounded for CI. `QD_MUTANTS=5000 QD_MUTANT_SEED=7 pytest -k mutants` runs
more (a new seed explores new mutants); every failure prints the mutant's source and the command
that reproduces it alone. A hole found this way gets a fixed case in `test_odd_code.py` or
`test_bad_input.py` as well.
"""

import collections
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _mutate  # noqa: E402

COUNT = int(os.environ.get("QD_MUTANTS", "500"))
SEED = int(os.environ.get("QD_MUTANT_SEED", "20261201"))


@pytest.mark.slow  # starts Python processes
def test_mutants_give_located_errors_or_run():
    outcomes = _mutate.run_mutants(SEED, COUNT)
    assert len(outcomes) == COUNT
    counts = collections.Counter(o.status for o in outcomes)
    assert counts["FAIL"] == 0, f"{counts}\n{_mutate.report(SEED, outcomes)}"
    # the generator must keep producing both kinds, or it has stopped testing anything
    assert counts["ok"] >= COUNT // 20 and counts["located"] >= COUNT // 4, counts


def test_mutants_are_reproducible():
    assert _mutate.make_mutant(SEED, 17) == _mutate.make_mutant(SEED, 17)
    assert len({_mutate.make_mutant(SEED, i)[1] for i in range(30)}) >= 25


LAUNCH = "\nARGS = ()\n\n\ndef launch():\n    return main(*ARGS)\n"

HARNESS_CASES = [
    ("unlocated qd error", "FAIL", "no location",
     "import qd\n\n\ndef main():\n    raise qd.QdError('somewhere')\n"),
    ("raw exception from inside qd", "FAIL", "not a qd error",
     "import qd\n\n\ndef main():\n    qd.core.dtypes.promote(qd.f32, None)\n"),
    ("located in another file", "FAIL", "located outside the program",
     "import qd\n\n\ndef main():\n    raise qd.QdError('x', qd.core.errors.SourceLoc(qd.__file__, 1, 0))\n"),
    ("internal error", "FAIL", "internal error",
     "import qd\n\n\ndef main():\n    raise qd.QdInternalError('bug', qd.core.errors.caller_loc())\n"),
    ("warning into qd", "FAIL", "warning not located",
     "import warnings\n\nimport qd\n\n\ndef main():\n    warnings.warn_explicit('w', UserWarning, qd.__file__, 1)\n"),
    ("crash", "FAIL", "crash", "import ctypes\n\n\ndef main():\n    ctypes.string_at(0)\n"),
    ("Python hang", "FAIL", "hang", "def main():\n    while True:\n        pass\n"),
    ("native hang", "FAIL", "hang",
     "import signal\nimport time\n\n\ndef main():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
     "    time.sleep(60)\n"),
    ("error in the program's own Python", "python", "ZeroDivisionError", "def main():\n    return 1 / 0\n"),
    ("located qd error", "located", "QuadrantsNameError",
     "import qd\n\n\n@qd.kernel\ndef main():\n    for i in range(2):\n        nothing_here[i] = 1\n"),
    ("runs", "ok", "", "import qd\n\n\n@qd.kernel\ndef main():\n    for i in range(2):\n        pass\n"),
    ("prints", "ok", "", "import os\n\n\ndef main():\n    print('{not json')\n    os.write(1, b'[1]\\nnoise\\n')\n"
     "    os.write(2, b'x' * 200000)\n"),
]


@pytest.fixture(scope="module")
def harness_outcomes():
    sources = [src + LAUNCH for _name, _status, _detail, src in HARNESS_CASES]
    # margin for a loaded machine
    return _mutate.run_mutants(0, len(sources), sources=sources, mutant_seconds=6, hang_seconds=12)


@pytest.mark.slow  # starts Python processes
@pytest.mark.parametrize("n", range(len(HARNESS_CASES)), ids=[c[0] for c in HARNESS_CASES])
def test_harness_classifies(harness_outcomes, n):
    """The classifier can fail: each kind of hole is reported, and the run goes on after a crash."""
    _name, status, detail, _src = HARNESS_CASES[n]
    by_index = {o.index: o for o in harness_outcomes}
    assert sorted(by_index) == list(range(len(HARNESS_CASES)))
    assert by_index[n].status == status and detail in by_index[n].detail, by_index[n]
