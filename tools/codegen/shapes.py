"""Pass 5: bind every kernel dim of every node in a phase and give every tensor its shape.

Shapes come from the circuit (externals, state, weights, op `dims`) and flow through the
kernels' port shapes. A node binds once the known shapes of its ports determine all of its
dims; converters bind from both ends. Runtime scalars stay symbolic (expr.Sym).
"""

from typing import Dict

from tools.codegen import expr, kernel_attrs
from tools.codegen.errors import CompileError
from tools.codegen.graph import Graph
from tools.codegen.layouts import Node, PhaseGraph


def phase_env(graph: Graph, phase: str) -> Dict[str, expr.Value]:
    """Circuit dims plus this phase's runtime scalars (fixed ints or bounded symbols)."""
    env: Dict[str, expr.Value] = dict(graph.dims)
    where = f"{graph.path}: /phases/{phase}/runtime"
    bindings = graph.phases[phase].get("runtime", {})
    for name in graph.runtime:
        if name not in bindings:
            raise CompileError(f"{where}: runtime scalar '{name}' has no binding in phase '{phase}'")
    for name, b in bindings.items():
        if name not in graph.runtime:
            raise CompileError(f"{where}/{name}: '{name}' is not declared in /runtime")
        if "value" in b:
            env[name] = expr.evaluate(b["value"], env, f"{where}/{name}/value")
            continue
        if "computed" in b:
            env[name] = expr.Sym(name, 0, None)
            continue
        lo = expr.evaluate(b.get("min", 0), env, f"{where}/{name}/min")
        hi = expr.evaluate(b["max"], env, f"{where}/{name}/max") if "max" in b else None
        if hi is None and isinstance(lo, int):
            env[name] = expr.Sym(name, lo, None)
            continue
        if not isinstance(lo, int) or not isinstance(hi, int) or lo > hi or hi < 0:
            raise CompileError(f"{where}/{name}: expected integer bounds with min <= max, got [{lo}, {hi}]")
        env[name] = expr.Sym(name, lo, hi)
    return env


def shape_of(spec, env, where: str):
    return tuple(expr.evaluate(d, env, where) for d in spec)


def _same(a, b) -> bool:
    return expr.c_text(a) == expr.c_text(b)


def _fmt(shape) -> str:
    return "[" + ", ".join(expr.c_text(d) for d in shape) + "]"


