"""The vocabulary every stage shares: errors, dtypes, the operator semantics and typing rules,
the typed IR, the argument-buffer ABI, source locations. Imports nothing else of qd.
"""
