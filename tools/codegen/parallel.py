"""Work splits a kernel map declares (`parallel`): which calls the generated code runs as chunks
on the handle's worker threads, and how a chunk's C arguments derive from the whole call's.

A split is over one output dim of the kernel, never over a reduction: every chunk computes whole
outputs exactly as the unsplit call would, so 1 and N threads give the same bits. The compiler
knows nothing about any op; all it uses is the map's `parallel` list:

    "parallel": [{"split": "N", "when": "M == 1", "grain": 64,
                  "chunk": {"y": "start", "w": "start * K", "N": "count"}}, ...]

`chunk` maps ABI arguments to their value for the chunk [start, start + count): an element
offset for pointers, a new value for integers, over the kernel's integer ABI arguments. Scratch
arguments get a private region per thread: the calling thread uses the arena's, the others
regions of the handle's thread scratch, allocated by create for the threads it starts.
"""

import ast
import re
from typing import Dict, List, Optional

from tools.codegen import expr, kernel_attrs
from tools.codegen.errors import CompileError

MAX_THREADS = 8  # threads per handle at most, the calling thread included
_INT_TYPES = {"int", "int32_t", "int64_t", "size_t"}
_CHUNK_VARS = ("start", "count")


def _int_args(kmap: dict) -> List[str]:
    return [a["arg"] for a in kmap["abi"] if a["ctype"] in _INT_TYPES]


def _names(text: str, where: str) -> List[str]:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CompileError(f"{where}: cannot parse '{text}'") from None
    for node in ast.walk(tree):
        ok = isinstance(
            node, (ast.Expression, ast.Name, ast.BinOp, ast.UnaryOp, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.USub)
        )
        ok = ok or (isinstance(node, ast.Constant) and isinstance(node.value, int))
        if not ok:
            raise CompileError(f"{where}: '{text}': only integers, names, + - * and parentheses are allowed")
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]


def _reduction_dims(kmap: dict) -> set:
    text = (kmap.get("contract") or {}).get("reduction_dim") or ""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def validate(doc) -> None:
    """Checks a map's `parallel` options against its own ABI, ports and contract (load time)."""
    data = doc.data
    options = data.get("parallel", [])
    if not options:
        return
    if data.get("returns", "void") != "void":
        raise CompileError(
            f"{doc.path}: /parallel: only kernels returning void may be split (this one returns a status)"
        )
    args = {a["arg"]: a for a in data["abi"]}
    ints = _int_args(data)
    reductions = _reduction_dims(data)
    outputs = [
        a["arg"]
        for a in data["abi"]
        if a["bind"].startswith("port:") and data["ports"].get(a["bind"][5:], {}).get("role") == "output"
    ]
    for i, opt in enumerate(options):
        where = f"{doc.path}: /parallel/{i}"
        if opt["split"] not in data["dims"]:
            raise CompileError(f"{where}/split: '{opt['split']}' is not one of the kernel's dims {data['dims']}")
        if opt["split"] in reductions:
            raise CompileError(
                f"{where}/split: '{opt['split']}' is a reduction dim of the contract "
                f"('{data['contract']['reduction_dim']}'); split over outputs only, "
                "so every thread count gives the same bits"
            )
        if "when" in opt:  # over the kernel's dims and its int attrs (an op's attr may differ per phase)
            names = {**{d: 1 for d in data["dims"]}, **{a: 0 for a in data.get("attrs", {})}}
            expr.check(opt["when"], names, f"{where}/when")
        uses_count = False
        for name, text in opt["chunk"].items():
            w = f"{where}/chunk/{name}"
            a = args.get(name)
            if a is None:
                raise CompileError(f"{w}: no ABI argument '{name}' (the arguments are {', '.join(args)})")
            if a["bind"].startswith("scratch:"):
                raise CompileError(
                    f"{w}: scratch arguments get a region per thread from the compiler; do not list them"
                )
            if a["ctype"].startswith("void") or ("*" not in a["ctype"] and a["ctype"] not in _INT_TYPES):
                raise CompileError(
                    f"{w}: argument of type {a['ctype']} cannot change per chunk (typed pointers and integers only)"
                )
            for n in _names(text, w):
                if n not in ints and n not in _CHUNK_VARS:
                    raise CompileError(
                        f"{w}: '{n}' in '{text}' is neither start, count nor an integer ABI argument "
                        f"({', '.join(ints)})"
                    )
                uses_count |= n == "count"
        if not uses_count:
            raise CompileError(
                f"{where}/chunk: no argument takes 'count': "
                f"the kernel would still compute the whole '{opt['split']}' extent"
            )
        missing = [o for o in outputs if o not in opt["chunk"]]
        if missing:
            raise CompileError(
                f"{where}/chunk: output {', '.join(missing)} has no chunk offset: "
                "every chunk would write the same elements"
            )


