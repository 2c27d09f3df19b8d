"""Op attributes as kernels see them: the op's value, else the kernel map's default."""

from typing import Dict, Optional

from tools.codegen import expr
from tools.codegen.errors import CompileError

_INT_CTYPES = {"int", "int32_t", "int64_t"}


def value(node, name: str, where: str):
    """The attr's value for this node (number or bool), or raises naming what is missing. An op
    may give an int attr as an expression over the circuit's dims and the phase's runtime scalars
    (e.g. a scalar that is 1 in one phase and 0 in another): it must be a constant in every phase
    the op runs in."""
    declared = node.kmap.data.get("attrs", {}).get(name)
    attrs = node.op.attrs if node.op else {}
    if name in attrs:
        v = attrs[name]
        if isinstance(v, str) and declared and declared.get("ctype") in _INT_CTYPES:
            v = _phase_constant(node, name, v, where)
        if declared and "values" in declared and v not in declared["values"]:
            raise CompileError(f"{where}: attr {name} = {v!r}, the kernel accepts {declared['values']}")
        return v
    if declared and "default" in declared:
        d = declared["default"]
        if isinstance(d, str):
            return expr.evaluate_float(d, node.dims, f"{where}: default of attr {name}")
        return d
    raise CompileError(f"{where}: the op sets no attr '{name}' and the kernel map gives no default (add it to /attrs)")


def _phase_constant(node, name: str, text: str, where: str) -> int:
    got = expr.evaluate(text, {**node.env, **node.dims}, f"{where}: attr {name}")
    if not isinstance(got, int):
        raise CompileError(
            f"{where}: attr {name} = '{text}' is {expr.c_text(got)} in phase '{node.phase}', not a "
            "constant: a kernel attr is fixed when the library is built (bind the runtime scalars it "
            "uses with a value in this phase)"
        )
    return got


def numeric_env(node) -> Dict[str, expr.Value]:
    """Dims plus every int/bool attr that has a value, for kernel constraints and split conditions."""
    env: Dict[str, expr.Value] = dict(node.dims)
    declared = node.kmap.data.get("attrs", {})
    attrs = node.op.attrs if node.op else {}
    where = f"{node.op.where if node.op else 'converter ' + node.name}: kernel {node.kernel} ({node.kmap.path})"
    for name in sorted(set(declared) | set(attrs)):
        if name not in attrs and "default" not in declared.get(name, {}):
            continue
        v = value(node, name, where)
        if isinstance(v, bool) or isinstance(v, int):
            env[name] = int(v)
    return env


def status_strerror(kmap: dict) -> Optional[str]:
    """(returns status?, strerror function) from the map's `returns` and `strerror`."""
    r = kmap.get("returns", "void")
    if isinstance(r, dict):
        return r.get("strerror") or kmap.get("strerror") or ""
    return (kmap.get("strerror") or "") if r == "status" else None
