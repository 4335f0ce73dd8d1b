"""What the mutation generator (`_mutate.py`) puts into valid kernels: odd expressions, targets,
annotations, statements, wrappers, launch arguments, `qd.init` options and operators.

Each list is a menu of things a user might plausibly write by mistake, or that the language
does not support; anything added here is tried by the next CI run.
"""

import ast

# Odd expressions; `P` is replaced by a name in scope or by the expression being replaced.
ODD_EXPRS = [
    "'s'", "None", "(1, 2)", "lambda: 1", "[1]", "{1: 2}", "{1}", "f'{P}'", "b'a'", "1j", "...", "undefined_name",
    "(y := 3)", "(v for v in range(2))", "[v for v in range(2)]", "P[1:2]", "P[::2]", "qd", "qd.nothing", "np.zeros(3)",
    "math.pi", "print", "len", "range(3)", "qd.ndrange(2)", "qd.template()", "qd.static(P)", "10 ** 400", "-2 ** 63",
    "2 ** 64", "float('nan')", "True", "-1", "0", "1.5", "qd.i8(300)", "qd.cast(P, qd.u1)", "P.x", "P.shape",
    "P.shape[5]", "P[0, 0, 0]", "P()", "P.T", "not P", "-P", "P + P", "P if P else P", "P < P < P", "P and P",
    "P is None", "P in P", "abs(P)", "min()", "max(P, P, P)", "qd.sqrt(P)", "qd.atomic_add(P, 1)", "int(P)",
    "float(P)", "bool(P)", "type(P)", "P @ P", "P ** -1", "P // 0", "P % 0", "P << 70", "P >> -1", "~P", "(P, P)[0]",
    "P[P]", "qd.cast(P, P)", "qd.cast(P)", "qd.i32(P, P)", "qd.static(P, P)", "qd.ndrange(P)", "P.shape[P]",
    "qd.atomic_max(P, P)", "qd.exp(P, P)", "qd.i64(2 ** 70)", "qd.u8(-1)", "P[None]", "P[...]", "P[-1]",
    "P.shape[-1]", "P.mid", "P.n", "divmod(P, 3)", "round(P)", "qd.f32('1')", "qd.types", "qd.types.NDArray",
    "np.float32(P)", "np.int64(2 ** 40)", "math.sqrt(P)", "math.inf", "qd.pi", "qd.floor(P) // 0.0",
    "P != P != P", "(lambda q: q)(P)", "(P := 1)", "clamp", "main", "main(P)", "State", "Mid(P, P)", "MODE",
    "SCALE()", "dataclasses", "typing.Final", "[P][0]", "{'a': P}['a']", "(P,)", "()", "P[()]",
    "1e300", "qd.f32(1e300)", "qd.exp(1000.0)", "qd.sqrt(-1.0)", "qd.log(0.0)", "P / 0.0", "qd.f64(P) ** 9999",
    "qd.u1(P)", "qd.i8(P) * 300", "qd.cast(P, qd.f32) / qd.cast(0, qd.f32)",
    "qd.bit_shr(P, P)", "qd.bit_shr(P, -1)", "qd.bit_cast(P, qd.f32)", "qd.bit_cast(P, qd.i8)", "qd.bit_cast(P, P)",
    "qd.raw_div(P, 0)", "qd.raw_mod(P, P)", "qd.round(P, qd.i32)", "qd.round(P, P)", "qd.floor(P, dtype=qd.u8)",
    "qd.rsqrt(P)", "qd.atan2(P, P)", "qd.asin(P)", "qd.select(P, P, P)", "qd.select(P)", "qd.pow(P, -1)",
    "qd.atomic_mul(P, P)", "qd.atomic_exchange(P, P)", "qd.atomic_cas(P, P, P)", "qd.atomic_cas(P, 1)",
    "qd.static_assert(P)", "qd.static(P in (1, 2))", "qd.static(qd.ndrange(2, 3))", "qd.ndrange(2, 3, axes=(1, 0))",
    "qd.ndrange(2, axes=P)", "qd.f16(P)", "qd.loop_config(serialize=P)",
]

