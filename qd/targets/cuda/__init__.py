"""The CUDA target: PTX through llvmlite's NVPTX backend.

- `module`: `CudaModule`/`CudaTask`, the compiled variant as data (the host side's contract);
- `target`: `CudaTarget`, the seam implementation (entries per launch step, grid-stride loops,
  atomics, block reductions);
- `libdevice`: finding and linking NVIDIA's libdevice for math;
- `ptx`: `qd.ptx`, a specialisation's PTX without a GPU or driver.
"""
