"""Functions written in qd itself (`@qd.func`), inlined into kernels like user code.
"""
