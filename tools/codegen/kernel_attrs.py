"""Op attributes as kernels see them: the op's value, else the kernel map's default."""

from typing import Dict, Optional

from tools.codegen import expr
from tools.codegen.errors import CompileError


def value(node, name: str, where: str):
    """The attr's value for this node (number or bool), or raises naming what is missing."""
    declared = node.kmap.data.get("attrs", {}).get(name)
    attrs = node.op.attrs if node.op else {}
    if name in attrs:
        v = attrs[name]
        if declared and "values" in declared and v not in declared["values"]:
            raise CompileError(f"{where}: attr {name} = {v!r}, the kernel accepts {declared['values']}")
        return v
    if declared and "default" in declared:
        d = declared["default"]
        if isinstance(d, str):
            return expr.evaluate_float(d, node.dims, f"{where}: default of attr {name}")
        return d
    raise CompileError(f"{where}: the op sets no attr '{name}' and the kernel map gives no default (add it to /attrs)")


def numeric_env(node) -> Dict[str, expr.Value]:
    """Dims plus every int/bool attr that has a value, for kernel constraints."""
    env: Dict[str, expr.Value] = dict(node.dims)
    names = set(node.kmap.data.get("attrs", {})) | set(node.op.attrs if node.op else {})
    for name in sorted(names):
        try:
            v = value(node, name, "")
        except CompileError:
            continue
        if isinstance(v, bool) or isinstance(v, int):
            env[name] = int(v)
    return env


def status_strerror(kmap: dict) -> Optional[str]:
    """(returns status?, strerror function) from the map's `returns` and `strerror`."""
    r = kmap.get("returns", "void")
    if isinstance(r, dict):
        return r.get("strerror") or kmap.get("strerror") or ""
    return (kmap.get("strerror") or "") if r == "status" else None
