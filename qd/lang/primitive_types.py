"""`qd.types.primitive_types`: quadrants' sets of scalar types, for programs that classify dtypes.

`real_types` holds the float dtypes and Python's `float`; `integer_types` the integer dtypes
(u1 included) with `int` and `bool`, as in quadrants.
"""

from __future__ import annotations

from ..core.dtypes import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64

float16, float32, float64 = f16, f32, f64
int8, int16, int32, int64 = i8, i16, i32, i64
uint1, uint8, uint16, uint32, uint64 = u1, u8, u16, u32, u64

real_types = {f16, f32, f64, float}
real_type_ids = {id(t) for t in real_types}
integer_types = {i8, i16, i32, i64, u1, u8, u16, u32, u64, int, bool}
integer_type_ids = {id(t) for t in integer_types}
all_types = real_types | integer_types
type_ids = {id(t) for t in all_types}
