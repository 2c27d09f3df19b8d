"""Integer dim expressions: `d_model / n_head`, `pos + n_tokens`.

A name resolves to an int (config value, circuit dim) or to a runtime scalar, which stays
symbolic as a C expression with the bounds the phase declares. Only + - * / (exact) and //.
"""

import ast
from dataclasses import dataclass
from typing import Mapping, Optional, Union

from tools.codegen.errors import CompileError


@dataclass(frozen=True)
class Sym:
    """A value known only at run time: its C expression and inclusive bounds (hi None: unbounded)."""

    c: str
    lo: int
    hi: Optional[int]


Value = Union[int, Sym]


def compound(v: Value) -> str:
    """C text of v, parenthesized when it is a compound expression."""
    if isinstance(v, int):
        return str(v)
    return f"({v.c})" if " " in v.c else v.c


def _combine(op: ast.operator, a: Value, b: Value, where: str) -> Value:
    if isinstance(a, int) and isinstance(b, int):
        if isinstance(op, ast.Add):
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            return a * b
        if b == 0:
            raise CompileError(f"{where}: division by zero")
        if isinstance(op, ast.Div) and a % b:
            raise CompileError(f"{where}: {a} / {b} is not exact (use // to floor)")
        return a // b
    sa, sb = (Sym(str(x), x, x) if isinstance(x, int) else x for x in (a, b))
    # Identities keep the generated C readable: x + 0, x * 1.
    if isinstance(op, (ast.Add, ast.Sub)) and b == 0:
        return a
    if isinstance(op, ast.Add) and a == 0:
        return b
    if isinstance(op, ast.Mult) and b == 1:
        return a
    if isinstance(op, ast.Mult) and a == 1:
        return b
    symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/"}[type(op)]
    unbounded = sa.hi is None or sb.hi is None
    if isinstance(op, ast.Add):
        lo, hi = sa.lo + sb.lo, None if unbounded else sa.hi + sb.hi
    elif isinstance(op, ast.Sub):
        lo = sa.lo - sb.hi if sb.hi is not None else 0
        hi = None if sa.hi is None else sa.hi - sb.lo
    elif isinstance(op, ast.Mult):
        lo, hi = sa.lo * sb.lo, None if unbounded else sa.hi * sb.hi  # dims are non-negative
    else:
        lo = sa.lo // max(sb.hi, 1) if sb.hi is not None else 0
        hi = None if sa.hi is None else sa.hi // max(sb.lo, 1)
    return Sym(f"{compound(a)} {symbol} {compound(b)}", lo, hi)


def evaluate(text, env: Mapping[str, Value], where: str) -> Value:
    """Evaluates `text` (int or expression string); `where` prefixes any error."""
    if isinstance(text, int):
        return text
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError:
        raise CompileError(f"{where}: cannot parse dim expression '{text}'") from None

    def walk(node) -> Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise CompileError(f"{where}: unknown dim '{node.id}' in '{text}'")
            return env[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)):
            return _combine(node.op, walk(node.left), walk(node.right), where)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return _combine(ast.Sub(), 0, walk(node.operand), where)
        raise CompileError(f"{where}: unsupported syntax in dim expression '{text}'")

    return walk(tree.body)


def check(text: str, env: Mapping[str, Value], where: str) -> Optional[bool]:
    """Evaluates comparisons joined by and/or, e.g. `n_head * head_dim == d_model`.
    None when a runtime value is involved (it cannot be decided at compile time)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise CompileError(f"{where}: cannot parse constraint '{text}'") from None

    def walk(node) -> Optional[bool]:
        if isinstance(node, ast.BoolOp):
            values = [walk(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return False if False in values else (None if None in values else True)
            return True if True in values else (None if None in values else False)
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            raise CompileError(f"{where}: a constraint is comparisons joined by and/or, got '{text}'")
        left = evaluate(ast.unparse(node.left), env, where)
        right = evaluate(ast.unparse(node.comparators[0]), env, where)
        if isinstance(left, Sym) or isinstance(right, Sym):
            return None
        ops = {
            ast.Eq: left == right,
            ast.NotEq: left != right,
            ast.Gt: left > right,
            ast.GtE: left >= right,
            ast.Lt: left < right,
            ast.LtE: left <= right,
        }
        return ops[type(node.ops[0])]

    return walk(tree)


def upper(v: Value) -> Optional[int]:
    """Largest value `v` takes (None: unbounded); what the planner sizes buffers for."""
    return v if isinstance(v, int) else v.hi


def lower(v: Value) -> int:
    """Smallest value `v` takes."""
    return v if isinstance(v, int) else v.lo


def c_text(v: Value) -> str:
    return str(v) if isinstance(v, int) else v.c


def evaluate_float(text: str, env: Mapping[str, Value], where: str) -> float:
    """A compile-time float such as `1 / sqrt(Dh)` over int dims (for float kernel arguments)."""
    import math

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CompileError(f"{where}: cannot parse float expression '{text}'") from None

    def walk(node) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name):
            v = env.get(node.id)
            if not isinstance(v, int):
                raise CompileError(f"{where}: '{node.id}' in '{text}' is not a compile-time dim")
            return float(v)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "sqrt"
            and len(node.args) == 1
        ):
            return math.sqrt(walk(node.args[0]))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = walk(node.left), walk(node.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.Div: a / b if b else math.inf}[type(node.op)]
        raise CompileError(f"{where}: unsupported syntax in float expression '{text}'")

    return walk(tree.body)
