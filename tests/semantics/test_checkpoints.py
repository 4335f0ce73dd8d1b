"""Checkpoints of graph kernels (`@qd.kernel(graph=True, checkpoints=True)`, `with
qd.checkpoint(label, yield_on=flag):`, `kernel.resume(..., from_checkpoint=label)`): a yield
stops the launch after its block and leaves the do-whiles around it; a resume starts at the
block, in the middle of the do-whiles, then tests their counters as their next iterations would.
Each program's output is quadrants 1.3.3's on the CPU."""

from __future__ import annotations

import pytest

from tests._support import quadrants_oracle

YIELD_AND_RESUME = """from enum import IntEnum
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

class Stage(IntEnum):
    A = 0
    B = 5

@qd.kernel(graph=True, checkpoints=True)
def step(arr: qd.types.ndarray(qd.f32, ndim=1), flag: qd.types.ndarray(qd.i32, ndim=0),
         flag2: qd.types.ndarray(qd.i32, ndim=0), cond: qd.types.ndarray(qd.i32, ndim=0),
         log: qd.types.ndarray(qd.i32, ndim=1)):
    for i in range(1):
        log[0] += 1
    while qd.graph.do_while(cond):
        for i in range(arr.shape[0]):
            arr[i] = arr[i] + 1.0
        with qd.checkpoint(Stage.A, yield_on=flag):
            for i in range(arr.shape[0]):
                arr[i] = arr[i] * 2.0
            for _ in range(1):
                if arr[0] > 20.0 and log[3] == 0:
                    flag[()] = 1
                    log[3] = 1
        for i in range(1):
            log[1] += 1
            cond[()] = cond[()] - 1
    with qd.checkpoint(Stage.B, yield_on=flag2):
        for _ in range(1):
            log[2] += 1
            if log[2] == 1:
                flag2[()] = 7

arr = qd.ndarray(qd.f32, shape=(3,))
flag = qd.ndarray(qd.i32, shape=())
flag2 = qd.ndarray(qd.i32, shape=())
cond = qd.ndarray(qd.i32, shape=())
log = qd.ndarray(qd.i32, shape=(4,))
cond[()] = 6
status = step(arr, flag, flag2, cond, log)
trace = []
while status.yielded:
    trace.append((repr(status.checkpoint), arr.to_numpy().tolist(), log.to_numpy().tolist(), int(cond[()])))
    flag[()] = 0
    flag2[()] = 0
    status = step.resume(arr, flag, flag2, cond, log, from_checkpoint=status.checkpoint)
for t in trace:
    print(t)
print(status.yielded, status.checkpoint, arr.to_numpy().tolist(), log.to_numpy().tolist(), int(cond[()]))
print(type(status).__name__)
"""
YIELD_AND_RESUME_OUTPUT = ("('<Stage.A: 0>', [30.0, 30.0, 30.0], [1, 3, 0, 1], 3)\n"
                           "('<Stage.B: 5>', [246.0, 246.0, 246.0], [1, 6, 1, 1], 0)\n"
                           "False None [246.0, 246.0, 246.0] [1, 6, 2, 1] 0\nGraphStatus")

