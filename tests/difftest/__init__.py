"""Differential testing of qd against quadrants (issue 23).

`generator.generate(seed)` writes a random, well-typed program in the quadrants language;
`runner` runs many of them per worker process on qd, on quadrants (the same source with
`import quadrants as qd`) and, where those two disagree, on `refqd` (a plain-Python stand-in
for `qd` that runs kernels as serial Python) to tell which side is wrong; `compare` decides
whether two sets of outputs agree. quadrants is the oracle for the language: qd must give
its results, except where the plain-Python reading of the language's rules says quadrants is
wrong.
"""
