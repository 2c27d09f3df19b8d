"""Pass 7: the call IR. Every C argument of every kernel call is bound to a named source
(port tensor, dim, attr, runtime scalar, scratch, constant) and rendered as a C expression.
Also describes the entry points (params, run-time checks) the emit templates print.
"""

import re
from typing import Dict, List, Optional

from tools.codegen import expr, kernel_attrs, parallel
from tools.codegen.errors import CompileError
from tools.codegen.graph import Graph
from tools.codegen.layouts import Node, PhaseGraph
from tools.codegen.load import MANIFEST_DTYPES
from tools.codegen.plan import PhasePlan, StateRegion, scratch_exprs, tensor_bytes
from tools.codegen.plan import align as plan_align
from tools.codegen.shapes import query_dims, shape_of

# bf16 and f16 travel as their bit patterns (C has no portable 16-bit float type).
C_TYPES = {
    "f32": "float",
    "bf16": "uint16_t",
    "f16": "uint16_t",
    "i64": "int64_t",
    "i32": "int32_t",
    "i16": "int16_t",
    "u8": "uint8_t",
    "i8": "int8_t",
}


# What a tensor name may hold: create() finds its manifest entry by it (a C string, a JSON string).
_TENSOR_NAME = re.compile(r"[A-Za-z0-9_.:/\[\]-]{1,400}")


class Weights:
    """Checkpoint tensors by name, from the manifest's layout (names, dtypes, shapes, offsets into
    the weights file; never their values or hashes, so a library serves every checkpoint of the
    layout). Records the tensors the circuit reads, so create() can checksum exactly those
    (`checks`) against the hashes the manifest it is given records."""

    def __init__(self, manifest: Optional[dict], path: str):
        self.path = path
        self.layout_sha256 = manifest["layout_sha256"] if manifest else ""
        self.tensors = {t["name"]: t for t in manifest["tensors"]} if manifest else {}
        end = max((t["offset"] + t["nbytes"] for t in self.tensors.values()), default=0)
        # The file's exact size: the manifest's weights_nbytes when it states one.
        self.file_bytes = manifest.get("weights_nbytes", end) if manifest else 0
        if self.file_bytes < end:
            raise CompileError(f"{path}: /weights_nbytes: {self.file_bytes}, but the tensors end at byte {end}")
        self.used: Dict[str, dict] = {}

    def checks(self) -> List[dict]:
        """{name, offset, nbytes} of every tensor resolved so far, in file order."""
        return [
            {"name": t["name"], "offset": int(t["offset"]), "nbytes": int(t["nbytes"])}
            for t in sorted(self.used.values(), key=lambda t: t["offset"])
        ]

    def resolve(self, weight, env, where: str, port_dtype: str) -> int:
        if not self.path:
            raise CompileError(f"{where}: weight {weight.tensor} needs a manifest (--manifest) to resolve its offset")
        t = self.tensors.get(weight.tensor)
        if t is None:
            raise CompileError(f"{where}: weight {weight.tensor} is not in {self.path}")
        want = [expr.c_text(d) for d in shape_of(weight.shape, env, where)]
        if [str(d) for d in t["shape"]] != want:
            raise CompileError(
                f"{where}: weight {weight.tensor} has shape {t['shape']} in {self.path}, the circuit says {want}"
            )
        if MANIFEST_DTYPES.get(t["dtype"]) != port_dtype:
            raise CompileError(
                f"{where}: weight {weight.tensor} has dtype {t['dtype']} in {self.path}, but the port "
                f"reads {port_dtype}: a weight's dtype must equal the port's dtype"
            )
        want_bytes = tensor_bytes(port_dtype, shape_of(weight.shape, env, where))
        if want_bytes is not None and int(t["nbytes"]) != want_bytes:
            raise CompileError(
                f"{where}: weight {weight.tensor} has nbytes {t['nbytes']} in {self.path}, but "
                f"{want} {port_dtype} is {want_bytes} bytes"
            )
        if t["offset"] % 64:
            raise CompileError(f"{where}: weight {weight.tensor} offset {t['offset']} is not 64-byte aligned")
        if not _TENSOR_NAME.fullmatch(weight.tensor):
            raise CompileError(
                f"{where}: weight name {weight.tensor!r} has characters create() cannot look up (letters, "
                "digits and _.:/[]- only, at most 400)"
            )
        self.used[weight.tensor] = t
        return int(t["offset"])


