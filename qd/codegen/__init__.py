"""Codegen: typed IR → LLVM IR text → native code."""
