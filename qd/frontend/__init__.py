"""Frontend: Python source of kernels and funcs → typed IR per instantiation."""
