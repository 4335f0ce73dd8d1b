"""Frontend: Python source of kernels and funcs → typed IR per instantiation.

- `lower.py`: the statement visitor (`Lowerer`) and `lower_kernel`, the entry point;
- `lower_expr.py`: the lowering's state and its expressions (`ExprLowerer`), which dispatch on the
  AST node and ask the value's kind;
- `kinds.py`: the value model: `Kind`, the default answers, and `kind_of(v)`; one module per kind of
  value answers for it: `kind_scalar.py` (run-time scalars and variables), `kind_const.py`
  (compile-time values), `kind_leaf.py` (arrays and scalar parameters), `kind_vector.py` (vectors and
  matrices), `kind_rec.py` (struct values), `kind_dataclass.py` (dataclass and data-oriented views),
  `kind_tuple.py` (tuples), `kind_range.py` (ranges);
- `loops.py`: `for` loops by kind (unrolled static loops, run-time range and struct-for loops);
- `lowering.py`: the `Lowering` protocol, the type of the lowering its helpers are given;
- `calls.py`: func calls: the call-site binder, instantiation, expansion in place;
- `builtin_calls.py`: the table of builtins a kernel may call (`qd.static`, `range`, atomics...);
  `builtin_scalars.py` (bit, math and atomic builtins, `qd.static_assert`) and `builtin_loops.py`
  (`qd.ndrange(axes=)`, `qd.loop_config`, static membership tests) add their entries to it;
- `typing_rules.py`: result types, promotion, casts and folding, as pure functions;
- `semantics.py`: the value of every scalar operation (shared with codegen);
- `kernel_params.py`: a kernel's parameter values and leaves from its launch arguments;
- `signature.py`: annotations → parameter specs, and the one walk over them;
- `ir.py`: the typed IR (leaves, expressions, statements, a kernel's tasks);
- `ids.py`: instantiation and call-site ids, written and read;
- `registry.py`: the cache of instantiations and the stack of those being lowered;
- `values.py`: the symbolic values' records (what each kind answers is its kind module's);
- `captures.py`: the compile-time values a kernel read, for the disk cache;
- `dead_arms.py`: what a not-taken `qd.static` arm would access or call;
- `source.py`: a function's parsed source with the user's file positions.
"""
