"""The launch path: a Python function generated per kernel specialisation.

It reads exactly the kept leaves from the arguments (a pruned field is never touched),
writes them into a preallocated packed argument buffer and makes one ctypes call. Keeping
this straight-line code, instead of a generic loop over parameter descriptions, is what
brings a launch down to a few microseconds.
"""

from __future__ import annotations

import ctypes
import inspect
import threading

import numpy as np

from ..codegen import jit
from ..codegen.lower_llvm import STATUS_SLOTS, KernelModule
from ..dtypes import from_numpy
from ..errors import QdRuntimeError
from ..ndarray import Ndarray
from .args import array_arg, overlaps
from .parallel import raise_interrupt


def param_list(sig: inspect.Signature) -> tuple[str, str]:
    """(parameter list for `def`, argument list to forward the same call)."""
    params, fwd = [], []
    star = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        params.append(p.name if p.default is p.empty else f"{p.name}=_defaults[{p.name!r}]")
        fwd.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
    return ", ".join(params), ", ".join(fwd)


def make_launcher(kernel, km: KernelModule, addr: int, written: set[str], on_alias, on_error, info):
    n = max(km.n_slots, 2)
    buf = (ctypes.c_int64 * n)()
    fbuf = (ctypes.c_double * n).from_buffer(buf)
    status = (ctypes.c_int64 * (STATUS_SLOTS + max(1, len(km.returns))))()
    fstatus = (ctypes.c_double * len(status)).from_buffer(status)
    buf[0] = ctypes.addressof(status)
    run = jit.ENTRY(addr)
    sig = kernel.signature
    plist, fwd = param_list(sig)
    ns = {"_i": buf, "_f": fbuf, "_st": status, "_sf": fstatus, "_run": run, "_argp": ctypes.addressof(buf),
          "_Nd": Ndarray, "_npa": np.ndarray,
          "_arr": lambda v, d, nd, path, w: array_arg(v, d, nd, path, kernel, w),
          "_nptr": lambda v, path, w: _numpy_pointer(v, path, w, kernel),
          "_overlaps": overlaps, "_aliased": on_alias, "_diagnose": on_error, "_defaults": kernel.defaults,
          "_fail": lambda: _raise_check(km, status), "_keep": (buf, fbuf, status, fstatus), "_k": kernel, "_info": info,
          "_lock": threading.Lock()}
    body = ["  _nd = True"]
    arrays = []
    prefixes: dict[str, str] = {}
    for s in km.slots:
        k = s.slot
        acc = _accessor(s.path, prefixes, body)
        if s.kind == "array":
            ns[f"_dt{k}"] = s.dtype
            ns[f"_np{k}"] = s.dtype.np
            body += [f"  v = {acc}",
                     f"  if type(v) is _Nd and v.dtype is _dt{k} and v.ndim == {s.ndim}:",
                     f"    p{k} = v._ptr; e{k} = v._end; shp = v.shape",
                     f"  elif type(v) is _npa and v.dtype is _np{k} and v.ndim == {s.ndim} and v.size:",
                     f"    p{k} = _nptr(v, {s.path!r}, {s.path in written}); e{k} = p{k} + v.nbytes; shp = v.shape; _nd = False",
                     "  else:",
                     f"    p{k}, e{k}, shp = _arr(v, _dt{k}, {s.ndim}, {s.path!r}, {s.path in written}); _nd = False",
                     f"  _i[{k}] = p{k}"]
            body += [f"  _i[{k + 1 + d}] = shp[{d}]" for d in range(s.ndim)]
            arrays.append(s)
        elif s.dtype.is_float:
            body.append(f"  _f[{k}] = {acc}")
        else:
            body.append(f"  _i[{k}] = {acc}")
    if len(arrays) >= 2 and any(a.path in written for a in arrays):
        ps = [f"p{a.slot}" for a in arrays]
        spans = ", ".join(f"(p{a.slot}, e{a.slot})" for a in arrays)
        if len(arrays) == 2:
            a, b = arrays
            cond = f"(p{a.slot} < e{b.slot} and p{b.slot} < e{a.slot}) or p{a.slot} == p{b.slot}"
        else:
            cond = f"(len({{{', '.join(ps)}}}) < {len(ps)}) if _nd else _overlaps(({spans},))"
        body += [f"  if {cond}:", f"    return _aliased({fwd})"]
    # The argument buffer belongs to this variant; the lock keeps a launch from another Python
    # thread from rewriting it while native code reads it.
    lines = [f"def launch({plist}):", " with _lock:", "  try:"]
    lines += ["  " + b for b in body]
    lines += ["  except (TypeError, AttributeError, OverflowError, ValueError):", f"    return _diagnose({fwd})",
              "  _run(_argp)", "  _k.last = _info", "  if _st[0]:", "    _fail()"]
    rets = []
    for i, t in enumerate(km.returns):
        slot = STATUS_SLOTS + i
        rets.append(f"_sf[{slot}]" if t.is_float else (f"bool(_st[{slot}])" if t.is_bool else f"_st[{slot}]"))
    if len(rets) == 1:
        lines.append(f"  return {rets[0]}")
    elif rets:
        lines.append(f"  return ({', '.join(rets)},)")
    src = "\n".join(lines)
    code = compile(src, f"<qd launcher {kernel.fn.__qualname__}>", "exec")
    exec(code, ns)
    launch = ns["launch"]
    launch.__qd_source__ = src
    return launch


def _accessor(path: str, prefixes: dict[str, str], body: list[str]) -> str:
    """Python expression for a leaf path; each shared dataclass prefix is read once."""
    parts = path.split(".")
    expr = parts[0]
    for i in range(1, len(parts) - 1):
        prefix = ".".join(parts[: i + 1])
        local = prefixes.get(prefix)
        if local is None:
            local = prefixes[prefix] = f"_o{len(prefixes)}"
            body.append(f"  {local} = {expr}.{parts[i]}")
        expr = local
    return expr if len(parts) == 1 else f"{expr}.{parts[-1]}"


def _numpy_pointer(v, path: str, writable: bool, kernel) -> int:
    """Data pointer of a numpy array: `c_char.from_buffer` costs a quarter of `.ctypes.data` and
    also proves the buffer is C-contiguous and writable; anything else takes the checked path."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(v))
    except (TypeError, ValueError, BufferError):
        return array_arg(v, from_numpy(v.dtype) or v.dtype, v.ndim, path, kernel, writable)[0]


def _raise_check(km: KernelModule, status) -> None:
    raise_interrupt(status)  # a parallel loop of this launch was interrupted (Ctrl-C): re-raise that
    site, index = status[1], status[2]
    status[0] = status[1] = status[2] = 0
    loc = km.check_locs[site] if 0 <= site < len(km.check_locs) else None
    raise QdRuntimeError(f"index {index} is out of bounds", loc)
