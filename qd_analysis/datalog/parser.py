"""Tokenizer and recursive-descent parser for the supported Soufflé 2.5 subset.

The subset is deliberately tiny (types, declarations, IO directives, Horn rules with stratified
negation, ``_``, string/integer constants, ``=``/``!=``) so that the same files run unchanged on
Soufflé and on the embedded engine.  Anything outside it is rejected here with a message that
names the feature, rather than being silently misread.
"""

from __future__ import annotations

import bisect
import re

from ..records import field, record
from .syntax import (
    NUMBER,
    SYMBOL,
    Atom,
    Column,
    Compare,
    Const,
    Decl,
    Literal,
    Pos,
    Rule,
    Term,
    TypeDecl,
    Var,
    Wildcard,
)

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<openbcomment>/\*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<badnum>0[xXbB][0-9A-Fa-f]+|\d+\.\d+|\d+[uU])
  | (?P<number>\d+)
  | (?P<directive>\.[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>:-|<:|!=|<=|>=|[=!<>(),.:;+\-*/%^\[\]$@{}|&])
    """,
    re.VERBOSE | re.DOTALL,
)

_AGGREGATES = {"count", "sum", "min", "max", "mean", "range"}
_ARITH = {"+", "-", "*", "/", "%", "^", "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor"}
_DECL_QUALIFIERS = {
    "eqrel", "btree", "btree_delete", "brie", "inline", "no_inline", "magic", "no_magic",
    "overridable", "choice", "override",
}  # fmt: skip
_STRING_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


@record
class Token:
    """One lexical token with its kind, text (or decoded value) and position."""

    kind: str
    text: str
    pos: Pos
    value: str | int | None = None


@record
class ParsedUnit:
    """Everything a source file declares, before cross-file checks."""

    types: list[TypeDecl] = field(default_factory=list)
    decls: list[Decl] = field(default_factory=list)
    inputs: list[tuple[str, Pos]] = field(default_factory=list)
    outputs: list[tuple[str, Pos]] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    facts: list[Atom] = field(default_factory=list)


class _Lines:
    """Maps character offsets to (line, column, line text) for error positions."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> Pos:
        i = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[i]
        end = self.text.find("\n", start)
        line_text = self.text[start : end if end >= 0 else len(self.text)]
        return Pos(self.filename, i + 1, offset - start + 1, line_text)


def tokenize(text: str, filename: str) -> tuple[list[Token], dict[int, str]]:
    """Split ``text`` into tokens; also return ``//`` comments keyed by line (for ``.decl`` docs)."""
    lines = _Lines(text, filename)
    tokens: list[Token] = []
    comments: dict[int, str] = {}
    offset = 0
    n = len(text)
    while offset < n:
        m = _TOKEN_RE.match(text, offset)
        if m is None:
            pos = lines.pos(offset)
            ch = text[offset]
            if ch == "#":
                raise pos.error("preprocessor directives ('#') are not supported")
            if ch == '"':
                raise pos.error("unterminated string constant")
            if text.startswith("/*", offset):
                raise pos.error("unterminated block comment")
            raise pos.error(f"unexpected character {ch!r}")
        kind = m.lastgroup
        assert kind is not None
        tok_text = m.group()
        if kind == "ws" or kind == "bcomment":
            pass
        elif kind == "lcomment":
            pos = lines.pos(offset)
            comments[pos.line] = tok_text[2:].strip()
        elif kind == "openbcomment":
            raise lines.pos(offset).error("unterminated block comment")
        elif kind == "badnum":
            raise lines.pos(offset).error(f"only decimal integer constants are supported, got {tok_text!r}")
        elif kind == "string":
            pos = lines.pos(offset)
            tokens.append(Token("string", tok_text, pos, _decode_string(tok_text, pos)))
        elif kind == "number":
            tokens.append(Token("number", tok_text, lines.pos(offset), int(tok_text)))
        else:
            tokens.append(Token(kind, tok_text, lines.pos(offset)))
        offset = m.end()
    tokens.append(Token("eof", "", lines.pos(n)))
    return tokens, comments


def _decode_string(raw: str, pos: Pos) -> str:
    body = raw[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1]
            if nxt not in _STRING_ESCAPES:
                raise pos.error(f"unsupported escape sequence '\\{nxt}' in string constant")
            out.append(_STRING_ESCAPES[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class _Parser:
    def __init__(self, text: str, filename: str) -> None:
        self.tokens, self.comments = tokenize(text, filename)
        self.i = 0
        self.unit = ParsedUnit()

    # -- token helpers -------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def at(self, text: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == text

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            raise self.tok.pos.error(f"expected {what or repr(text)}, found {self._describe(self.tok)}")
        return self.advance()

    def expect_ident(self, what: str) -> Token:
        if self.tok.kind != "ident":
            raise self.tok.pos.error(f"expected {what}, found {self._describe(self.tok)}")
        return self.advance()

    @staticmethod
    def _describe(tok: Token) -> str:
        return "end of file" if tok.kind == "eof" else repr(tok.text)

    # -- top level -----------------------------------------------------------------------------
    def parse(self) -> ParsedUnit:
        while self.tok.kind != "eof":
            tok = self.tok
            if tok.kind == "directive":
                self.directive()
            elif tok.kind == "ident":
                self.clause()
            else:
                raise tok.pos.error(f"expected a directive or a clause, found {self._describe(tok)}")
        return self.unit

    def directive(self) -> None:
        tok = self.advance()
        name = tok.text
        if name == ".type":
            self.type_decl(tok)
        elif name == ".decl":
            self.rel_decl(tok)
        elif name in (".input", ".output"):
            self.io_directive(tok)
        else:
            raise tok.pos.error(f"directive '{name}' is not supported (only .type, .decl, .input, .output)")

    def type_decl(self, start: Token) -> None:
        name = self.expect_ident("a type name")
        if not (self.at("<:") or self.at("=")):
            raise self.tok.pos.error(
                f"expected '<:' after '.type {name.text}', found {self._describe(self.tok)}"
            )
        self.advance()
        if self.tok.kind != "ident":
            raise self.tok.pos.error(
                "record, union and ADT types are not supported; use '<: symbol' or '<: number'"
            )
        parent = self.advance()
        if self.at("|"):
            raise self.tok.pos.error("union types are not supported")
        self.unit.types.append(TypeDecl(name.text, parent.text, "", name.pos))

    def rel_decl(self, start: Token) -> None:
        name = self.expect_ident("a relation name")
        if self.at(","):
            raise self.tok.pos.error("declare one relation per '.decl'")
        self.expect("(", "'(' after the relation name")
        columns: list[Column] = []
        seen: set[str] = set()
        if not self.at(")"):
            while True:
                col = self.expect_ident("an attribute name")
                if col.text in seen:
                    raise col.pos.error(f"duplicate attribute name '{col.text}'")
                seen.add(col.text)
                self.expect(":", "':' and a type after the attribute name")
                typ = self.expect_ident("an attribute type")
                columns.append(Column(col.text, typ.text, "", typ.pos))
                if self.at(","):
                    self.advance()
                    continue
                break
        close = self.expect(")", "',' or ')' in the attribute list")
        if self.tok.kind == "ident" and self.tok.text in _DECL_QUALIFIERS:
            raise self.tok.pos.error(f"relation qualifier '{self.tok.text}' is not supported")
        doc = self.comments.get(close.pos.line, "") or self.comments.get(name.pos.line - 1, "")
        self.unit.decls.append(Decl(name.text, tuple(columns), name.pos, doc))

    def io_directive(self, start: Token) -> None:
        target = self.unit.inputs if start.text == ".input" else self.unit.outputs
        while True:
            rel = self.expect_ident(f"a relation name after '{start.text}'")
            target.append((rel.text, rel.pos))
            if self.at(","):
                self.advance()
                continue
            break
        if self.at("("):  # IO parameters (file names, delimiters): not ours to interpret
            depth = 0
            while True:
                tok = self.advance()
                if tok.kind == "eof":
                    raise tok.pos.error("unterminated IO parameter list")
                if tok.kind == "punct" and tok.text == "(":
                    depth += 1
                elif tok.kind == "punct" and tok.text == ")":
                    depth -= 1
                    if depth == 0:
                        break

    # -- clauses -------------------------------------------------------------------------------
    def clause(self) -> None:
        head = self.atom(negated=False, head=True)
        if self.at("."):
            self.advance()
            self.unit.facts.append(head)
            return
        if self.at(","):
            raise self.tok.pos.error("multiple heads are not supported; write one rule per head")
        if self.at("<="):
            raise self.tok.pos.error("subsumption ('<=') is not supported")
        if not self.at(":-"):
            raise self.tok.pos.error(f"expected '.' or ':-' after the head, found {self._describe(self.tok)}")
        self.advance()
        body: list[Literal] = []
        while True:
            body.append(self.literal())
            if self.at(","):
                self.advance()
                continue
            if self.at("."):
                self.advance()
                break
            if self.at(";"):
                raise self.tok.pos.error("disjunction (';') is not supported; write one rule per alternative")
            if self._is_arith(self.tok):
                raise self.tok.pos.error(f"arithmetic ('{self.tok.text}') is not supported")
            raise self.tok.pos.error(
                f"expected ',' or '.' after a body literal, found {self._describe(self.tok)}"
            )
        self.unit.rules.append(Rule(head, tuple(body), head.pos, len(self.unit.rules)))

    def atom(self, negated: bool, head: bool = False) -> Atom:
        name = self.expect_ident("a relation name")
        if name.text in _AGGREGATES and self.at(":"):
            raise name.pos.error(f"aggregates ('{name.text} : {{...}}') are not supported")
        if not self.at("("):
            what = "a head atom" if head else "an atom"
            raise self.tok.pos.error(
                f"expected '(' after '{name.text}' in {what}, found {self._describe(self.tok)}"
            )
        self.advance()
        args: list[Term] = []
        if not self.at(")"):
            while True:
                args.append(self.term())
                if self.at(","):
                    self.advance()
                    continue
                if self.at(")"):
                    break
                if self._is_arith(self.tok):
                    raise self.tok.pos.error(f"arithmetic ('{self.tok.text}') is not supported")
                raise self.tok.pos.error(
                    f"expected ',' or ')' in the arguments of '{name.text}', found {self._describe(self.tok)}"
                )
        self.advance()
        return Atom(name.text, tuple(args), negated, name.pos)

    def literal(self) -> Literal:
        tok = self.tok
        if tok.kind == "punct" and tok.text == "!":
            self.advance()
            if self.tok.kind != "ident" or not (self.peek().kind == "punct" and self.peek().text == "("):
                raise self.tok.pos.error("'!' must be followed by an atom")
            return self.atom(negated=True)
        if tok.kind == "ident" and self.peek().kind == "punct" and self.peek().text == "(":
            return self.atom(negated=False)
        if tok.kind == "ident" and tok.text in _AGGREGATES and self.peek().text == ":":
            raise tok.pos.error(f"aggregates ('{tok.text} : {{...}}') are not supported")
        if tok.kind == "punct" and tok.text == "(":
            raise tok.pos.error("parenthesised sub-formulas are not supported")
        if tok.kind == "ident" and tok.text in ("true", "false"):
            raise tok.pos.error(f"the constraint '{tok.text}' is not supported")
        left = self.term()
        op = self.tok
        if op.kind == "punct" and op.text in ("=", "!="):
            self.advance()
            right = self.term()
            return Compare(op.text, left, right, op.pos)
        if op.kind == "punct" and op.text in ("<", ">", "<=", ">="):
            raise op.pos.error(f"ordered comparison ('{op.text}') is not supported; only '=' and '!='")
        if self._is_arith(op):
            raise op.pos.error(f"arithmetic ('{op.text}') is not supported")
        raise op.pos.error(f"expected '=' or '!=' after {tok.text!r}, found {self._describe(op)}")

    def term(self) -> Term:
        tok = self.tok
        if tok.kind == "ident":
            nxt = self.peek()
            if nxt.kind == "punct" and nxt.text == "(":
                raise tok.pos.error(f"functors ('{tok.text}(...)') are not supported")
            if tok.text in _AGGREGATES and nxt.kind == "punct" and nxt.text == ":":
                raise tok.pos.error(f"aggregates ('{tok.text} : {{...}}') are not supported")
            if tok.text == "nil":
                raise tok.pos.error("records ('nil') are not supported")
            self.advance()
            if tok.text == "_":
                return Wildcard(tok.pos)
            return Var(tok.text, tok.pos)
        if tok.kind == "string":
            self.advance()
            assert isinstance(tok.value, str)
            return Const(tok.value, tok.pos)
        if tok.kind == "number":
            self.advance()
            assert isinstance(tok.value, int)
            return Const(tok.value, tok.pos)
        if tok.kind == "punct" and tok.text == "-" and self.peek().kind == "number":
            self.advance()
            num = self.advance()
            assert isinstance(num.value, int)
            return Const(-num.value, tok.pos)
        if tok.kind == "punct":
            if tok.text == "[":
                raise tok.pos.error("records ('[...]') are not supported")
            if tok.text == "$":
                raise tok.pos.error("algebraic data types ('$...') are not supported")
            if tok.text == "@":
                raise tok.pos.error("user-defined functors ('@...') are not supported")
            if tok.text == "(":
                raise tok.pos.error("parenthesised expressions are not supported")
        raise tok.pos.error(f"expected a variable, '_' or a constant, found {self._describe(tok)}")

    @staticmethod
    def _is_arith(tok: Token) -> bool:
        return (tok.kind == "punct" or tok.kind == "ident") and tok.text in _ARITH


def parse_unit(text: str, filename: str) -> ParsedUnit:
    """Parse one source text into its declarations, IO directives, rules and facts."""
    return _Parser(text, filename).parse()


__all__ = ["NUMBER", "SYMBOL", "ParsedUnit", "Token", "parse_unit", "tokenize"]
