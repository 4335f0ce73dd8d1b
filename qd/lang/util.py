"""`qd.lang.util`: the dtype conversions and queries programs written for quadrants import from it.

Genesis builds its field-to-tensor copies on `to_numpy_type` / `to_pytorch_type`; test harnesses
ask `has_pytorch()`. torch stays optional: nothing here imports it, and `to_pytorch_type` uses the
torch module the program has already imported (a program asking for torch dtypes uses torch).
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdConfigError, QdTypeError, caller_loc
from .data_oriented import is_data_oriented


def has_pytorch() -> bool:
    """Whether torch can be imported in this environment."""
    return "torch" in sys.modules or importlib.util.find_spec("torch") is not None


def _dtype(dt) -> _dt.DType:
    d = _dt.as_dtype(dt)
    if d is None:
        raise QdTypeError(f"{dt!r} is not a qd dtype", caller_loc())
    return d


def to_numpy_type(dt) -> type:
    """The numpy scalar type of a qd dtype (`qd.f32` -> `np.float32`)."""
    d = _dtype(dt)
    return np.float16 if d.name == "f16" else d.np.type


_TORCH_NAMES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
                "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
                "u1": "bool"}


def to_pytorch_type(dt):
    """The torch dtype of a qd dtype (`qd.f32` -> `torch.float32`)."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise QdConfigError("qd.lang.util.to_pytorch_type: import torch first", caller_loc())
    return getattr(torch, _TORCH_NAMES[_dtype(dt).name])


def to_quadrants_type(dt) -> _dt.DType:
    """The qd dtype of a numpy or torch dtype, or of a qd dtype."""
    if type(dt).__module__ == "torch":  # a torch.dtype: match it by name
        name = str(dt).removeprefix("torch.")
        for qd_name, torch_name in _TORCH_NAMES.items():
            if torch_name == name:
                return getattr(_dt, qd_name)
    return _dtype(dt)


__all__ = ["has_pytorch", "to_numpy_type", "to_pytorch_type", "to_quadrants_type", "is_data_oriented"]
