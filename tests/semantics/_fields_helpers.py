"""A func in a module of its own, for tests of fields read through template arguments."""

import qd


@qd.func
def read_second(x: qd.template(), i, j):
    return x[1][i, j] + 1