# Odd assignment targets (what `x[i] = ...` may become).
ODD_TARGETS = ["P.attr", "P[0:1]", "(a, b)", "[a, b]", "(a, *b)", "P.shape[0]", "qd.x", "P[P, P, P]", "P.shape",
               "P[...]", "P[None]", "undefined_name", "P.mid.pos", "P.n", "MODE", "main"]

ODD_ANNOTATIONS = [
    "str", "int", "float", "bool", "typing.List[int]", "typing.Optional[qd.f32]", "None", "'qd.f32'",
    "qd.types.NDArray[qd.f32, 3]", "qd.types.NDArray[qd.i32, 1]", "qd.types.NDArray", "qd.template()",
    "qd.Template", "typing.Final[int]", "qd.f64", "qd.u1", "qd.i8", "qd.u64", "np.float32", "np.ndarray", "dict",
    "typing.Any", "(qd.f32, qd.f32)", "typing.Tuple[qd.f32]", "object", "qd.types.NDArray[qd.f32, 1, 2]",
    "qd.types.NDArray[qd.f32]", "qd.types.NDArray[qd.f32, True]", "qd.types.ndarray(dtype=qd.f32, ndim=1)",
    "qd.types.ndarray(dtype=qd.i64)", "'qd.types.NDArray[qd.f32, 9]'", "'Nowhere'", "qd.types.NDArray[None, 1]",
    "qd.types.NDArray[qd.f32, 0]", "typing.Final", "State", "Mid", "qd.i32", "lambda: 1", "1", "'s'", "qd",
    "typing.Union[qd.f32, qd.i32]", "qd.types.NDArray[np.float32, 1]", "qd.types.NDArray[float, 1]",
]

ODD_STMTS = [
    "global G", "del P", "import os", "from math import sqrt", "assert P", "assert P, 'm'", "raise ValueError()",
    "raise", "print(P)", "pass", "return", "return P", "return P, P", "yield P", "P = 1", "P: qd.f32 = 1",
    "P: str = 's'", "P += 1", "P[0] = 1", "P.attr = 1", "a, b = P", "a, *b = P", "P = P = 1", "break",
    "continue", "P", "...", "for v in P:\n    pass", "for v in range(P):\n    pass",
    "for a, b in qd.ndrange(P, P):\n    pass", "for v in qd.static(P):\n    pass", "if qd.static(P):\n    pass",
    "with P:\n    pass", "def g():\n    pass", "class C:\n    pass", "x: int", "qd.sync()", "P[P] += P",
    "for v in range(2):\n    P = v", "for v, w in range(2):\n    pass", "for v in range(1, 2, 0):\n    pass",
    "for v in qd.ndrange(2, 'a'):\n    pass", "P, P = 1, 2", "P = (P, P)", "P = clamp(P)", "P = main(P)",
    "qd.atomic_add(P, P)", "qd.static(P)", "for v in range(P, P, P):\n    pass", "P @= P", "P **= 2",
    "P //= 0", "P = P[P:P]", "if P:\n    return P", "for v in (1, 2):\n    pass", "for P in range(2):\n    pass",
    "lambda: P", "async def g():\n    pass", "P = [P for P in range(2)]", "try:\n    pass\nfinally:\n    pass",
    "match P:\n    case 1:\n        pass", "while False:\n    pass", "type(P)", "nonlocal P",
    "assert P, P", "qd.static_assert(P, 'm')", "qd.loop_config(serialize=True)", "qd.loop_config(block_dim=P)",
    "qd.loop_config(nothing=1)", "for v in P:\n    break", "for v, w in P:\n    pass",
    "for a, b in qd.ndrange(P, P, axes=(1, 0)):\n    pass", "for v in qd.static(qd.ndrange(P)):\n    pass",
    "return None", "qd.atomic_min(P, P)", "P[None] = P",
]

