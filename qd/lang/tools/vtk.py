"""`qd.tools.vtk.write_vtk`: a 2-D or 3-D scalar field (anything with `to_numpy()`) as a VTK
rectilinear grid file, written by `pyevtk` as in quadrants, so the file is the same. `pyevtk`
is optional: `qd.tools` is loaded on first use, so only a program that uses it imports it."""

from __future__ import annotations

import numpy as np

try:
    from pyevtk.hl import gridToVTK
except ImportError:  # optional; `write_vtk` says how to install it
    gridToVTK = None  # noqa: N816 - pyevtk's name


def write_vtk(scalar_field, filename: str) -> None:
    """Write `scalar_field` to `filename` + `.vtr`, its values as the cell data named `filename`:
    a 3-D field on the grid of its index ranges, a 2-D one as one layer (z from 0 to 1)."""
    if gridToVTK is None:
        raise RuntimeError("Failed to import pyevtk. Please install it via `pip install pyevtk` first.")
    values = scalar_field.to_numpy()
    shape = values.shape
    if len(shape) not in (2, 3):
        raise ValueError("The input field must be a 2D or 3D scalar field.")
    if len(shape) == 2:
        values, z = values[np.newaxis, :, :], np.array([0, 1])
    else:
        z = np.arange(0, shape[2])
    gridToVTK(filename, x=np.arange(0, shape[0]), y=np.arange(0, shape[1]), z=z, cellData={filename: values})


__all__ = ["write_vtk"]