def _literal(value, ctype: str, where: str) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text + "f" if "float" in ctype else text
    raise CompileError(f"{where}: attr value {value!r} cannot be passed as {ctype}")


class _Lowerer:
    def __init__(
        self, graph: Graph, pg: PhaseGraph, plan: PhasePlan, regions: Dict[str, StateRegion], weights: Weights, env
    ):
        self.graph, self.pg, self.plan, self.regions, self.weights, self.env = graph, pg, plan, regions, weights, env
        self.by_value = set(graph.phases[pg.phase].get("by_value", []))

    def arena_offset(self, b) -> str:
        return f"o{b.slot}" if b.slot >= 0 else str(b.offset)

    def pointer(self, tid: str, ctype: str) -> (str, str):
        """C expression for the first element a kernel port reads or writes, and a note."""
        t = self.pg.tensors[tid]
        if tid in self.plan.buffers:
            return f"({ctype})(arena + {self.arena_offset(self.plan.buffers[tid])})", f"arena {tid}"
        if t.placement == "external":
            if t.ref is not None:
                name = t.ref.name
                return (f"({ctype})&{name}" if name in self.by_value else f"({ctype}){name}"), f"argument {name}"
            out, index = self.pg.output_of(tid)
            if index is None:
                return f"({ctype}){out}", f"output {out}"
            # Slice `index` of a stacked output: slices are the shape of this tensor, back to back.
            size = " * ".join(expr.compound(d) for d in t.shape) or "1"
            return f"({ctype})({out} + {index} * {size})" if index else f"({ctype}){out}", f"output {out}[{index}]"
        key = f"external:{t.ref.name}" if t.ref.kind == "external" else f"state:{t.ref.name}"
        region = self.regions[key]
        index = 0
        for (axis, count), i in zip(region.instances, t.ref.instance):
            index = index * count + i
        return f"({ctype})(state + {region.offset + index * region.instance_bytes})", f"state {t.id}"

    def call(self, node: Node, guarded: bool, optional: str = "") -> dict:
        where = f"{node.op.where if node.op else 'converter ' + node.name}: kernel {node.kernel} ({node.kmap.path})"
        ports = node.kmap.data["ports"]
        scratch = iter(range(len(scratch_exprs(node))))
        splits = parallel.options(node)
        args, thread_scratch, thread_bytes = [], [], []
        for a in node.kmap.data["abi"]:
            kind, _, what = a["bind"].partition(":")
            ctype = a["ctype"]
            if kind == "port":
                if what not in ports:
                    raise CompileError(f"{where}: /abi {a['arg']}: bind to unknown port '{what}'")
                if what in node.weights:
                    off = self.weights.resolve(node.weights[what], self.env, where, ports[what]["dtype"])
                    c, note = f"({ctype})(weights + {off})", f"weight {node.weights[what].tensor}"
                elif what in node.inputs or what in node.outputs:
                    c, note = self.pointer(node.inputs.get(what) or node.outputs[what], ctype)
                elif ports[what].get("optional"):
                    c, note = "NULL", "optional port not wired"
                else:
                    raise CompileError(f"{where}: /abi {a['arg']}: port '{what}' is not wired")
            elif kind == "dim":
                value = expr.evaluate(what, node.dims, f"{where}: /abi {a['arg']}")
                c, note = expr.c_text(value), f"dim {what}"
            elif kind == "fexpr":
                value = expr.evaluate_float(what, node.dims, f"{where}: /abi {a['arg']}")
                c, note = f"{value:.9g}" + ("f" if "float" in ctype else ""), f"float {what}"
                if "." not in c and "e" not in c and "inf" not in c:
                    c = c.replace("f", ".0f") if c.endswith("f") else c + ".0"
            elif kind == "attr":
                c, note = (
                    _literal(kernel_attrs.value(node, what, f"{where}: /abi {a['arg']}"), ctype, where),
                    f"attr {what}",
                )
            elif kind == "runtime":
                if what not in self.env:
                    raise CompileError(f"{where}: /abi {a['arg']}: the circuit declares no runtime scalar '{what}'")
                c, note = expr.c_text(self.env[what]), f"runtime {what}"
            elif kind == "scratch":
                b = self.plan.buffers[f"{node.name}#scratch{next(scratch)}"]
                c, note = f"({ctype})(arena + {self.arena_offset(b)})", f"scratch {b.size_c or b.bytes} bytes"
                if splits:  # the other threads' copies: regions of the handle's thread scratch
                    value = expr.evaluate(what, node.dims, f"{where}: /abi {a['arg']}")
                    if expr.upper(value) is None:
                        raise CompileError(
                            f"{where}: /abi {a['arg']}: scratch '{what}' has no upper bound, so the "
                            "handle cannot size a copy per thread; bound its dims or drop /parallel"
                        )
                    thread_scratch.append(
                        {"name": f"ckw_threads_{a['arg']}", "c": f"h->base.thread_scratch + {sum(thread_bytes)}"}
                    )
                    thread_bytes.append(plan_align(max(expr.upper(value), 1)))
            else:  # const
                c, note = what, "constant"
            args.append({"arg": a["arg"], "ctype": ctype, "bind": a["bind"], "c": c, "source": note})
        strerror = kernel_attrs.status_strerror(node.kmap.data)
        return {
            "node": node.name,
            "kernel": node.kernel,
            "header": node.kmap.data["header"],
            "library": node.kmap.data["library"],
            "status": strerror is not None,
            "strerror": strerror or "",
            "guarded": guarded,
            "optional": optional,
            "args": args,
            "taps": self.taps(node),
            "parallel": self.split(node, splits, args, thread_scratch, sum(thread_bytes)),
        }

    def split(
        self, node: Node, opts: List[dict], args: List[dict], thread_scratch: List[dict], thread_bytes: int
    ) -> Optional[dict]:
        """How the call runs on the handle's threads (the kernel map's `parallel`), or None: the
        argument struct, then one branch per applicable option (`if (cond) ckw_pool_run(...)`),
        falling back to one direct call when every option is conditional. Scratch: the calling
        thread uses the arena's, thread i > 0 region i - 1 of the handle's thread scratch
        (`thread_bytes` per thread for this call)."""
        if not opts:
            return None
        branches = []
        for k, o in enumerate(opts):
            run = f"ckw_pool_run(h->base.pool, {o['total']}, {o['grain']}, {node.kernel}__chunk{o['index']}, &args);"
            keyword = (
                ""
                if o["cond"] is None and k == 0
                else ("else" if o["cond"] is None else f"{'else if' if k else 'if'} ({o['cond']})")
            )
            branches.append({"keyword": keyword, "stmt": run, "split": o["split"], "grain": o["grain"]})
        if opts[-1]["cond"] is not None:
            direct = ", ".join(f"args.{a['arg']}" for a in args)
            branches.append({"keyword": "else", "stmt": f"{node.kernel}({direct});", "split": None, "grain": None})
        return {
            "struct": f"{node.kernel}__args",
            "thread_scratch": thread_scratch,
            "thread_scratch_bytes": thread_bytes,
            "branches": branches,
            "options": [o["index"] for o in opts],
            "splits": [{"split": o["split"], "grain": o["grain"], "when": o["cond"] or "always"} for o in opts],
        }

    def taps(self, node: Node) -> List[dict]:
        """The f32 outputs of a call as the edge tap reports them: `<node>.<port>`, the first
        element and the tensor's shape as C expressions. An output written as a window into a
        persistent state (a KV-cache append) is reported as the whole cache instance it writes
        into (the state's full shape); `window` says where on which axis this call's rows start."""
        result = []
        for port, tid in sorted(node.outputs.items()):
            t = self.pg.tensors[tid]
            if t.dtype != "f32":
                continue
            window = None
            spec = node.kmap.data["ports"][port].get("window")
            if t.window_offset is not None and spec:
                window = {"axis": spec["axis"], "offset": expr.c_text(t.window_offset)}
            result.append(
                {
                    "edge": f"{node.name}.{port}",
                    "tensor": tid,
                    "data": self.pointer(tid, "const float *")[0],
                    "shape": [expr.c_text(d) for d in t.shape],
                    "window": window,
                }
            )
        return result

    def queries(self, node: Node) -> List[dict]:
        """Calls that compute run-time dims; they may read only entry-point inputs and dims."""
        where = f"{node.op.where if node.op else 'converter ' + node.name}: kernel {node.kernel} ({node.kmap.path})"
        result = []
        for q in node.kmap.data.get("queries", []):
            args = []
            for a in q["abi"]:
                kind, _, what = a["bind"].partition(":")
                if kind == "out":
                    args.append(f"&{expr.c_text(node.dims[what])}")
                elif kind == "dim":
                    args.append(expr.c_text(expr.evaluate(what, node.dims, f"{where}: query {q['function']}")))
                elif kind == "port":
                    tid = node.inputs.get(what)
                    t = self.pg.tensors.get(tid) if tid else None
                    if t is None or t.placement != "external" or t.ref is None:
                        raise CompileError(
                            f"{where}: query {q['function']} reads port '{what}', which is not an entry-point input"
                        )
                    args.append(self.pointer(tid, a["ctype"])[0])
                elif kind == "attr":
                    args.append(_literal(kernel_attrs.value(node, what, where), a["ctype"], where))
                else:
                    raise CompileError(f"{where}: query {q['function']}: bind '{a['bind']}' is not allowed in a query")
            result.append(
                {
                    "function": q["function"],
                    "args": args,
                    "strerror": kernel_attrs.status_strerror(node.kmap.data) or "",
                    "value": expr.c_text(node.dims[q["value"]]) if q["returns"] == "value" else "",
                }
            )
        return result

    def dynamic_arena(self) -> Optional[dict]:
        if not self.plan.slots:
            return None
        slots = []
        for k, ids in enumerate(self.plan.slots):
            sizes = [self.plan.buffers[i].size_c or str(self.plan.buffers[i].bytes) for i in ids]
            size = sizes[0]
            for other in sizes[1:]:
                size = f"ckw_max64({size}, {other})"
            slots.append({"offset": f"o{k}", "bytes": size})
        return {"slots": slots}


