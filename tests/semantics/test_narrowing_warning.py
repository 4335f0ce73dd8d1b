"""A store that may lose precision (f32 <- f64, i32 <- i64, an int <- a float) warns, in
quadrants' words, at the assignment; widening stores and literals do not."""

import warnings

import numpy as np

import qd


@qd.kernel
def narrowing(d: qd.f64, n: qd.i64, f: qd.f32, i: qd.i32, a: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    x: qd.f32 = 0.0
    x = d  # at:f32<-f64
    m: qd.i32 = 0
    m = n  # at:i32<-i64
    k: qd.i32 = 0
    k = f  # at:i32<-f32
    y: qd.f32 = 0.0
    y = i  # widening: no warning
    a[0] = d  # at:element
    z = 0.0
    z = 2.5  # a literal: no warning
    return x + m + k + y + z


def test_narrowing_stores_warn_where_they_are(arch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = np.zeros(1, np.float32)
        assert narrowing(1.5, 2, 3.0, 4, a) == 1.5 + 2 + 3 + 4 + 2.5
    msgs = sorted({(w.filename, w.lineno, str(w.message)) for w in caught
                   if "lose precision" in str(w.message)})  # once per place
    src = open(__file__).read().splitlines()
    lines = {tag: src.index(next(s for s in src if s.endswith(f"# at:{tag}"))) + 1
             for tag in ("f32<-f64", "i32<-i64", "i32<-f32", "element")}
    assert len(msgs) == 4, msgs
    assert all(f == __file__ for f, _, _ in msgs)
    assert any(n == lines["f32<-f64"] and "f32 <- f64" in m for _, n, m in msgs)
    assert any(n == lines["i32<-i64"] and "i32 <- i64" in m for _, n, m in msgs)
    assert any(n == lines["i32<-f32"] and "i32 <- f32" in m for _, n, m in msgs)
    assert any(n == lines["element"] and "f32 <- f64" in m for _, n, m in msgs)
