"""The CPU target: native code for the host, run on a thread pool.

Everything CPU-specific lives in this package: the entry and task ABI over the packed
argument buffer and the choice between running a task inline and on the pool (`target`,
`CpuTarget`), what running compiled code needs of the CPU (`host`, `CpuHost`: all a disk-cache
hit loads), LLVM setup, optimisation and MCJIT loading (`jit`), and the thread pool behind
`qd_parallel_for` (`parallel`). The package itself imports none of them, so reaching `host`
does not load the code generator.
"""
