"""pytest plugin: arch=qd.cuda on an emulated device (`cuda_emu`), for running the language
suite through the whole CUDA host side without a GPU:

    PYTHONPATH=tests QD_TEST_TARGETS=cuda python -m pytest -p _support.cuda_emu_plugin tests/semantics

Not part of the default run: kernels calling libdevice math fail here ("the emulator has no
libdevice"), which says nothing about a GPU.
"""

from _support.cuda_emu import emulating
from _support.fake_cuda import FakeCu
from qd.targets.cuda import driver
from qd.targets.cuda.target import CudaTarget

_cu = FakeCu(real=True)
driver.use(driver.Driver(_cu))
CudaTarget.compile = emulating(_cu, CudaTarget.compile)
