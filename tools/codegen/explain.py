"""The compiler's decisions as data (explain.json): per phase the graph it built (calls, the
tensors on every edge with dtype, shape, layout and placement, inserted converters and the
routes they were chosen from, persistent state), and per op every kernel map considered and why
it was rejected. Tools draw it (tools/codegen/explorer); nothing here changes what is compiled.

`describe` reads a compiler Trace (compiler.py). After a failed compile it describes what the
passes finished: phases that did not get through the layout pass are drawn from the circuit
(ops and their declared edges), and `error.edge` names the edge that failed, with the same id
the phase's `edges` use.
"""

from tools.codegen import expr
from tools.codegen.errors import CompileError

VERSION = 1


def _text(v) -> str | None:
    return None if v is None else expr.c_text(v)


def _shape(shape) -> list[str] | None:
    return None if shape is None else [expr.c_text(d) for d in shape]


def _kernel(doc) -> dict:
    d = doc.data
    return {
        "path": doc.path,
        "provides": d["provides"],
        "header": d["header"],
        "library": d["library"],
        "phases": d["phases"],
        "parallel": d.get("parallel", []),
        "contract": d["contract"],
        "layout_conversion": d.get("layout_conversion"),
        "dims": d["dims"],
    }


def _value_id(ref) -> str:
    """The id a value has in a phase graph: `op.port` for op outputs, else the ref itself."""
    return f"{ref.name}.{ref.port}" if ref.kind == "op" else str(ref)


def _edge_id(value: str, src: str, dst: str, port: str) -> str:
    return f"{value}: {src} -> {dst}" + (f":{port}" if port else "")


class _Phase:
    """Builds one phase's nodes, values and edges (the same shape for compiled and circuit-level phases)."""

    def __init__(self, graph, phase: str):
        self.graph, self.phase = graph, phase
        self.nodes: list[dict] = []
        self.values: dict[str, dict] = {}
        self.producer: dict[str, tuple[str, str]] = {}  # value -> (node, port) that writes it
        self.reads: list[tuple[str, str, str]] = []  # (value, node, port)

    def holder(self, value: dict) -> str | None:
        """Values drawn as nodes of their own: persistent state, arguments, the caller's outputs."""
        if value["placement"] in ("state", "external") and value["ref"]:
            return value["ref"]
        return None

    def state_info(self, ref) -> tuple[str | None, str | None]:
        """(cache kind, what it is) for a persistent value."""
        if ref is None:
            return None, None
        if ref.kind == "state":
            return self.graph.states[ref.name].cache, "state"
        ext = self.graph.externals.get(ref.name, {})
        return ("setter" if ext.get("binding") == "setter" else None), "external"

    def value(self, vid: str, dtype, layout, placement, shape, ref, window_offset=None) -> None:
        cache, _ = self.state_info(ref)
        self.values[vid] = {
            "dtype": dtype,
            "layout": layout,
            "placement": placement,
            "shape": _shape(shape),
            "ref": str(ref) if ref is not None else None,
            "cache": cache,
            "window_offset": _text(window_offset),
        }

    def edges(self, outputs: dict[str, str], stacked: dict[str, list[str]]) -> list[dict]:
        """Producer -> consumer per value; a persistent value or an argument is a node of its own
        (written into, read from), and each circuit output ends in an `output:<name>` node (a
        stacked output: an edge from each of its slices)."""
        result = []

        def add(value, src, src_port, dst, dst_port):
            result.append(
                {
                    "id": _edge_id(value, src, dst, dst_port),
                    "value": value,
                    "from": src,
                    "from_port": src_port,
                    "to": dst,
                    "to_port": dst_port,
                }
            )

        for vid, (node, port) in sorted(self.producer.items()):
            h = self.holder(self.values[vid])
            if h:
                add(vid, node, port, h, "")
        for vid, node, port in self.reads:
            h = self.holder(self.values[vid])
            if h:
                add(vid, h, "", node, port)
            elif vid in self.producer:
                add(vid, self.producer[vid][0], self.producer[vid][1], node, port)
        for name, vid in sorted(outputs.items()):
            for value in stacked.get(name) or [vid]:
                if value in self.producer:
                    add(value, self.producer[value][0], self.producer[value][1], f"output:{name}", "")
        return result

    def result(
        self, status: str, outputs: dict[str, str], externals: list[str], stacked: dict[str, list[str]] | None = None
    ) -> dict:
        """`outputs`: circuit output -> value (a stacked output's first slice); `stacked`: a stacked
        output -> every slice's value."""
        return {
            "phase": self.phase,
            "status": status,
            "nodes": self.nodes,
            "values": dict(sorted(self.values.items())),
            "edges": self.edges(outputs, stacked or {}),
            "outputs": dict(sorted(outputs.items())),
            "externals": externals,
        }


