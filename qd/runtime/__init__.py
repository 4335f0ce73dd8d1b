"""Runtime: argument checks and the launch path (generated launchers over the `qd.core.abi` buffer).

Target-neutral: a launcher runs the code through the `EntryPoint` its target gives it; the
CPU thread pool lives with the CPU target (`qd.targets.cpu.parallel`).
"""
