"""Small valid kernel programs the mutation generator starts from.

Each entry is the text of one module that defines a kernel `main` and `make_args()`, which
returns the positional arguments of a valid launch. Between them they cover the language:
arrays of several dtypes and ranks, scalars, templates, dataclasses (nested, `Final` members),
funcs returning scalars and tuples, struct values (`@qd.dataclass` with a method,
struct parameters and results), `qd.static` branches and unrolled loops, `qd.ndrange`,
atomics, casts, math, kernel-level serial code and break/continue. There are no `while`
loops: a mutated loop condition would make a program that legitimately never ends.
"""

HEADER = """\
import dataclasses
import math
import typing

import numpy as np

import qd

"""

CORPUS = {
    "saxpy": """
@qd.kernel
def main(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], a: qd.f32):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def make_args():
    return (np.arange(8, dtype=np.float32), np.ones(8, np.float32), 2.0)
""",
    "funcs": """
@qd.func
def clamp(v: qd.f32, lo: qd.f32, hi: qd.f32) -> qd.f32:
    r = v
    if v < lo:
        r = lo
    elif v > hi:
        r = hi
    return r


@qd.func
def twice(v):
    return v * 2


@qd.kernel
def main(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        out[i] = clamp(twice(x[i]), -1.0, 3.0)


def make_args():
    return (np.linspace(-2, 2, 8).astype(np.float32), np.zeros(8, np.float32))
""",
    "struct": """
@dataclasses.dataclass
class Mid:
    pos: qd.types.NDArray[qd.f32, 1]
    scale: qd.f32


@dataclasses.dataclass
class State:
    mid: Mid
    vel: qd.types.NDArray[qd.f32, 1]
    n: typing.Final[int]
    unused: qd.types.NDArray[qd.f32, 1]


@qd.func
def advance(m: Mid, v: qd.types.NDArray[qd.f32, 1], i: qd.i32):
    m.pos[i] += v[i] * m.scale


@qd.kernel
def main(s: State, dt: qd.f32):
    for i in range(s.n):
        s.vel[i] = s.vel[i] - dt
        advance(s.mid, s.vel, i)


def make_args():
    return (State(Mid(np.zeros(6, np.float32), 0.5), np.ones(6, np.float32), 6, np.zeros(1, np.float32)), 0.1)
""",
    "static": """
MODE = 1


@qd.kernel
def main(x: qd.types.NDArray[qd.i32, 1], k: qd.template()):
    for i in range(x.shape[0]):
        if qd.static(k == 0):
            x[i] = i
        elif qd.static(MODE == 1):
            acc = 0
            for j in qd.static(range(3)):
                acc += j * k
            x[i] = acc + x[i]
        else:
            x[i] = -i


def make_args():
    return (np.arange(5, dtype=np.int32), 2)
""",
    "grid": """
@qd.kernel
def main(a: qd.types.NDArray[qd.f64, 2], b: qd.types.NDArray[qd.f64, 2]):
    for i, j in qd.ndrange(a.shape[0], a.shape[1]):
        b[i, j] = a[i, j] * 0.5 + qd.sqrt(qd.abs(a[i, j]))
    for i in range(a.shape[0]):
        b[i, 0] = b[i, 0] + qd.sin(a[i, 1]) * qd.exp(-1.0)


def make_args():
    return (np.arange(12, dtype=np.float64).reshape(3, 4), np.zeros((3, 4), np.float64))
""",
    "reduce": """
@qd.kernel
def main(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]) -> qd.i64:
    total = 0
    for i in range(x.shape[0]):
        qd.atomic_add(out[0], x[i])
        out[1] += x[i] * x[i]
        total += x[i]
    return total


def make_args():
    return (np.arange(10, dtype=np.int64), np.zeros(2, np.int64))
""",
    "tuple": """
@qd.func
def divmod2(a: qd.i32, b: qd.i32) -> (qd.i32, qd.i32):
    return a // b, a % b


@qd.kernel
def main(x: qd.types.NDArray[qd.i32, 1], q: qd.types.NDArray[qd.i32, 1], r: qd.types.NDArray[qd.i32, 1]):
    for i in range(x.shape[0]):
        qq, rr = divmod2(x[i], 3)
        q[i] = qq
        r[i] = rr


def make_args():
    return (np.arange(-4, 5, dtype=np.int32), np.zeros(9, np.int32), np.zeros(9, np.int32))
""",
    "control": """
@qd.kernel
def main(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1], limit: qd.i32):
    for i in range(x.shape[0]):
        count = 0
        for j in range(x[i]):
            if j % 2 == 0:
                continue
            if count >= limit:
                break
            count += 1
        out[i] = count if count > 0 else -1


def make_args():
    return (np.arange(7, dtype=np.int32), np.zeros(7, np.int32), 2)
""",
    "casts": """
@qd.kernel
def main(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.u8, 1], z: qd.types.NDArray[qd.i16, 1]):
    for i in range(x.shape[0]):
        y[i] = qd.cast(qd.floor(x[i]), qd.u8)
        z[i] = qd.i16(x[i] * 3.0) + (1 if x[i] > 2.0 and x[i] < 5.0 else 0)
        x[i] = float(z[i]) / 2.0 + qd.max(x[i], 1.0)


def make_args():
    return (np.linspace(0, 7, 6).astype(np.float32), np.zeros(6, np.uint8), np.zeros(6, np.int16))
""",
    "serial": """
SCALE = 3.0


@qd.func
def fill(a: qd.types.NDArray[qd.f32, 1], v: qd.f32):
    for i in range(a.shape[0]):
        a[i] = v


@qd.kernel
def main(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
    fill(a, SCALE)
    first = a[0] * 2.0
    b[0] = first
    for i in range(1, b.shape[0]):
        b[i] = a[i] + first


def make_args():
    return (np.zeros(5, np.float32), np.zeros(5, np.float32))
""",
    "ndarray": """
@qd.kernel
def main(a: qd.types.NDArray[qd.i32, 2], s: qd.types.NDArray, t: qd.Template):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = i * t + j
    for i in range(s.shape[0]):
        s[i] = qd.min(s[i], 3)


def make_args():
    a = qd.ndarray(qd.i32, (2, 3))
    return (a, np.arange(6, dtype=np.int64), 10)
""",
    "template_struct": """
@dataclasses.dataclass
class Params:
    gain: qd.f32
    mode: qd.Template
    table: qd.types.NDArray[qd.f32, 1]


@qd.func
def scaled(p: Params, v: qd.f32, k: qd.template()) -> qd.f32:
    r = v * p.gain
    if qd.static(p.mode == 1):
        r = r + p.table[0] * k
    return r


@qd.kernel
def main(p: Params, x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = scaled(p, x[i], 2)


def make_args():
    return (Params(1.5, 1, np.ones(3, np.float32)), np.arange(4, dtype=np.float32))
""",
    "bits": """
@qd.kernel
def main(x: qd.types.NDArray[qd.u32, 1], sh: qd.i32, flag: qd.u1):
    for i in range(x.shape[0]):
        v = x[i]
        v = (v << sh) | (v >> 1)
        v ^= qd.u32(255)
        if flag and not (v & 1 == 0):
            v = ~v
        x[i] = v


def make_args():
    return (np.arange(6, dtype=np.uint32), 3, True)
""",
    "struct_values": """
line2 = qd.types.struct(d=qd.math.vec2, n=qd.f32)


@qd.dataclass
class Body:
    pos: qd.math.vec2
    mass: qd.f32
    line: line2

    @qd.func
    def energy(self, k: qd.f32) -> qd.f32:
        return 0.5 * self.mass * self.pos.norm_sqr() * k


@qd.func
def shifted(b: Body, dx) -> Body:
    c = b
    c.pos.x += dx
    return c


@qd.kernel
def main(x: qd.types.NDArray[qd.f32, 1], b0: Body, out: qd.types.NDArray[qd.f32, 1]) -> Body:
    acc = Body(mass=0.0)
    for i in range(x.shape[0]):
        b = Body(pos=qd.math.vec2(x[i], 1.0), mass=b0.mass, line=line2(d=(1.0, 2.0), n=i))
        b = shifted(b, 0.5)
        b.line.n += b.pos[1]
        out[i] = b.energy(2.0) + b.line.n
        acc.mass += x[i]
    return acc


def make_args():
    return (np.linspace(-1, 1, 8).astype(np.float32), Body(pos=(1.0, 2.0), mass=3.0), np.zeros(8, np.float32))
""",
}