def _candidates(selection, op_name: str, phase: str, table: list[list], index: dict[tuple, int]) -> int | None:
    """Index of this op's candidate list in the shared table (unrolled ops repeat the same list)."""
    considered = selection.considered.get((op_name, phase)) if selection else None
    if considered is None:
        return None
    key = tuple((d.data["kernel"], why) for d, why in considered)
    if key not in index:
        index[key] = len(table)
        table.append([{"kernel": k, "rejected": why} for k, why in key])
    return index[key]


def _compiled(graph, selection, pg, pp, table, index) -> dict:
    ph = _Phase(graph, pg.phase)
    order = {n.name: i for i, n in enumerate(pp.order)} if pp else {}
    guarded = {n.name: g for n, g in zip(pp.order, pp.guarded)} if pp else {}
    nodes = sorted(pg.nodes, key=lambda n: order.get(n.name, len(order))) if pp else pg.nodes
    for tid, t in pg.tensors.items():
        ph.value(tid, t.dtype, t.layout, t.placement, t.shape, t.ref, t.window_offset)
    for n in nodes:
        ph.nodes.append(
            {
                "name": n.name,
                "kind": "op" if n.op else "converter",
                "op_kind": n.op.kind if n.op else n.kmap.data["provides"],
                "kernel": n.kernel,
                "where": n.op.where if n.op else None,
                "call": order.get(n.name),
                "guarded": guarded.get(n.name, False),
                "inputs": dict(sorted(n.inputs.items())),
                "outputs": dict(sorted(n.outputs.items())),
                "weights": {p: w.tensor for p, w in sorted(n.weights.items())},
                "dims": {k: expr.c_text(v) for k, v in sorted(n.dims.items())},
                "attrs": dict(sorted(n.op.attrs.items())) if n.op else {},
                "candidates": _candidates(selection, n.op.name, pg.phase, table, index) if n.op else None,
                "route": n.route,
            }
        )
        for port, tid in sorted(n.outputs.items()):
            ph.producer[tid] = (n.name, port)
        for port, tid in sorted(n.inputs.items()):
            ph.reads.append((tid, n.name, port))
    return ph.result("compiled", pg.outputs, list(pg.externals), pg.stacked)


def _declared(graph, selection, phase: str, status: str, table, index) -> dict:
    """A phase the layout pass did not finish, drawn from the circuit's own edges: ops and the
    refs they read; tensor facts come from the selected kernel's ports where there is one."""
    ph = _Phase(graph, phase)
    provider = (lambda op: selection.providers.get((op.name, phase))) if selection else (lambda op: None)
    ops = [op for op in graph.ops if phase in op.phases]
    for op in ops:
        doc = provider(op)
        ports = doc.data["ports"] if doc else {}
        outs = {p for p, s in ports.items() if s["role"] == "output"}
        outs |= {r.port for o in ops for r in o.inputs.values() if r.kind == "op" and r.name == op.name}
        outputs = {}
        for port in sorted(outs):
            spec = ports.get(port, {})
            store = op.stores.get(port)
            vid = _value_id(store) if store else f"{op.name}.{port}"
            if store:
                st = graph.states[store.name]
                ph.value(vid, st.dtype, st.layout, "state", None, store)
            else:
                ph.value(vid, spec.get("dtype"), spec.get("layout"), spec.get("placement"), None, None)
            outputs[port] = vid
            ph.producer[vid] = (op.name, port)
        inputs = {}
        for port, ref in sorted(op.inputs.items()):
            vid = _value_id(ref)
            inputs[port] = vid
            if vid not in ph.values:
                if ref.kind == "state":
                    st = graph.states[ref.name]
                    ph.value(vid, st.dtype, st.layout, "state", None, ref)
                elif ref.kind == "external":
                    ext = graph.externals[ref.name]
                    placement = "state" if ext.get("binding") == "setter" else "external"
                    ph.value(vid, ext["dtype"], ext["layout"], placement, None, ref)
                else:
                    ph.value(vid, None, None, None, None, None)
            ph.reads.append((vid, op.name, port))
        ph.nodes.append(
            {
                "name": op.name,
                "kind": "op",
                "op_kind": op.kind,
                "kernel": doc.data["kernel"] if doc else None,
                "where": op.where,
                "call": None,
                "guarded": False,
                "inputs": inputs,
                "outputs": outputs,
                "weights": {p: w.tensor for p, w in sorted(op.weights.items())},
                "dims": {},
                "attrs": dict(sorted(op.attrs.items())),
                "candidates": _candidates(selection, op.name, phase, table, index),
                "route": None,
            }
        )
    here = {name: out for name, out in sorted(graph.outputs.items()) if phase in out["phases"]}
    outputs = {name: _value_id(out["ref"]) for name, out in here.items()}
    stacked = {name: [_value_id(r) for r in out["stacked"]] for name, out in here.items() if out.get("stacked")}
    return ph.result(status, outputs, [], stacked)


