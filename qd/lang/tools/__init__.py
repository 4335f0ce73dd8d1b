"""`qd.tools`: quadrants' file writers, pure Python over numpy: `PLYWriter` (point clouds and
meshes as PLY) and `write_vtk` (a 2-D or 3-D scalar field as a VTK rectilinear grid), plus
`qd.tools.diagnose`, which prints what a bug report needs. They write the same bytes as
quadrants' for the same inputs, so files made by either load alike in other tools.

`vtk` (which imports pyevtk) and `diagnose` (subprocess) are loaded on first use, so
`import qd` pays for neither.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from . import np2ply
from .np2ply import PLYWriter


def _lazy(name: str) -> ModuleType:
    """This package's module `name`, executed when first used."""
    spec = importlib.util.find_spec(f"{__name__}.{name}")
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


vtk = _lazy("vtk")
diagnose = _lazy("diagnose")


def write_vtk(scalar_field, filename: str) -> None:
    """`qd.tools.vtk.write_vtk`: `scalar_field` (2-D or 3-D) as the VTK grid file `filename.vtr`."""
    vtk.write_vtk(scalar_field, filename)


# what `from quadrants.tools import *` gives (it has no `__all__`: its public names)
__all__ = ["PLYWriter", "diagnose", "np2ply", "vtk", "write_vtk"]