def _entry(graph: Graph, pg: PhaseGraph, env, prefix: str) -> dict:
    spec = graph.phases[pg.phase]
    by_value = set(spec.get("by_value", []))
    params, checks, locals_ = [], [], []
    for name in pg.externals:
        ext = graph.externals[name]
        ctype = C_TYPES[ext["dtype"]]
        if name in by_value:
            shape = shape_of(ext["shape"], env, f"{graph.path}: /externals/{name}")
            if any(d != 1 for d in shape):
                raise CompileError(
                    f"{graph.path}: /phases/{pg.phase}/by_value: '{name}' has shape "
                    f"{list(map(expr.c_text, shape))} in this phase, not all ones"
                )
            params.append({"name": name, "ctype": ctype, "doc": ext.get("doc", "")})
        else:
            params.append({"name": name, "ctype": f"const {ctype} *", "doc": ext.get("doc", "")})
    for name, b in sorted(spec.get("runtime", {}).items()):
        v = env[name]
        if "value" in b:
            locals_.append({"name": name, "init": expr.c_text(v)})
        elif "computed" in b:
            continue  # declared with the query results
        elif "arg" in b and v.hi is None:
            params.append({"name": name, "ctype": "int64_t", "doc": f"{name} >= {v.lo}"})
            checks.append({"cond": f"{name} < {v.lo}", "error": "ARGUMENT"})
        elif "arg" in b:
            params.append({"name": name, "ctype": "int64_t", "doc": f"{v.lo} <= {name} <= {v.hi}"})
            checks.append({"cond": f"{name} < {v.lo} || {name} > {v.hi}", "error": "ARGUMENT"})
        else:
            locals_.append({"name": name, "init": f"h->{b['counter']}"})
            checks.append({"cond": f"{name} > {v.hi}", "error": "CONTEXT_FULL"})
    checks += _range_checks(graph, pg, env, by_value, params)
    for name, tid in sorted(pg.outputs.items()):
        out = graph.outputs[name]
        dims = [expr.c_text(d) for d in pg.tensors[tid].shape]
        if name in pg.stacked:
            dims.insert(0, str(len(pg.stacked[name])))
        doc = f"[{', '.join(dims)}] {out.get('doc', '')}".strip()
        if out.get("optional"):
            doc += " (NULL: not computed, nor the calls only it needs)"
        params.append(
            {
                "name": name,
                "ctype": f"{C_TYPES[out['dtype']]} *",
                "doc": doc,
                "output": True,
                "optional": bool(out.get("optional")),
            }
        )
    setters = sorted(
        {
            t.ref.name
            for t in pg.tensors.values()
            if t.ref is not None and t.ref.kind == "external" and graph.externals[t.ref.name].get("binding") == "setter"
        }
    )
    seq = None
    if graph.sequence and spec.get("sequence"):
        counter = graph.sequence["counter"]
        pos = next((n for n, b in spec.get("runtime", {}).items() if b.get("counter") == counter), None)
        advance = expr.c_text(expr.evaluate(graph.sequence["advance_by"], env, f"{graph.path}: /sequence/advance_by"))
        capacity = expr.evaluate(graph.sequence["capacity"], graph.dims, f"{graph.path}: /sequence/capacity")
        start = pos or "0"
        checks.append({"cond": f"{start} + {advance} > {capacity}", "error": "CONTEXT_FULL"})
        seq = {"counter": counter, "next": f"{start} + {advance}"}
    cross = graph.cross_attention
    reuse = bool(cross) and cross["projection_cache"]["reuse_phase"] == pg.phase
    entry = None
    if cross and "entries" in cross["projection_cache"]:
        entry, setters = _entry_checks(graph, pg, env, checks, setters)
        reuse = False  # each row's entry is checked instead of the one cache
    return {
        "phase": pg.phase,
        "function": f"{prefix}_{pg.phase}",
        "doc": spec.get("doc", ""),
        "params": params,
        "checks": checks,
        "locals": locals_,
        "requires_setters": setters,
        "sequence": seq,
        "requires_cross_kv": reuse,
        "cross_kv_entry": entry,
    }


