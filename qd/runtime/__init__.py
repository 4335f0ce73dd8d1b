"""Runtime: argument checks, the launch path and the CPU thread pool."""