def _failed_edge(error: CompileError, phase: dict) -> dict | None:
    """The error's edge (producer, consumer as the message names them) as an edge of `phase`."""
    producer, consumer = error.context["edge"]
    kind = producer.split(":", 1)[0]
    if kind in ("external", "state"):
        value = producer
        src = producer
    else:
        name, _, port = producer.rpartition(":")
        value, src = f"{name}.{port}", name
    if consumer.startswith(("state:", "output:")):
        dst, port = consumer, ""
        if consumer.startswith("state:"):
            value = consumer  # a store: the op writes the state value
    else:
        dst, _, port = consumer.rpartition(":")
    edge_id = _edge_id(value, src, dst, port)
    if edge_id not in {e["id"] for e in phase["edges"]}:
        # Not an edge the phase draws (e.g. a read of a producer that does not run in this
        # phase): add it, so the failure is still seen on the graph.
        phase["edges"].append({"id": edge_id, "value": value, "from": src, "from_port": "", "to": dst, "to_port": port})
    return {"phase": phase["phase"], "id": edge_id, "producer": producer, "consumer": consumer}


def _error(error: CompileError | None, phases: list[dict]) -> dict | None:
    if error is None:
        return None
    ctx = error.context
    result = {
        "message": str(error),
        "phase": ctx.get("phase"),
        "op": ctx.get("op"),
        "edge": None,
        "candidates": ctx.get("candidates"),
        "route": ctx.get("route"),
    }
    target = next((p for p in phases if p["phase"] == ctx.get("phase")), None)
    if target is not None and "edge" in ctx:
        result["edge"] = _failed_edge(error, target)
    return result


def _attach_failed_candidates(error: CompileError | None, phases: list[dict], table: list[list]) -> None:
    """A selection error lists the maps it considered: give them to the failing op's node too."""
    if error is None or "candidates" not in error.context or "op" not in error.context:
        return
    for phase in phases:
        for n in phase["nodes"]:
            if phase["phase"] == error.context.get("phase") and n["name"] == error.context["op"]:
                table.append([{"kernel": c["kernel"], "rejected": c["rejected"]} for c in error.context["candidates"]])
                n["candidates"] = len(table) - 1


def _status(trace, phase: str, error: CompileError | None, first_missing: str | None) -> str:
    if phase in trace.plans and (error is None or error.context.get("phase") != phase):
        return "compiled"
    if error is None:
        return "compiled"
    if phase == error.context.get("phase") or phase == first_missing:
        return "failed"
    return "not reached"


def describe(trace, error: CompileError | None = None) -> dict:
    """explain.json for a compiler Trace; `error` is the CompileError that stopped it, if any.
    Phase status: compiled, failed (the error's phase, drawn from its layout pass when that
    finished, else from the circuit) or not reached (drawn from the circuit)."""
    g = trace.graph
    table: list[list] = []
    index: dict[tuple, int] = {}
    phases = []
    first_missing = next((p for p in (g.phases if g else []) if p not in trace.plans), None)
    for phase in g.phases if g else []:
        status = _status(trace, phase, error, first_missing)
        if phase in trace.phases:
            phases.append(_compiled(g, trace.selection, trace.phases[phase], trace.plans.get(phase), table, index))
            phases[-1]["status"] = status
        else:
            phases.append(_declared(g, trace.selection, phase, status, table, index))
    _attach_failed_candidates(error, phases, table)
    return {
        "version": VERSION,
        "source": g.path if g else trace.circuit_path,
        "circuit": g.circuit if g else None,
        "part": g.part if g else None,
        "dims": dict(sorted(g.dims.items())) if g else {},
        "states": {
            name: {
                "dtype": s.dtype,
                "layout": s.layout,
                "shape": list(s.shape),
                "cache": s.cache,
                "instances": dict(s.instances),
                "window": s.window,
            }
            for name, s in sorted(g.states.items())
        }
        if g
        else {},
        "kernels": {d.data["kernel"]: _kernel(d) for d in sorted(trace.kernel_maps, key=lambda d: d.data["kernel"])},
        "candidates": table,
        "phases": phases,
        "error": _error(error, phases),
    }
