"""A compile that runs past `QD_COMPILE_PROGRESS` seconds says on stderr which kernel it is compiling
and in which phase it is, then how long each phase took; a quick one says nothing."""

import shutil
import time

import numpy as np
import pytest

import qd
from qd.cache import objects
from qd.targets.cpu import jit

F1 = qd.types.NDArray[qd.f32, 1]


def _kernel():
    @qd.kernel
    def slow_one(x: F1):
        for i in range(x.shape[0]):
            x[i] = qd.sin(x[i])

    return slow_one


@pytest.fixture
def slow_llvm(monkeypatch, qd_cache_dir):
    """LLVM that takes 0.5 s per module, so the compile is in that phase when it reports."""
    real = jit.compile_text
    objects.forget()  # a module compiled before would be reused, and LLVM not run
    shutil.rmtree(qd_cache_dir / "fastcache" / "objects", ignore_errors=True)

    def slow(text):
        time.sleep(0.5)
        return real(text)

    monkeypatch.setattr(jit, "compile_text", slow)


def test_a_long_compile_says_which_kernel_and_phase(monkeypatch, capfd, slow_llvm):
    monkeypatch.setenv("QD_COMPILE_PROGRESS", "0.2")
    k = _kernel()
    x = np.ones(4, np.float32)
    k(x)
    err = capfd.readouterr().err
    still = [line for line in err.splitlines() if line.startswith("qd: still compiling kernel")]
    assert still, err
    assert all("slow_one" in line and "test_compile_progress.py:" in line for line in still)
    # the first report may come while this process still loads the compile side, not later ones
    assert any("now in LLVM (optimising and emitting machine code), for 0." in line for line in still), err
    done = [line for line in err.splitlines() if line.startswith("qd: compiled kernel")]
    assert len(done) == 1 and "slow_one" in done[0] and "LLVM 0." in done[0] and "frontend" in done[0]
    np.testing.assert_allclose(x, np.sin(np.ones(4, np.float32)), rtol=1e-6)


def test_it_reports_again_at_every_interval(monkeypatch, capfd, slow_llvm):
    monkeypatch.setenv("QD_COMPILE_PROGRESS", "0.15")
    _kernel()(np.ones(4, np.float32))
    err = capfd.readouterr().err
    assert err.count("qd: still compiling kernel") >= 2, err


@pytest.mark.slow  # starts a Python process (a compile worker)
def test_compile_all_reports_its_llvm_phase(monkeypatch, capfd, slow_llvm):
    monkeypatch.setenv("QD_COMPILE_PROGRESS", "0.2")
    a, b = _kernel(), _kernel()
    x = np.ones(4, np.float32)
    qd.compile_all([(a, (x,)), (b, (x,))], workers=1)
    err = capfd.readouterr().err
    assert "qd: still compiling the LLVM phase of 2 kernel(s) (" in err, err
    assert "now in LLVM" in err


@pytest.mark.parametrize("setting", [None, "0", "off"])
def test_a_quick_compile_or_progress_off_says_nothing(monkeypatch, capfd, setting, slow_llvm):
    if setting is None:
        monkeypatch.delenv("QD_COMPILE_PROGRESS", raising=False)  # the default, 3 s, is not reached
    else:
        monkeypatch.setenv("QD_COMPILE_PROGRESS", setting)
    _kernel()(np.ones(4, np.float32))
    assert "qd: " not in capfd.readouterr().err