RULES = """import quadrants as qd
qd.init(arch=qd.cpu)

def attempt(name, f):
    try:
        f()
        print(name, "ran")
    except Exception as e:
        print(name, "raised", type(e).__name__)

flag = qd.ndarray(qd.i32, shape=())
arr = qd.ndarray(qd.f32, shape=(3,))

@qd.kernel(graph=True)
def no_flag(a: qd.types.ndarray(qd.f32, ndim=1), f: qd.types.ndarray(qd.i32, ndim=0)):
    with qd.checkpoint(0, yield_on=f):
        for i in range(a.shape[0]):
            a[i] = 1.0
attempt("without checkpoints=True", lambda: no_flag(arr, flag))

@qd.kernel(graph=True, checkpoints=True)
def bare(a: qd.types.ndarray(qd.f32, ndim=1), f: qd.types.ndarray(qd.i32, ndim=0)):
    with qd.checkpoint(0, yield_on=f):
        a[0] = 1.0
attempt("bare statement", lambda: bare(arr, flag))

@qd.kernel(graph=True, checkpoints=True)
def twice(a: qd.types.ndarray(qd.f32, ndim=1), f: qd.types.ndarray(qd.i32, ndim=0)):
    with qd.checkpoint(1, yield_on=f):
        for i in range(a.shape[0]):
            a[i] = 1.0
    with qd.checkpoint(1, yield_on=f):
        for i in range(a.shape[0]):
            a[i] = 2.0
attempt("label twice", lambda: twice(arr, flag))

@qd.kernel(graph=True, checkpoints=True)
def nested(a: qd.types.ndarray(qd.f32, ndim=1), f: qd.types.ndarray(qd.i32, ndim=0)):
    with qd.checkpoint(1, yield_on=f):
        with qd.checkpoint(2, yield_on=f):
            for i in range(a.shape[0]):
                a[i] = 1.0
attempt("nested", lambda: nested(arr, flag))

@qd.kernel(graph=True, checkpoints=True)
def top(a: qd.types.ndarray(qd.f32, ndim=1), f: qd.types.ndarray(qd.i32, ndim=0)):
    for i in range(a.shape[0]):
        a[i] += 1.0
    with qd.checkpoint(3, yield_on=f):
        for i in range(a.shape[0]):
            a[i] *= 3.0
        for _ in range(1):
            f[()] = 1
    for i in range(a.shape[0]):
        a[i] += 100.0
flag[()] = 0
s = top(arr, flag)
print(s.yielded, s.checkpoint, arr.to_numpy().tolist())
flag[()] = 5
s = top.resume(arr, flag, from_checkpoint=3)
print(s.yielded, s.checkpoint, arr.to_numpy().tolist())
attempt("resume unknown label", lambda: top.resume(arr, flag, from_checkpoint=9))
"""
RULES_OUTPUT = (
    'without checkpoints=True raised QuadrantsSyntaxError\n'
    'bare statement raised QuadrantsSyntaxError\n'
    'label twice raised QuadrantsSyntaxError\n'
    'nested raised QuadrantsSyntaxError\n'
    'True 3 [3.0, 3.0, 3.0]\n'
    'True 3 [9.0, 9.0, 9.0]\n'
    'resume unknown label raised RuntimeError'
)

DATA_ORIENTED = """import quadrants as qd
qd.init(arch=qd.cpu)

@qd.data_oriented
class Sim:
    def __init__(self):
        self.x = qd.ndarray(qd.f32, shape=(4,))
        self.flag = qd.ndarray(qd.i32, shape=())
        self.n = qd.ndarray(qd.i32, shape=())

    @qd.kernel(graph=True, checkpoints=True)
    def run(self):
        while qd.graph.do_while(self.n):
            with qd.checkpoint(2, yield_on=self.flag):
                for i in range(self.x.shape[0]):
                    self.x[i] += i + 1.0
                for _ in range(1):
                    if self.x[3] >= 8.0 and self.x[3] < 9.0:
                        self.flag[()] = 1
            for _ in range(1):
                self.n[()] -= 1

s = Sim()
s.n[()] = 4
st = s.run()
print(st.yielded, st.checkpoint, s.x.to_numpy().tolist(), int(s.n[()]))
s.flag[()] = 0
st = s.run.resume(from_checkpoint=st.checkpoint)
print(st.yielded, st.checkpoint, s.x.to_numpy().tolist(), int(s.n[()]))
"""
DATA_ORIENTED_OUTPUT = 'True 2 [2.0, 4.0, 6.0, 8.0] 3\nFalse None [5.0, 10.0, 15.0, 20.0] 0'

CASES = [(YIELD_AND_RESUME, YIELD_AND_RESUME_OUTPUT), (RULES, RULES_OUTPUT), (DATA_ORIENTED, DATA_ORIENTED_OUTPUT)]


@pytest.mark.parametrize("case", range(len(CASES)), ids=["yield-and-resume", "rules", "data-oriented"])
def test_checkpoints(arch, tmp_path, capsys, case):
    program, want = CASES[case]
    assert quadrants_oracle.run_here(tmp_path, program, capsys) == want


@pytest.mark.slow  # two interpreters per program
@pytest.mark.parametrize("case", range(len(CASES)), ids=["yield-and-resume", "rules", "data-oriented"])
def test_same_output_as_quadrants(tmp_path, case):
    program, want = CASES[case]
    ref, got = quadrants_oracle.both(tmp_path, program)
    assert ref == got == want
