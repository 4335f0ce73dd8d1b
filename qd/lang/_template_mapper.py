"""The module through which programs written for quadrants reach the interpreter's builtins.

Genesis turns quadrants' kernel-side `__debug__` on or off with
`qd.lang._template_mapper.__builtins__["__debug__"] = flag`. In an imported module `__builtins__`
is the builtins dictionary itself, so the assignment changes `__debug__` as every name lookup of
the process sees it; qd's frontend reads `__debug__` in a kernel from there, at compile time, and
records the value it read with the kernel's other compile-time captures. This module only has to
exist under quadrants' name.
"""