def _entry_checks(graph: Graph, pg: PhaseGraph, env, checks: List[dict], setters: List[str]):
    """Per-entry projection caches. The populate phase fills the one entry it is given (checked in
    range) and needs the memory only when that entry must be projected, so the guard asks for it
    instead of the setter check; the reuse phase refuses any row whose entry is out of range or
    not projected, before any kernel runs. Returns the populate phase's entry and the setters."""
    pc = graph.cross_attention["projection_cache"]
    name, count = pc["entries"]["index"], expr.evaluate(pc["entries"]["count"], graph.dims, graph.path)
    if pg.phase not in (pc["populate_phase"], pc["reuse_phase"]):
        return None, setters
    if name not in pg.externals:
        raise CompileError(
            f"{graph.path}: /cross_attention/projection_cache/entries/index: no op of phase '{pg.phase}' reads '{name}'"
        )
    if pg.phase == pc["populate_phase"]:
        checks.append({"cond": f"{name} < 0 || {name} >= {count}", "error": "ARGUMENT"})
        source = graph.cross_attention["key_value_source"]
        return {"index": name, "source": source}, [s for s in setters if s != source]
    rows = _elements(graph, name, env)
    checks.append({"loop": rows, "cond": f"{name}[i] < 0 || {name}[i] >= {count}", "error": "ARGUMENT"})
    checks.append({"loop": rows, "cond": f"!h->cross_kv_valid[{name}[i]]", "error": "CROSS_KV_INVALID"})
    return None, setters


