"""Every index shape of every subscriptable value, compared with quadrants 1.3.3.

Local vectors and matrices, struct members, fields of scalars, vectors and matrices, struct
fields and ndarrays, each read with constant, run-time and mixed indices (`m[i, 1]`, `m[1, j]`,
`sf[2, j]`, `mf[i][j, 1]`, rows and columns by slices). A local matrix read with one run-time
and one constant index lost the constant (`m[i, 1]` read `m[i, 0]`), which sent Genesis'
narrow-phase search directions astray.
"""

from __future__ import annotations

from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)
N = 3
sf = qd.field(qd.f32, shape=(3, 3))
vf = qd.Vector.field(3, qd.f32, shape=3)
mf = qd.Matrix.field(3, 3, qd.f32, shape=3)
S = qd.types.struct(v=qd.types.vector(3, qd.f32), m=qd.types.matrix(3, 3, qd.f32), s=qd.f32)
stf = S.field(shape=3)
out = qd.field(qd.f32, shape=(3, 35))
@qd.kernel
def fill(nd: qd.types.NDArray[qd.f32, 2], vnd: qd.types.NDArray[qd.types.vector(3, qd.f32), 1]):
    for i, j in qd.ndrange(3, 3):
        sf[i, j] = 10.0 * i + j
        vf[i][j] = 100.0 + 10.0 * i + j
        stf[i].v[j] = 200.0 + 10.0 * i + j
        nd[i, j] = 300.0 + 10.0 * i + j
        vnd[i][j] = 400.0 + 10.0 * i + j
        for k in range(3):
            mf[i][j, k] = 1000.0 + 100.0 * i + 10.0 * j + k
            stf[i].m[j, k] = 2000.0 + 100.0 * i + 10.0 * j + k
@qd.kernel
def read(nd: qd.types.NDArray[qd.f32, 2], vnd: qd.types.NDArray[qd.types.vector(3, qd.f32), 1]):
    for i in range(3):
        j = (i + 1) % 3
        m = qd.Matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]) + i
        v = qd.Vector([10.0, 20.0, 30.0]) * (i + 1)
        s = S(v=v, m=m, s=1.0)
        c = 0
        for t in qd.static(range(3)):
            out[i, c + 0] = m[j, t]
            out[i, c + 1] = m[t, j]
            c += 2
        out[i, 6] = m[j, j]
        out[i, 7] = m[1, 2]
        out[i, 8] = v[j]
        out[i, 9] = v[2]
        out[i, 10] = s.m[j, 1]
        out[i, 11] = s.m[2, j]
        out[i, 12] = s.v[j]
        out[i, 13] = sf[i, 1]
        out[i, 14] = sf[2, j]
        out[i, 15] = sf[j, i]
        out[i, 16] = vf[i][2]
        out[i, 17] = vf[j][i]
        out[i, 18] = vf[1][j]
        out[i, 19] = mf[i][j, 1]
        out[i, 20] = mf[i][2, j]
        out[i, 21] = mf[1][j, i]
        out[i, 22] = mf[j][2, 0]
        out[i, 23] = stf[i].v[j]
        out[i, 24] = stf[j].v[2]
        out[i, 25] = stf[i].m[j, 1]
        out[i, 26] = stf[2].m[0, j]
        out[i, 27] = nd[i, 1]
        out[i, 28] = nd[2, j]
        out[i, 29] = vnd[i][1]
        out[i, 30] = vnd[2][j]
        w = qd.Vector([m[j, 0], m[j, 1], m[j, 2]])
        out[i, 31] = w[0] + 10.0 * w[1] + 100.0 * w[2]
        r = m[j, :]
        out[i, 32] = r[0] + 10.0 * r[1] + 100.0 * r[2]
        col = m[:, j]
        out[i, 33] = col[0] + 10.0 * col[1] + 100.0 * col[2]
        out[i, 34] = mf[i][j, :].sum()
nd = qd.ndarray(qd.f32, shape=(3, 3))
vnd = qd.ndarray(qd.types.vector(3, qd.f32), shape=3)
fill(nd, vnd)
read(nd, vnd)
for row in out.to_numpy().tolist():
    for k in range(0, 35, 12):
        print(row[k:k + 12])
"""

# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
[4.0, 2.0, 5.0, 5.0, 6.0, 8.0, 5.0, 6.0, 20.0, 30.0, 5.0, 8.0]
[20.0, 1.0, 21.0, 10.0, 102.0, 110.0, 111.0, 1011.0, 1021.0, 1110.0, 1120.0, 201.0]
[212.0, 2011.0, 2201.0, 301.0, 321.0, 401.0, 421.0, 654.0, 654.0, 852.0, 3033.0]
[8.0, 4.0, 9.0, 7.0, 10.0, 10.0, 10.0, 7.0, 60.0, 60.0, 9.0, 10.0]
[60.0, 11.0, 22.0, 21.0, 112.0, 121.0, 112.0, 1121.0, 1122.0, 1121.0, 1220.0, 212.0]
[222.0, 2121.0, 2202.0, 311.0, 322.0, 411.0, 422.0, 1098.0, 1098.0, 1074.0, 3363.0]
[3.0, 3.0, 4.0, 6.0, 5.0, 9.0, 3.0, 8.0, 30.0, 90.0, 4.0, 9.0]
[30.0, 21.0, 20.0, 2.0, 122.0, 102.0, 110.0, 1201.0, 1220.0, 1102.0, 1020.0, 220.0]
[202.0, 2201.0, 2200.0, 321.0, 320.0, 421.0, 420.0, 543.0, 543.0, 963.0, 3603.0]"""


test_index_shapes_read_what_quadrants_reads, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)
