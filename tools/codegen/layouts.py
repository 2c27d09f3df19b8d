"""Pass 4: per phase, join every edge's producer and consumer physical layouts.

Where layouts (or a stored state's dtype) differ, insert the cheapest chain of declared converters
(kernel maps with `layout_conversion`; one whose output dtype differs from its input's rounds).
No route, or two routes of equal cost, is an error naming both ends:
`producer:port/layout/placement -> consumer:port/layout/placement: reason`.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from tools.codegen.errors import CompileError
from tools.codegen.graph import Graph, Op, Ref, with_companions
from tools.codegen.load import Document
from tools.codegen.selection import Selection

MAX_CHAIN = 3

# Which tensor placements a kernel port placement accepts. "arena" means ordinary writable
# memory (handle scratch, handle state, caller buffers); "weights" only the read-only mmap.
_ACCEPTS = {
    "any": {"arena", "state", "external", "weights"},
    "arena": {"arena", "state", "external"},
    "weights": {"weights"},
}


@dataclass
class Tensor:
    id: str
    dtype: str
    layout: str
    placement: str  # arena | state | external | weights
    ref: Optional[Ref] = None  # state/external it stands for
    shape: Optional[Tuple] = None  # filled by the shapes pass
    window_offset: object = None  # state writes: first row written (shapes pass)


@dataclass
class Node:
    """One kernel call in one phase: a circuit op or an inserted converter."""

    name: str
    kmap: Document
    op: Optional[Op]
    inputs: Dict[str, str] = field(default_factory=dict)  # port -> tensor id
    outputs: Dict[str, str] = field(default_factory=dict)
    weights: Dict[str, object] = field(default_factory=dict)  # port -> graph.Weight
    dims: Dict[str, object] = field(default_factory=dict)  # filled by the shapes pass
    # Also the shapes pass: the phase and its env (circuit dims, runtime scalars), which an op's
    # attr expression is evaluated over (kernel_attrs.value).
    phase: str = ""
    env: Dict[str, object] = field(default_factory=dict)
    route: Optional[dict] = None  # converters: the edge they serve and every route considered

    @property
    def kernel(self) -> str:
        return self.kmap.data["kernel"]


@dataclass
class PhaseGraph:
    phase: str
    nodes: List[Node]
    tensors: Dict[str, Tensor]
    outputs: Dict[str, str]  # circuit output name -> tensor id (a stacked output: its first slice)
    externals: List[str]  # argument externals this phase reads
    stacked: Dict[str, List[str]] = field(default_factory=dict)  # stacked output -> its slices' tensor ids

    def output_of(self, tid: str):
        """(output name, slice index or None) of a tensor the caller's buffer holds, else None."""
        for name, slices in self.stacked.items():
            if tid in slices:
                return name, slices.index(tid)
        return next(((n, None) for n, v in self.outputs.items() if v == tid), None)


def _in_place(doc: Document, node: "Node", out_port: str, tid: str) -> bool:
    """Whether output `out_port` may update tensor `tid` in place: the node reads `tid` through an
    input port the kernel map pairs with `out_port` in `may_alias`."""
    pairs = {frozenset(p) for p in doc.data.get("may_alias", [])}
    return any(t == tid and frozenset((out_port, p)) in pairs for p, t in node.inputs.items())


def _endpoint(name: str, t_layout: str, t_placement: str) -> str:
    return f"{name}/{t_layout}/{t_placement}"


def _io(conv: Document) -> Tuple[str, str, str, str]:
    """A converter's (input port, its dtype, output port, its dtype)."""
    ports = sorted(conv.data["ports"].items())
    i = next(p for p, spec in ports if spec["role"] == "input")
    o = next(p for p, spec in ports if spec["role"] == "output")
    return i, conv.data["ports"][i]["dtype"], o, conv.data["ports"][o]["dtype"]


def _routes(
    converters: List[Document], src: Tuple[str, str], dst: Tuple[str, str]
) -> List[Tuple[float, List[Document]]]:
    """All converter chains from (dtype, layout) src to dst (none visited twice), with total cost.
    A converter whose ports' dtypes differ changes the dtype on the way (value_semantics
    "rounded": an f32 cache write stored as f16, say)."""
    found = []

    def walk(at: Tuple[str, str], chain: List[Document], seen: set, cost: float) -> None:
        if at == dst and chain:
            found.append((cost, list(chain)))
            return
        if len(chain) == MAX_CHAIN:
            return
        for c in converters:
            lc = c.data["layout_conversion"]
            _, din, _, dout = _io(c)
            nxt = (dout, lc["to_layout"])
            if (din, lc["from_layout"]) != at or nxt in seen:
                continue
            walk(nxt, chain + [c], seen | {nxt}, cost + lc["cost"])

    walk(src, [], {src}, 0.0)
    return sorted(found, key=lambda r: (r[0], [d.data["kernel"] for d in r[1]]))


