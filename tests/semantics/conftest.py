"""The language-semantics suite runs once per available target.

Every test in this directory compiles kernels and compares what they compute with numpy or
plain Python. Those expectations are the language's, not one backend's, so the same
assertions must hold on every target: the `arch` fixture is parametrised over `TARGETS`, each
test starts from a runtime initialised for its target, and test ids name it (`...[cpu]`).

A test that calls `qd.init` itself (other options, a cache directory of its own) takes `arch`
as an argument and passes it on: `qd.init(arch=arch, default_ip=qd.i64)`. Nothing here may
write `qd.cpu`, or a second target would silently run its tests on the CPU.

Adding a target is one entry in `TARGETS`: its name, the attribute of `qd` that selects it
(`qd.cuda`), mapped to a probe giving the reason it cannot run on this machine (None when it
can). Tests of an unavailable target are skipped with that reason, never run elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

import qd
from qd.targets.cuda import driver as cuda_driver


def _always_available() -> str | None:
    return None


def _cuda_device() -> str | None:
    """None when a CUDA device, driver and bindings exist; else what `qd.init` says is missing."""
    try:
        cuda_driver.open_driver()
    except qd.QdError as e:
        return f"no CUDA device ({e.message})"
    return None


# name -> probe: None when the target can run here, else the reason its tests are skipped.
# QD_TEST_TARGETS=cuda (comma-separated names) runs only those targets (bench/gpu_check.py).
TARGETS: dict[str, Callable[[], str | None]] = {
    "cpu": _always_available,
    "cuda": _cuda_device,
}
if os.environ.get("QD_TEST_TARGETS"):
    TARGETS = {name: TARGETS[name] for name in os.environ["QD_TEST_TARGETS"].split(",") if name in TARGETS}


@pytest.fixture(scope="session", params=list(TARGETS))
def arch(request: pytest.FixtureRequest) -> str:
    """The target of this run of the test, as given to `qd.init(arch=...)`.

    Session-scoped, so pytest groups the suite by target (one target's runs finish before the
    next one's start) and Hypothesis tests may take it as an argument.
    """
    name = request.param
    missing = TARGETS[name]()
    if missing is not None:
        pytest.skip(f"target {name}: {missing}")
    return getattr(qd, name)


@pytest.fixture(autouse=True)
def _qd_fresh_runtime(arch: str, qd_cache_dir):
    """As the top-level fixture of the same name (which this one replaces here), for `arch`:
    a fresh runtime per test, compiled objects in the run's temporary cache. This suite checks
    qd's exact float semantics (IEEE operations, constant folding that agrees with run time), which
    `fast_math` (on by default, as in quadrants) relaxes, so it runs with `fast_math=False`;
    `tests/codegen/test_fast_math.py` and the differential tester run the default."""
    qd.init(arch=arch, offline_cache_file_path=str(qd_cache_dir), fast_math=False)
    yield