class _Binder:
    def __init__(self, graph: Graph, pg: PhaseGraph, env):
        self.graph = graph
        self.pg = pg
        self.env = env

    def known_shape(self, tid: str):
        t = self.pg.tensors[tid]
        if t.shape is not None:
            return t.shape
        if t.ref is not None and t.ref.kind == "state":
            st = self.graph.states[t.ref.name]
            t.shape = shape_of(st.shape, self.env, f"{self.graph.path}: /state/{st.name}/shape")
            if st.window:
                t.window_offset = expr.evaluate(
                    st.window["offset"], self.env, f"{self.graph.path}: /state/{st.name}/window/offset"
                )
        elif t.ref is not None and t.ref.kind == "external":
            ext = self.graph.externals[t.ref.name]
            t.shape = shape_of(ext["shape"], self.env, f"{self.graph.path}: /externals/{t.ref.name}/shape")
        elif t.id.startswith("output:"):
            out = self.graph.outputs[t.id.split(":", 1)[1]]
            if "shape" in out:
                t.shape = shape_of(out["shape"], self.env, f"{self.graph.path}: /outputs/{t.id.split(':', 1)[1]}/shape")
        return t.shape

    def where(self, node: Node) -> str:
        return node.op.where if node.op else f"converter {node.name}"

    def try_bind(self, node: Node, final: bool) -> bool:
        ports = node.kmap.data["ports"]
        kdims = node.kmap.data["dims"]
        where = f"{self.where(node)}: kernel {node.kernel}"
        dims: Dict[str, expr.Value] = {}
        known = {}
        for port, w in node.weights.items():
            known[port] = shape_of(w.shape, self.env, f"{where}: weight {w.tensor}")
        for slot in (node.inputs, node.outputs):
            for port, tid in slot.items():
                s = self.known_shape(tid)
                if s is not None:
                    known[port] = s
        # Pass 1: bare-name entries bind dims; pass 2: every entry is checked.
        for port, shape in sorted(known.items()):
            spec = ports[port]["shape"]
            if len(spec) != len(shape):
                raise CompileError(
                    f"{where}: port '{port}' has rank {len(spec)} {spec} but its tensor is {_fmt(shape)}"
                )
            for d, v in zip(spec, shape):
                if isinstance(d, str) and d in kdims and d not in dims:
                    dims[d] = v
        # Dims a kernel query computes at run time: symbols named after the circuit's runtime
        # scalar the op exports them as, else after the node.
        exported = {d: name for name, d in (node.op.exports.items() if node.op else [])}
        for d in query_dims(node):
            dims.setdefault(d, expr.Sym(exported.get(d) or f"{c_ident(node.name)}_{d}", 0, None))
        # The op's own dims may use the circuit's dims and the kernel dims bound so far.
        for k, text in sorted(node.op.dims.items() if node.op else []):
            if k not in kdims:
                raise CompileError(
                    f"{node.op.where}: /dims/{k}: kernel {node.kernel} has no dim '{k}' (its dims: {', '.join(kdims)})"
                )
            value = expr.evaluate(text, {**self.env, **dims}, f"{node.op.where}: /dims/{k}")
            if k in dims and not _same(dims[k], value):
                raise CompileError(
                    f"{node.op.where}: /dims/{k}: '{text}' = {expr.c_text(value)} "
                    f"but the edges give {expr.c_text(dims[k])}"
                )
            dims[k] = value
        for port, tid in node.outputs.items():
            t = self.pg.tensors[tid]
            window = ports[port].get("window")
            if tid in node.inputs.values():
                continue  # an in-place update (may_alias) of a tensor the node also reads, not an append
            if t.window_offset is not None:
                if not window:
                    raise CompileError(
                        f"{where}: port '{port}' writes {t.id}, which needs a windowed (appending) write; "
                        "the kernel declares no window"
                    )
                dims.setdefault(window["offset"], t.window_offset)
            elif window:
                dims.setdefault(window["offset"], 0)
        missing = [d for d in kdims if d not in dims]
        if missing:
            if final:
                raise CompileError(
                    f"{where}: kernel dims {', '.join(missing)} are not determined by the edges; "
                    "set them in the op's /dims"
                )
            return False
        for port, shape in sorted(known.items()):
            spec = ports[port]["shape"]
            want = shape_of(spec, dims, f"{where}: port '{port}'")
            if not all(_same(a, b) for a, b in zip(want, shape)):
                raise CompileError(
                    f"{where}: port '{port}' expects {_fmt(want)} ({spec}) but its tensor is {_fmt(shape)}"
                )
        for k, v in dims.items():
            if isinstance(v, int) and v < 0 or isinstance(v, expr.Sym) and v.hi is not None and v.hi < 0:
                raise CompileError(f"{where}: dim {k} = {expr.c_text(v)} is negative")
        node.dims, node.phase, node.env = dims, self.pg.phase, self.env
        for c in node.kmap.data.get("constraints", []):
            if expr.check(c, kernel_attrs.numeric_env(node), f"{where}: constraint") is False:
                raise CompileError(
                    f"{where}: kernel constraint '{c}' does not hold ("
                    f"{', '.join(f'{k}={expr.c_text(v)}' for k, v in sorted(kernel_attrs.numeric_env(node).items()))}"
                    ")"
                )
        for slot in (node.inputs, node.outputs):
            for port, tid in slot.items():
                t = self.pg.tensors[tid]
                if t.shape is None:
                    t.shape = shape_of(ports[port]["shape"], dims, f"{where}: port '{port}'")
        return True


def c_ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def query_dims(node: Node):
    """Kernel dims that the node's queries compute (returned value or `out:` arguments)."""
    found = []
    for q in node.kmap.data.get("queries", []):
        if q["returns"] == "value":
            found.append(q["value"])
        found += [a["bind"][4:] for a in q["abi"] if a["bind"].startswith("out:")]
    return found


def bind(graph: Graph, pg: PhaseGraph) -> Dict[str, expr.Value]:
    env = phase_env(graph, pg.phase)
    binder = _Binder(graph, pg, env)
    pending = list(pg.nodes)
    while pending:
        still = [n for n in pending if not binder.try_bind(n, final=False)]
        if len(still) == len(pending):
            binder.try_bind(still[0], final=True)  # raises with the undetermined dims
        pending = still
    for tid in sorted(pg.tensors):
        if binder.known_shape(tid) is None:
            raise CompileError(f"{graph.path}: tensor {tid} in phase '{pg.phase}' has no shape")
    return env
