"""Helpers shared by test files of more than one stage directory.

Each stage directory (`frontend/`, `codegen/`, `runtime/`, `semantics/`, ...) keeps the helpers
only its own files use; what several of them need lives here, importable as `_support.<name>`
because pytest puts `tests/` (the directory of the top-level conftest) on `sys.path`.
"""
