"""qd's version, in a module of its own so that the pipeline (cache keys) can read it without
importing the package's top level, which imports the pipeline."""

__version__ = "0.1.0"
