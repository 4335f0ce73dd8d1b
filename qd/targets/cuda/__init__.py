"""The CUDA target: PTX through llvmlite's NVPTX backend, launched through the CUDA driver.

Code generation (usable without a GPU or driver):
- `module`: `CudaModule`/`CudaTask`, a compiled variant as data, and the launch protocol
  (the contract with the host side);
- `target`: `CudaTarget`, the seam implementation (one entry per launch step, grid-stride
  loops, block reductions, libdevice math) and `compile_module` (IR text to PTX);
- `libdevice`: finding NVIDIA's libdevice and linking it when a module uses math;
- `ptx`: `qd.ptx`, a specialisation's PTX from the frontend, pruning and codegen alone.

The host side (`driver`, `memory`, `launch`) loads modules, owns device memory and launches
the steps; it reaches the code generator only through `CudaModule` and `CudaTarget`'s
`runtime` argument, and imports none of it: `launch.CudaHost` is all a variant from the disk
cache needs.
"""
