"""A `@qd.func` method read from an object is bound to it, as Python binds methods: a solver may
keep `[self.a, self.b]` and call `self.steps[i]()` from a kernel (quadrants' graph guide unrolls
parallel sections over such a list), and a kernel may call a method of a global object."""

from __future__ import annotations

from tests._support import quadrants_oracle

PROGRAM = """
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.data_oriented
class Solver:
    def __init__(self):
        self.steps = [self.first, self.second]

    @qd.kernel
    def run(self, k: qd.i32):
        for i in qd.static(range(len(self.steps))):
            self.steps[i](k + i)

    @qd.kernel(graph=True)
    def run_graph(self):
        with qd.graph.parallel_context():
            for i in qd.static(range(len(self.steps))):
                with qd.graph.parallel():
                    self.steps[i](7)

@qd.data_oriented
class Mine(Solver):
    def __init__(self, n):
        self.x = qd.field(qd.i32, shape=n)
        super().__init__()

    @qd.func
    def first(self, v: qd.i32):
        for j in range(self.x.shape[0]):
            self.x[j] += v

    @qd.func
    def second(self, v: qd.i32):
        self.x[0] += 10 * v

a, b = Mine(3), Mine(2)
a.run(1)
b.run(5)
a.run_graph()
print(a.x.to_numpy().tolist(), b.x.to_numpy().tolist())
print(a.first == a.first, a.first == b.first, a.steps[0] == a.first)

g = Mine(2)

@qd.kernel
def through_global():
    g.second(3)
    g.first(1)

through_global()
print(g.x.to_numpy().tolist())
"""
QUADRANTS_OUTPUT = "[98, 8, 8] [65, 5]\nTrue False True\n[31, 1]"  # quadrants 1.3.3 on the CPU


test_bound_func_methods, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT, arch=True)