def _elements(graph: Graph, name: str, env) -> str:
    """C text of the element count of external `name` in a phase (its shape under `env`)."""
    shape = shape_of(graph.externals[name]["shape"], env, f"{graph.path}: /externals/{name}")
    return " * ".join(f"({expr.c_text(d)})" for d in shape) or "1"


def _range_checks(graph: Graph, pg: PhaseGraph, env, by_value, params: List[dict]) -> List[dict]:
    """Every element of an argument with a `range` checked before any kernel runs (after the
    runtime scalars that size it), so a refused call changes nothing; its doc states the range."""
    checks = []
    for name in pg.externals:
        rng = graph.externals[name].get("range")
        if rng is None:
            continue
        where = f"{graph.path}: /externals/{name}/range"
        lo, hi = (expr.c_text(expr.evaluate(rng[k], env, f"{where}/{k}")) for k in ("min", "max"))
        error = rng.get("error", "ARGUMENT")
        param = next(p for p in params if p["name"] == name)
        param["doc"] = (param["doc"] + " " if param["doc"] else "") + f"(each in [{lo}, {hi}], else E_{error})"
        if name in by_value:
            checks.append({"cond": f"{name} < {lo} || {name} > {hi}", "error": error})
            continue
        count = _elements(graph, name, env)
        checks.append({"loop": count, "cond": f"{name}[i] < {lo} || {name}[i] > {hi}", "error": error})
    return checks