def c_chunk_expr(text: str) -> str:
    """C text of a chunk expression inside a trampoline: ABI arguments read from `a->`."""
    tree = ast.parse(text, mode="eval")

    def walk(node) -> str:
        if isinstance(node, ast.Constant):
            return str(node.value)
        if isinstance(node, ast.Name):
            return node.id if node.id in _CHUNK_VARS else f"a->{node.id}"
        if isinstance(node, ast.UnaryOp):
            return f"(-{walk(node.operand)})"
        symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}[type(node.op)]
        return f"({walk(node.left)} {symbol} {walk(node.right)})"

    return walk(tree.body)


def c_condition(text: str, env, where: str) -> Optional[str]:
    """None when `text` holds at compile time, "0" when it never does, else its C text."""
    decided = expr.check(text, env, where)
    if decided is not None:
        return None if decided else "0"
    tree = ast.parse(text, mode="eval").body

    def walk(node) -> str:
        if isinstance(node, ast.BoolOp):
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + joiner.join(walk(v) for v in node.values) + ")"
        op = {ast.Eq: "==", ast.NotEq: "!=", ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<="}[type(node.ops[0])]
        left = expr.evaluate(ast.unparse(node.left), env, where)
        right = expr.evaluate(ast.unparse(node.comparators[0]), env, where)
        return f"{expr.compound(left)} {op} {expr.compound(right)}"

    return walk(tree)


def options(node) -> List[dict]:
    """The map's options that may apply to this call, in order: each with `cond` (C text, None:
    always) and `total` (the split extent). An option applies when its `when` holds and its
    extent makes two chunks of its grain; a shorter run falls through to the next option (the
    last one needs no length test: one chunk on the calling thread is the direct call). Stops at
    the first option that always applies; options that never apply are dropped."""
    kmap = node.kmap.data
    where = (
        f"{node.op.where if node.op else 'converter ' + node.name}: kernel {node.kernel} ({node.kmap.path}): /parallel"
    )
    result = []
    for i, opt in enumerate(kmap.get("parallel", [])):
        when = c_condition(opt["when"], kernel_attrs.numeric_env(node), f"{where}/{i}/when") if "when" in opt else None
        total, two = node.dims[opt["split"]], 2 * opt["grain"]
        if when == "0" or (expr.upper(total) is not None and expr.upper(total) < two):
            continue
        long_enough = None if expr.lower(total) >= two else f"{expr.compound(total)} >= {two}"
        cond = " && ".join(c for c in (when, long_enough) if c is not None) or None
        result.append(
            {
                "index": i,
                "split": opt["split"],
                "grain": opt["grain"],
                "cond": cond,
                "when": when,
                "total": expr.c_text(total),
            }
        )
        if cond is None:
            break
    if result and result[-1]["when"] is None:
        result[-1]["cond"] = None
    return result


def trampolines(split: Dict[str, tuple]) -> List[dict]:
    """Per split kernel (name -> (kernel map, indices of the options some call uses)): the
    argument struct and one chunk function per used option."""
    result = []
    for kernel, (doc, used) in sorted(split.items()):
        data = doc.data
        fields = [{"name": a["arg"], "ctype": a["ctype"]} for a in data["abi"]]
        scratch = [a["arg"] for a in data["abi"] if a["bind"].startswith("scratch:")]
        fns = []
        for i, opt in enumerate(data["parallel"]):
            if i not in used:
                continue
            args = []
            for a in data["abi"]:
                name, ctype = a["arg"], a["ctype"]
                if name in scratch:
                    c = (
                        f"slot == 0 ? a->{name} : "
                        f"({ctype})(a->ckw_threads_{name} + (slot - 1) * kLibrary.thread_scratch_bytes)"
                    )
                elif name in opt["chunk"] and "*" in ctype:
                    c = f"a->{name} + {c_chunk_expr(opt['chunk'][name])}"
                elif name in opt["chunk"]:
                    c = f"({ctype})({c_chunk_expr(opt['chunk'][name])})"
                else:
                    c = f"a->{name}"
                args.append({"arg": name, "c": c})
            fns.append({"function": f"{kernel}__chunk{i}", "split": opt["split"], "args": args})
        result.append(
            {
                "kernel": kernel,
                "struct": f"{kernel}__args",
                "fields": fields,
                "thread_scratch": [f"ckw_threads_{s}" for s in scratch],
                "functions": fns,
            }
        )
    return result
