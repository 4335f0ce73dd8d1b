"""Fixtures shared by the runtime tests."""

from __future__ import annotations

import shutil

import pytest
from _support.cuda_emu import emulating
from _support.fake_cuda import FakeCu

import qd
from qd.cache import objects
from qd.targets.cuda import driver
from qd.targets.cuda.target import CudaTarget


@pytest.fixture
def cuda(monkeypatch, qd_cache_dir):
    """`arch=qd.cuda` on a fake driver whose launches run the generated PTX's kernels through the
    CPU emulator; yields the fake driver (its records of copies and launches)."""
    cu = FakeCu(real=True)
    # the emulator learns each module's code as it is compiled: none comes from memory or disk
    objects.forget()
    shutil.rmtree(qd_cache_dir / "fastcache" / "objects", ignore_errors=True)
    old = driver.use(driver.Driver(cu))
    monkeypatch.setattr(CudaTarget, "compile", emulating(cu, CudaTarget.compile))
    qd.init(arch=qd.cuda, offline_cache_file_path=str(qd_cache_dir))
    yield cu
    qd.init(arch=qd.cpu)
    driver.use(old)
