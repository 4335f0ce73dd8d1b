"""The user's Python scope: `qd.init`, fields, ndarrays, vectors and matrices, struct types,
type annotations, and the Python-scope versions of the kernel builtins.
"""