def lower_phase(graph: Graph, pg: PhaseGraph, plan: PhasePlan, regions, weights: Weights, env, prefix: str) -> dict:
    lw = _Lowerer(graph, pg, plan, regions, weights, env)
    entry = _entry(graph, pg, env, prefix)
    entry["queries"] = [q for n in plan.order for q in lw.queries(n)]
    query_vars = []
    for n in plan.order:
        for d in query_dims(n):
            if expr.c_text(n.dims[d]) not in query_vars:
                query_vars.append(expr.c_text(n.dims[d]))
    exported = {name for n in plan.order if n.op for name in n.op.exports}
    for name, b in graph.phases[pg.phase].get("runtime", {}).items():
        if "computed" in b and name not in exported:
            raise CompileError(
                f"{graph.path}: /phases/{pg.phase}/runtime/{name}: computed, but no op in this phase exports it"
            )
    entry["query_vars"] = query_vars
    entry["dynamic_arena"] = lw.dynamic_arena()
    entry["calls"] = [lw.call(n, g, o) for n, g, o in zip(plan.order, plan.guarded, plan.optional)]
    entry["split_kernels"] = [
        (n.kernel, n.kmap, c["parallel"]["options"]) for n, c in zip(plan.order, entry["calls"]) if c["parallel"]
    ]
    entry["arena_bytes"] = max(plan.arena_bytes, 0)
    entry["shape_function"] = None
    if entry["queries"]:
        # Output sizes depend on the input: a shape query so callers can allocate, and a
        # capacity argument per output that the entry point checks.
        outs = []
        for p in [p for p in entry["params"] if p.get("output")]:
            dims = [expr.c_text(d) for d in pg.tensors[pg.outputs[p["name"]]].shape]
            outs.append({"name": p["name"], "dims": dims, "elements": " * ".join(f"({d})" for d in dims)})
            entry["params"].insert(
                entry["params"].index(p) + 1,
                {
                    "name": f"{p['name']}_capacity",
                    "ctype": "int64_t",
                    "doc": "elements available at the pointer",
                    "output": True,
                },
            )
            entry["checks_after_queries"] = entry.get("checks_after_queries", []) + [
                {"cond": f"{p['name']}_capacity < {outs[-1]['elements']}", "error": "ARGUMENT"}
            ]
        entry["shape_function"] = {"function": f"{prefix}_{pg.phase}_shape", "outputs": outs}
    entry.setdefault("checks_after_queries", [])
    entry["input_params"] = [p for p in entry["params"] if not p.get("output")]
    return entry