STMT_WRAPPERS = [
    "with open('f') as fh:\n    BODY", "try:\n    BODY\nexcept Exception:\n    pass",
    "if True:\n    BODY\nelse:\n    pass", "for _w in range(1):\n    BODY", "def inner():\n    BODY",
    "class Inner:\n    BODY", "if qd.static(True):\n    BODY", "for _w in qd.static(range(2)):\n    BODY",
    "if qd.static(False):\n    BODY", "while False:\n    BODY",
    "try:\n    BODY\nfinally:\n    pass",
]

ODD_ARGS = [
    "None", "'s'", "1.5", "2 ** 70", "np.zeros(8, np.int64)", "np.zeros((2, 2), np.float32)",
    "np.zeros(16, np.float32)[::2]", "[1, 2]", "object()", "np.float32(1)", "qd.ndarray(qd.f32, 8)",
    "np.zeros(0, np.float32)", "True", "-1", "(1, 2)", "np.zeros(8, '>f4')", "np.zeros(8, np.complex64)",
    "lambda: 1", "{'a': 1}", "np.zeros(8, object)", "np.zeros(8, np.float32).reshape(2, 4).T", "float('inf')",
    "np.ones(8, np.float32)[None]", "np.bool_(True)", "qd.f32", "np.int64(3)", "-(2 ** 63)", "10 ** 400", "1j",
    "np.zeros(8, np.float16)", "np.zeros(3, np.uint8)", "State", "np.ones(3)", "ARGS[0]", "ARGS",
    "qd.ndarray(qd.f32, 1.5)", "qd.ndarray('x', 3)", "qd.ndarray(qd.f32, (2, -1))", "qd.ndarray(None, 3)",
    "qd.ndarray(qd.i32, (2, 3))", "qd.ndarray(qd.f64, ())", "qd.ndarray(qd.u1, 8)", "qd.template()",
    "qd.types.NDArray[qd.f32, 1]", "np.zeros(8, np.float32)[::-1]", "np.zeros((8, 1), np.float32)[:, 0]",
]

ODD_INIT = [  # (keyword, value) of qd.init
    ("arch", "'nothing'"), ("arch", "3"), ("default_fp", "qd.i32"), ("default_ip", "qd.f32"), ("default_fp", "'f32'"),
    ("verbose", "True"), ("kernel_profiler", "1"), ("no_such_option", "1"), ("prune", "False"),
    ("offline_cache_file_path", "5"), ("arch", "qd.cuda"), ("arch", "qd.gpu"), ("default_ip", "qd.i64"),
    ("default_fp", "qd.f64"), ("cpu_max_num_threads", "-1"), ("cpu_max_num_threads", "'2'"), ("random_seed", "3"),
    ("cpu_max_num_threads", "2.5"), ("arch", "None"), ("default_ip", "qd.u1"),
    ("fast_math", "False"), ("fast_maths", "False"), ("print_full_traceback", "True"), ("default_up", "qd.u32"),
    ("check_out_of_bound", "True"), ("log_level", "'warn'"), ("debug", "True"),
]

AFTER_LAUNCH = ["qd.explain(main, 'nothing')", "qd.explain(main)", "qd.launch_info(main)", "qd.explain(make_args)",
                "qd.explain(main, 3)", "qd.explain(main, None)", "qd.launch_info(None)", "qd.explain(main, 'x')",
                "qd.explain(main, ['x'])", "qd.launch_info(main).kept[99]"]

BINOPS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift, ast.BitOr,
          ast.BitXor, ast.BitAnd, ast.MatMult]
CMPOPS = [ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn]
UNOPS = [ast.UAdd, ast.USub, ast.Not, ast.Invert]
DECORATORS = ["qd.kernel", "qd.func", "qd.kernel()", "qd.func(is_real_function=True)", "qd.kernel(nothing=1)",
              "qd.template", "qd.static", "staticmethod", None]


CLASS_DECORATORS = ["dataclasses.dataclass(frozen=True)", "dataclasses.dataclass(slots=True)", "qd.kernel", "qd.func",
                    "dataclasses.dataclass(eq=False)", "typing.final", None]
