"""`qd.math`: the GLSL-style vector and matrix types and math functions of quadrants.

The types are `qd.types.vector` / `qd.types.matrix` instances whose component type follows
`qd.init`'s defaults (`float`, `int`); the functions work on Python-scope `qd.Vector` /
`qd.Matrix` values here, and inside kernels the frontend lowers each of them on the
components (`frontend/vectors.py`).
"""

from __future__ import annotations

from . import dtypes as _dt
from .matrix import matrix, vector

vec2, vec3, vec4 = vector(2, float), vector(3, float), vector(4, float)
ivec2, ivec3, ivec4 = vector(2, int), vector(3, int), vector(4, int)
uvec2, uvec3, uvec4 = vector(2, _dt.u32), vector(3, _dt.u32), vector(4, _dt.u32)
mat2, mat3, mat4 = matrix(2, 2, float), matrix(3, 3, float), matrix(4, 4, float)
