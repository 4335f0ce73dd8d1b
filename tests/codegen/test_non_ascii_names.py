"""Non-ASCII identifiers, as Python allows them: kernels named `Δ` or `größe`, funcs and real
funcs, local variables, struct members, a data-oriented class `Körper` and its methods, a
field, dataclass members and shared arrays. Every name qd writes into LLVM IR (and so into PTX)
is ASCII (`qd.frontend.ids.symbol_prefix`, `qd.codegen.emitter.ident`); a kernel named `Δ` was
an internal error ("LLVM IR parsing error"). Compared with quadrants' output for the same program."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle
from tests._support.ptx import assert_ptxas_ok, entries

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

Teilchen = qd.types.struct(ü=qd.f32, größe=qd.i32)
φ = qd.field(qd.f32, shape=4)

@qd.func
def größe_von(wert: qd.f32) -> qd.f32:
    ä = wert + 1.0
    return ä * 2.0

@qd.func
def füll(t: qd.template()) -> qd.f32:
    return t.ü * qd.cast(t.größe, qd.f32)

@qd.real_func
def straße(n: qd.i32) -> qd.i32:
    ergebnis = n
    if n > 0:
        ergebnis = n + straße(n - 1)
    return ergebnis

@qd.kernel
def Σ(n: qd.i32) -> qd.i32:
    return straße(n)

@qd.kernel
def Δ(x: qd.types.NDArray[qd.f32, 1], schritt: qd.f32):
    for i in x:
        δx = größe_von(x[i]) + schritt
        x[i] = δx

@qd.kernel
def größe(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    summe = 0.0
    for i in x:
        t = Teilchen(ü=x[i], größe=i + 1)
        summe += füll(t)
        φ[i] = t.ü
    return summe

@qd.data_oriented
class Körper:
    def __init__(self):
        self.maße = qd.field(qd.f32, shape=4)

    @qd.func
    def hälfte(self, v: qd.f32) -> qd.f32:
        return v * 0.5

    @qd.kernel
    def bewegen(self, schritt: qd.f32):
        for i in self.maße:
            self.maße[i] = self.hälfte(qd.cast(i, qd.f32)) + schritt

x = np.arange(4, dtype=np.float32)
Δ(x, 0.5)
print(x.tolist())
print(Σ(4))
print(größe(x))
print(φ.to_numpy().tolist())
k = Körper()
k.bewegen(1.0)
print(k.maße.to_numpy().tolist())
"""
QUADRANTS_OUTPUT = """[2.5, 4.5, 6.5, 8.5]
10
65.0
[2.5, 4.5, 6.5, 8.5]
[1.0, 1.5, 2.0, 2.5]"""  # quadrants 1.3.3 on the CPU


test_non_ascii_names, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)


# ---------------------------------------------------------------- PTX

@qd.func
def größe_von(wert: qd.f32) -> qd.f32:
    ä = wert + 1.0
    return ä * 2.0


@qd.kernel
def Δ(x: qd.types.NDArray[qd.f32, 1], schritt: qd.f32):
    for i in x:
        δx = größe_von(x[i]) + schritt
        x[i] = δx


@qd.kernel
def geteilt_ä(x: qd.types.NDArray[qd.f32, 1]):
    qd.loop_config(block_dim=32)
    for i in range(32):
        lager_ü = qd.simt.block.SharedArray((32,), qd.f32)
        lager_ü[i] = x[i]
        qd.simt.block.sync()
        x[i] = lager_ü[31 - i]


@qd.data_oriented
class Körper:
    def __init__(self):
        self.maße = qd.ndarray(qd.f32, shape=(4,))

    @qd.func
    def hälfte(self, v: qd.f32) -> qd.f32:
        return v * 0.5

    @qd.kernel
    def bewegen(self, schritt: qd.f32):
        for i in range(4):
            self.maße[i] = self.hälfte(qd.cast(i, qd.f32)) + schritt


def test_non_ascii_names_in_ptx():
    """The CUDA code generator names symbols alike: ptxas accepts the PTX, whose names are ASCII."""
    qd.init(arch=qd.cpu)
    x = np.zeros(32, np.float32)
    for ptx in (qd.ptx(Δ, x, 0.5), qd.ptx(geteilt_ä, x), qd.ptx(Körper().bewegen, 1.0)):
        assert ptx.isascii() and entries(ptx)
        assert_ptxas_ok(ptx)


# ---------------------------------------------------------------- the disk cache

CACHED = """
import sys
import dataclasses
import numpy as np
import qd
qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

@dataclasses.dataclass
class Zustand:
    größe: qd.types.NDArray[qd.f32, 1]
    ungenutzt_ä: qd.types.NDArray[qd.f32, 1]

@qd.func
def doppelt_ü(ü: qd.f32) -> qd.f32:
    return ü * 2.0

@qd.kernel(fastcache=True)
def Δ(z: Zustand, faktor_π: qd.f32):
    for i in z.größe:
        z.größe[i] = doppelt_ü(z.größe[i]) * faktor_π

z = Zustand(np.ones(3, np.float32), np.zeros(3, np.float32))
Δ(z, 2.0)
print(z.größe.tolist(), qd.launch_info(Δ).source, qd.launch_info(Δ).pruned)
"""


@pytest.mark.slow  # two interpreters
def test_a_non_ascii_kernel_is_served_from_the_disk_cache(tmp_path):
    """The entry's module name is checked against the kernel's name as it was written."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(CACHED))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run() -> str:
        p = subprocess.run([sys.executable, "-W", "error", str(script), str(tmp_path / "cache")],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip()

    assert run() == "[4.0, 4.0, 4.0] compile ('z.ungenutzt_ä',)"
    assert run() == "[4.0, 4.0, 4.0] disk ('z.ungenutzt_ä',)"
