"""Parser and static checks: the supported subset is accepted, everything else is rejected
with file:line:col, the source line and a caret."""

from __future__ import annotations

import pytest

from qd_analysis.datalog import DatalogSyntaxError, parse_program

HEADER = """.type T <: symbol
.decl e(a: T, n: number)
.decl p(a: T)
"""


def error_of(text: str, filename: str = "x.dl") -> DatalogSyntaxError:
    with pytest.raises(DatalogSyntaxError) as info:
        parse_program(text, filename)
    return info.value


def test_accepts_the_subset() -> None:
    prog = parse_program(
        """
        // line comment
        /* block
           comment */
        .type Name <: symbol
        .type Id = number
        .decl e(a: Name, n: Id)  // trailing comment
        .decl p(a: Name, b: Name) /* inline */
        .decl flag()
        .input e(IO=file, filename="e.tsv", delimiter="\\t")
        .output p, flag
        e("x", 1). e("y", -2).
        flag() :- e(_, 1).
        p(a, b) :- e(a, n), e(b, m), a != b, n = m, !e(a, 3), m != 7, a = "x".
        p(A, A) :- e(A, _), !flag().
        """
    )
    assert prog.inputs == ("e",)
    assert prog.outputs == ("p", "flag")
    assert prog.decls["e"].doc == "trailing comment"
    assert [c.base for c in prog.decls["e"].columns] == ["symbol", "number"]
    assert prog.facts["e"] == (("x", 1), ("y", -2))
    assert len(prog.rules) == 3


def test_string_escapes() -> None:
    prog = parse_program(HEADER + 'e("q\\"z\\\\", 1).\n')
    assert prog.facts["e"] == (('q"z\\', 1),)


def test_error_has_position_line_and_caret() -> None:
    err = error_of(HEADER + "p(x) :- e(x, n), n < 3.\n")
    assert (err.filename, err.line, err.col) == ("x.dl", 4, 20)
    lines = str(err).splitlines()
    assert lines[0] == "x.dl:4:20: ordered comparison ('<') is not supported; only '=' and '!='"
    assert lines[1] == "    p(x) :- e(x, n), n < 3."
    assert lines[2] == "    " + " " * 19 + "^"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("e(x, n); e(x, n)", "disjunction (';') is not supported"),
        ("e(x, n), n = count : { e(_, _) }", "aggregates"),
        ("e(x, n), m = n + 1", "arithmetic ('+') is not supported"),
        ("e(x, n), y = cat(x, x)", "functors ('cat(...)') are not supported"),
        ("e(x, n), y = @f(x)", "user-defined functors"),
        ("e(x, n), y = [x, n]", "records ('[...]') are not supported"),
        ("e(x, n), y = $A(x)", "algebraic data types"),
        ("e(x, n), n >= 2", "ordered comparison ('>=')"),
        ("e(x, n), !(n = 2)", "'!' must be followed by an atom"),
        ("e(x, 0x1F)", "only decimal integer constants"),
        ("e(x, 1.5)", "only decimal integer constants"),
        ("e(x, n), true", "the constraint 'true' is not supported"),
    ],
)
def test_rejects_features_outside_the_subset(body: str, message: str) -> None:
    err = error_of(HEADER + f"p(x) :- {body}.\n")
    assert message in err.message
    assert err.line == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (".comp C { }\n", "directive '.comp' is not supported"),
        (".plan 1: (1, 2)\n", "directive '.plan' is not supported"),
        (".decl q(a: symbol) eqrel\n", "relation qualifier 'eqrel' is not supported"),
        (".decl q(a: symbol) choice-domain a\n", "relation qualifier 'choice' is not supported"),
        (".type U = A | B\n", "union types are not supported"),
        (".type R = [a: symbol]\n", "record, union and ADT types are not supported"),
        (".decl q(a: float)\n", "unknown type 'float'"),
        ('#include "x.dl"\n', "preprocessor directives"),
        ("p(x), e(x, 1) :- e(x, 2).\n", "multiple heads are not supported"),
        ('p("a") <= p("b") :- e("a", 1).\n', "subsumption"),
        ('e("a, 1).\n', "unterminated string constant"),
        ("/* never closed\n", "unterminated block comment"),
    ],
)
def test_rejects_other_constructs(text: str, message: str) -> None:
    err = error_of(HEADER + text)
    assert message in err.message
    assert err.line == 4


@pytest.mark.parametrize(
    ("text", "message", "col"),
    [
        ("p(x) :- q(x).", "relation 'q' is not declared", 9),
        ("p(x) :- e(x).", "relation 'e' has arity 2 but is used with 1 argument(s)", 9),
        ("p(x, y) :- e(x, y).", "relation 'p' has arity 1 but is used with 2 argument(s)", 1),
        ("p(y) :- e(x, _).", "variable 'y' in the head is not bound by a positive body atom (unsafe)", 3),
        ("p(x) :- e(x, _), !e(y, 1).", "variable 'y' in a negated atom is not bound", 21),
        ("p(x) :- e(x, _), y != x.", "variable 'y' in a comparison is not bound", 18),
        ("p(_) :- e(_, _).", "'_' is not allowed in the head", 3),
        ("p(x).", "variable 'x' in a fact: facts must be ground", 3),
        (
            'p(x) :- e(x, "one").',
            "type mismatch: symbol constant in column 'n' of 'e', which is a number",
            14,
        ),
        ("p(1) :- e(_, _).", "type mismatch: number constant in column 'a' of 'p'", 3),
        (
            "p(x) :- e(x, n), e(n, _).",
            "type mismatch: variable 'n' is used as number (e.n) and as T (e.a)",
            20,
        ),
        ("p(x) :- e(x, n), x = n.", "type mismatch: cannot compare T with number", 20),
        ('p(x) :- e(x, n), n != "a".', "type mismatch: cannot compare number with symbol", 20),
        (".output nothere", "relation 'nothere' is not declared", 9),
        (".decl p(b: symbol)", "relation 'p' is already declared at line 3", 7),
    ],
)
def test_semantic_errors(text: str, message: str, col: int) -> None:
    err = error_of(HEADER + text + "\n")
    assert message in err.message, err.message
    assert (err.line, err.col) == (4, col)


def test_incompatible_subtypes_are_rejected_like_souffle() -> None:
    text = """.type A <: symbol
.type B <: symbol
.decl ra(x: A)
.decl rb(x: B)
.decl both(x: A)
both(x) :- ra(x), rb(x).
"""
    err = error_of(text)
    assert "variable 'x' is used as A (both.x) and as B (rb.x)" in err.message
    assert (err.line, err.col) == (6, 22)


def test_subtype_and_base_type_mix() -> None:
    prog = parse_program(".type A <: symbol\n.decl ra(x: A)\n.decl s(x: symbol)\ns(x) :- ra(x).\n")
    assert len(prog.rules) == 1


def test_errors_in_later_files_name_that_file() -> None:
    from qd_analysis.datalog.program import build_program

    with pytest.raises(DatalogSyntaxError) as info:
        build_program([("a.dl", HEADER), ("b.dl", "\n\np(x) :- e(x, _), nope(x).\n")])
    assert str(info.value).startswith("b.dl:3:18: relation 'nope' is not declared")


def test_variables_may_be_lowercase_or_capitalised() -> None:
    prog = parse_program(HEADER + "p(X) :- e(X, n), e(_y, n), X != _y.\n")
    assert len(prog.rules) == 1