def lower(
    graph: Graph, phases: List[dict], regions: Dict[str, StateRegion], weights: Weights, prefix: str, state_total: int
) -> dict:
    cross = graph.cross_attention
    entries = None
    if cross and "entries" in cross["projection_cache"]:
        e = cross["projection_cache"]["entries"]
        entries = {"count": expr.evaluate(e["count"], graph.dims, graph.path), "index": e["index"]}
    setters = []
    for name, ext in sorted(graph.externals.items()):
        if ext.get("binding") != "setter":
            continue
        r = regions[f"external:{name}"]
        shape = shape_of(ext["shape"], graph.dims, f"{graph.path}: /externals/{name}")
        invalidates = (
            bool(cross)
            and cross["key_value_source"] == name
            and cross["projection_cache"]["invalidation"] == f"{name}_update"
        )
        params = [{"name": name, "ctype": f"const {C_TYPES[ext['dtype']]} *", "doc": ext.get("doc", "")}]
        if invalidates and entries:
            params.insert(
                0,
                {
                    "name": "entry",
                    "ctype": "int64_t",
                    "doc": f"the cross-K/V entry it is for, 0 .. {entries['count'] - 1}",
                },
            )
        setters.append(
            {
                "name": name,
                "ctype": params[-1]["ctype"],
                "params": params,
                "offset": r.offset,
                "bytes": tensor_bytes(ext["dtype"], shape),
                "shape": list(shape),
                "invalidates_cross_kv": invalidates,
                "doc": ext.get("doc", ""),
            }
        )
    calls = [c for p in phases for c in p["calls"]]
    split: Dict[str, tuple] = {}  # kernel -> (its map, the options some call uses)
    for p in phases:
        for kernel, kmap, used in p.pop("split_kernels"):
            split[kernel] = (kmap, sorted(set(split.get(kernel, (None, []))[1]) | set(used)))
    return {
        "circuit": graph.circuit,
        "source": graph.path,
        "part": graph.part,
        "prefix": prefix,
        "layout_sha256": weights.layout_sha256,
        "weights_bytes": weights.file_bytes,
        "weight_checks": weights.checks(),
        "arena_bytes": max((p["arena_bytes"] for p in phases), default=0),
        "state_bytes": state_total,
        "dims": dict(sorted(graph.dims.items())),
        "sequence": (
            {
                "counter": graph.sequence["counter"],
                "capacity": expr.evaluate(graph.sequence["capacity"], graph.dims, graph.path),
            }
            if graph.sequence
            else None
        ),
        "cross_kv": (
            {
                "populate_phase": cross["projection_cache"]["populate_phase"],
                "reuse_phase": cross["projection_cache"]["reuse_phase"],
                "entries": entries,
                "source": cross["key_value_source"],
            }
            if cross
            else None
        ),
        "setters": setters,
        "phases": phases,
        "threads": {
            "max": parallel.MAX_THREADS,
            "pool": bool(split),
            # per thread after the first: the largest scratch of any split call
            "scratch_bytes": max((c["parallel"]["thread_scratch_bytes"] for c in calls if c["parallel"]), default=0),
        },
        "split_kernels": parallel.trampolines(split),
        "headers": sorted({c["header"] for c in calls}),
        "libraries": sorted({c["library"] for c in calls}),
    }
