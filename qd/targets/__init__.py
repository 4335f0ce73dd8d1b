"""Code-generation targets: the interface (`base.Host`, `base.Target`) and one package per machine.

`qd.codegen` is target-neutral and never imports from here. The pipeline's launch side picks a
host (`cpu.host.CpuHost`, `cuda.launch.CudaHost`) to name, load and launch code; its compile
side picks the matching code generator (`cpu.target.CpuTarget`, `cuda.target.CudaTarget`) and
hands it to codegen.
"""