class _Builder:
    def __init__(self, graph: Graph, selection: Selection, kernel_maps: List[Document], phase: str):
        self.graph = graph
        self.selection = selection
        self.phase = phase
        self.converters = [d for d in kernel_maps if "layout_conversion" in d.data]
        self.nodes: List[Node] = []
        self.tensors: Dict[str, Tensor] = {}
        self.values: Dict[Ref, str] = {}  # edge source -> tensor id holding it in this phase
        self.externals: List[str] = []
        self.stacked: Dict[str, List[str]] = {}

    def tensor(self, t: Tensor) -> str:
        if t.id in self.tensors:
            raise CompileError(f"internal: tensor {t.id} defined twice")
        self.tensors[t.id] = t
        return t.id

    def error(self, message: str, producer: str, consumer: str, **context) -> CompileError:
        """An edge diagnostic, with the edge and phase as data (tools draw it)."""
        return CompileError(message, phase=self.phase, edge=(producer, consumer), **context)

    def source(self, ref: Ref, consumer: str) -> str:
        if ref in self.values:
            return self.values[ref]
        if ref.kind == "op":
            producer = self.graph.op(ref.name)
            if self.phase not in producer.phases:
                raise self.error(
                    f"{ref} -> {consumer}: the producer does not run in phase '{self.phase}'; "
                    "read the state it stores instead",
                    str(ref),
                    consumer,
                )
            raise self.error(
                f"{ref} -> {consumer}: dangling edge: the producer has no output port '{ref.port}'", str(ref), consumer
            )
        if ref.kind == "external":
            ext = self.graph.externals[ref.name]
            if ext.get("phases") and self.phase not in ext["phases"]:
                raise self.error(
                    f"{ref} -> {consumer}: external '{ref.name}' is not an input of phase '{self.phase}'",
                    str(ref),
                    consumer,
                )
            setter = ext.get("binding") == "setter"
            tid = self.tensor(
                Tensor(f"external:{ref.name}", ext["dtype"], ext["layout"], "state" if setter else "external", ref)
            )
            if not setter:
                self.externals.append(ref.name)
        else:
            st = self.graph.states[ref.name]
            tid = self.tensor(Tensor(str(ref), st.dtype, st.layout, "state", ref))
        self.values[ref] = tid
        return tid

    def convert(
        self,
        tid: str,
        want: Tuple[str, str],
        producer: str,
        consumer: str,
        consumer_placement: str,
        target: Optional[Tensor] = None,
    ) -> str:
        """Returns a tensor holding tensor `tid` in `want` (dtype, layout), inserting converters."""
        t = self.tensors[tid]
        src = _endpoint(producer, t.layout, t.placement)
        dst = _endpoint(consumer, want[1], consumer_placement)
        routes = _routes(self.converters, (t.dtype, t.layout), want)
        record = {
            "edge": f"{src} -> {dst}",
            "dtype": t.dtype,
            "from_layout": t.layout,
            "to_layout": want[1],
            "converters": sorted(c.data["kernel"] for c in self.converters),
            "routes": [{"chain": [d.data["kernel"] for d in r], "cost": cost} for cost, r in routes],
        }
        if want[0] != t.dtype:
            record["to_dtype"] = want[0]
        if not routes:
            what = f"{t.dtype}" if want[0] == t.dtype else f"{t.dtype} to {want[0]}"
            raise self.error(
                f"{src} -> {dst}: no route: no declared converter chain from {t.layout} to {want[1]} for {what}",
                producer,
                consumer,
                route=record,
            )
        if len(routes) > 1 and routes[0][0] == routes[1][0]:
            tie = " vs ".join("+".join(d.data["kernel"] for d in r[1]) for r in routes[:2])
            raise self.error(
                f"{src} -> {dst}: tie: two converter routes cost {routes[0][0]:g} ({tie}); change a cost",
                producer,
                consumer,
                route=record,
            )
        chain = routes[0][1]
        current = tid
        for i, conv in enumerate(chain):
            in_port, _, out_port, out_dtype = _io(conv)
            to_layout = conv.data["layout_conversion"]["to_layout"]
            name = f"{consumer}<-{to_layout}"
            last = i == len(chain) - 1
            if last and target is not None:
                out = target.id
            else:
                out = self.tensor(Tensor(f"{name}.{out_port}", out_dtype, to_layout, "arena"))
            self.nodes.append(Node(name, conv, None, {in_port: current}, {out_port: out}, route=dict(record, step=i)))
            current = out
        return current

    def run_op(self, op: Op) -> None:
        doc = self.selection.providers[(op.name, self.phase)]
        ports = doc.data["ports"]
        node = Node(op.name, doc, op, weights=with_companions(op.weights, ports))
        for port, ref in op.inputs.items():
            spec = ports[port]
            tid = self.source(ref, f"{op.name}:{port}")
            t = self.tensors[tid]
            ends = (
                f"{_endpoint(str(ref), t.layout, t.placement)} -> "
                f"{_endpoint(op.name + ':' + port, spec['layout'], spec['placement'])}"
            )
            if t.dtype != spec["dtype"]:
                raise self.error(f"{ends}: dtype {t.dtype} != {spec['dtype']}", str(ref), f"{op.name}:{port}")
            if t.placement not in _ACCEPTS[spec["placement"]]:
                raise self.error(f"{ends}: placement mismatch", str(ref), f"{op.name}:{port}")
            if t.layout != spec["layout"]:
                tid = self.convert(tid, (t.dtype, spec["layout"]), str(ref), f"{op.name}:{port}", spec["placement"])
            node.inputs[port] = tid
        self.nodes.append(node)
        for port, spec in sorted(ports.items()):
            if spec["role"] != "output":
                continue
            ref = Ref("op", op.name, port)
            if port in op.stores:
                state_ref = op.stores[port]
                st = self.graph.states[state_ref.name]
                target = Tensor(str(state_ref), st.dtype, st.layout, "state", state_ref)
                if target.id in self.tensors:
                    if not _in_place(doc, node, port, target.id):
                        raise self.error(
                            f"{op.where}: {state_ref} is read before this op writes it in phase '{self.phase}'; "
                            "order the writer first (or read and write it through ports the kernel's may_alias pairs, "
                            "in place)",
                            str(ref),
                            str(state_ref),
                        )
                    tid = target.id
                elif (st.dtype, st.layout) == (spec["dtype"], spec["layout"]):
                    tid = self.tensor(target)
                else:
                    tid = self.tensor(Tensor(f"{op.name}.{port}", spec["dtype"], spec["layout"], "arena"))
                    self.tensor(target)
                    self.convert(tid, (st.dtype, st.layout), str(ref), str(state_ref), "state", target)
                self.values[state_ref] = target.id
            else:
                tid = self.tensor(Tensor(f"{op.name}.{port}", spec["dtype"], spec["layout"], "arena"))
            node.outputs[port] = tid
            self.values[ref] = tid

    def run_outputs(self) -> Dict[str, str]:
        result = {}
        for name, out in sorted(self.graph.outputs.items()):
            if self.phase not in out["phases"]:
                continue
            if out["stacked"]:
                # Each iteration's producer writes its slice of the caller's buffer in place.
                self.stacked[name] = []
                for ref in out["stacked"]:
                    tid = self.source(ref, f"output:{name}")
                    t = self.tensors[tid]
                    if t.placement != "arena" or t.layout != out["layout"] or t.dtype != out["dtype"]:
                        raise CompileError(
                            f"{_endpoint(str(ref), t.layout, t.placement)} -> "
                            f"{_endpoint('output:' + name, out['layout'], 'external')}: a stacked output's "
                            f"slices must be produced in its dtype and layout"
                        )
                    t.placement = "external"
                    self.stacked[name].append(tid)
                result[name] = self.stacked[name][0]
                continue
            tid = self.source(out["ref"], f"output:{name}")
            t = self.tensors[tid]
            if t.placement != "arena" or t.layout != out["layout"] or t.dtype != out["dtype"]:
                target = Tensor(f"output:{name}", out["dtype"], out["layout"], "external")
                self.tensor(target)
                self.convert(tid, (out["dtype"], out["layout"]), str(out["ref"]), f"output:{name}", "external", target)
                tid = target.id
            else:
                t.placement = "external"  # the producer writes straight into the caller's buffer
            result[name] = tid
        return result


def join(graph: Graph, selection: Selection, kernel_maps: List[Document], phase: str) -> PhaseGraph:
    b = _Builder(graph, selection, kernel_maps, phase)
    for op in graph.ops:
        if phase in op.phases:
            b.run_op(op)
    outputs = b.run_outputs()
    return PhaseGraph(phase, b.nodes, b.tensors, outputs, b.externals, b.stacked)
