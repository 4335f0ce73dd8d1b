"""Target-neutral codegen: typed IR → LLVM IR text for one kernel variant.

`lower_llvm` (the module: entry, tasks, funcs), `stmts` (statements, loops, reductions),
`exprs` (expressions, memory accesses), `emitter` (their shared state), `checks` (run-time
checks), `reductions`, `llvm_text` (the IR text writer). Where the machine matters it asks the
`qd.targets.base.Target` it was given; it never imports a target.
"""
