"""Pass 6: memory plan for one phase, plus the handle's persistent state regions.

Call order: calls that only populate the cross-K/V projection cache run first (guarded in
the C by the cache's validity flag), then the rest in circuit order. Arena tensors and
kernel scratch get 64-byte-aligned offsets by lifetime: two tensors share bytes only when
their live ranges [first write, last read] do not overlap. Sizes use each dim's upper bound.
"""

from dataclasses import dataclass
from math import prod
from typing import Dict, List, Optional, Tuple

from tools.codegen import expr
from tools.codegen.errors import CompileError
from tools.codegen.graph import Graph
from tools.codegen.layouts import Node, PhaseGraph
from tools.codegen.shapes import shape_of

ALIGN = 64
DTYPE_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "i64": 8, "i32": 4, "i16": 2, "u8": 1, "i8": 1}


def align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    id: str  # tensor id, or "<node>#scratch<i>"
    bytes: int  # upper bound; 0 when only known at run time (then size_c says)
    first: int  # index of the call that writes it
    last: int  # index of the last call that reads it
    offset: int = -1  # static plans
    size_c: str = ""  # C expression of the byte size, for sizes known only at run time
    slot: int = -1  # run-time plans: the slot it occupies


@dataclass
class StateRegion:
    name: str
    offset: int
    instance_bytes: int  # one instance, 64-byte aligned
    instances: Tuple[Tuple[str, int], ...]
    dtype: str
    shape: Tuple[int, ...]
    layout: str
    cache: Optional[str]


@dataclass
class PhasePlan:
    phase: str
    order: List[Node]
    guarded: List[bool]  # per call: runs only while the projection cache is invalid
    optional: List[str]  # per call: the optional output it only serves (skipped when NULL), or ""
    buffers: Dict[str, Buffer]
    arena_bytes: int  # static plans; -1 when sizes are known only at run time
    slots: List[List[str]]  # run-time plans: buffer ids per slot (slots laid out in order)


def tensor_bytes(dtype: str, shape) -> Optional[int]:
    bounds = [expr.upper(d) for d in shape]
    return None if None in bounds else DTYPE_BYTES[dtype] * prod(bounds)


def _size_c(dtype: str, shape) -> str:
    return " * ".join([str(DTYPE_BYTES[dtype])] + [expr.compound(d) for d in shape])


def state_regions(graph: Graph) -> Dict[str, StateRegion]:
    """State declared in the circuit and setter externals (e.g. encoder memory), packed in name order."""
    regions: Dict[str, StateRegion] = {}
    offset = 0
    items = [
        (f"external:{n}", e["dtype"], e["shape"], e["layout"], (), None)
        for n, e in sorted(graph.externals.items())
        if e.get("binding") == "setter"
    ]
    items += [
        (f"state:{s.name}", s.dtype, s.shape, s.layout, s.instances, s.cache) for _, s in sorted(graph.states.items())
    ]
    for name, dtype, shape_spec, layout, instances, cache in items:
        shape = shape_of(shape_spec, graph.dims, f"{graph.path}: {name} shape")
        if any(not isinstance(d, int) or d <= 0 for d in shape):
            raise CompileError(
                f"{graph.path}: {name}: persistent shape {shape_spec} must be positive and fixed (no runtime dims)"
            )
        per = align(tensor_bytes(dtype, shape))
        count = prod(n for _, n in instances) if instances else 1
        regions[name] = StateRegion(name, offset, per, instances, dtype, shape, layout, cache)
        offset += per * count
    return regions


def state_bytes(regions: Dict[str, StateRegion]) -> int:
    return max(
        (
            r.offset + r.instance_bytes * (prod(n for _, n in r.instances) if r.instances else 1)
            for r in regions.values()
        ),
        default=0,
    )


def _guarded(graph: Graph, pg: PhaseGraph) -> Dict[str, bool]:
    """Nodes whose every effect ends in the cross-K/V cache (only in the cache's populate phase)."""
    cross = graph.cross_attention
    result = {n.name: False for n in pg.nodes}
    if not cross or cross["projection_cache"]["populate_phase"] != pg.phase:
        return result
    readers: Dict[str, List[str]] = {}
    for n in pg.nodes:
        for tid in n.inputs.values():
            readers.setdefault(tid, []).append(n.name)
    outputs = set(pg.outputs.values()) | {t for slices in pg.stacked.values() for t in slices}
    for n in reversed(pg.nodes):
        ok = bool(n.outputs)
        for tid in n.outputs.values():
            t = pg.tensors[tid]
            if t.placement == "state" and t.ref is not None and t.ref.kind == "state":
                ok &= graph.states[t.ref.name].cache == "cross_kv"
            else:
                ok &= tid not in outputs and bool(readers.get(tid)) and all(result[r] for r in readers[tid])
        result[n.name] = ok
    return result


def _optional_only(graph: Graph, pg: PhaseGraph) -> Dict[str, str]:
    """Node -> the optional output that is its only effect (directly or through arena tensors
    read only by such nodes), or "": the call runs only when the caller asked for that output."""
    owner = {}
    for name, tid in pg.outputs.items():
        if graph.outputs[name].get("optional"):
            for t in pg.stacked.get(name, [tid]):
                owner[t] = name
    readers: Dict[str, List[str]] = {}
    for n in pg.nodes:
        for tid in n.inputs.values():
            readers.setdefault(tid, []).append(n.name)
    result: Dict[str, str] = {}
    for n in reversed(pg.nodes):
        served = set()
        for tid in n.outputs.values():
            if tid in owner:
                served.add(owner[tid])
            elif pg.tensors[tid].placement == "arena" and readers.get(tid):
                served |= {result.get(r) or None for r in readers[tid]}
            else:
                served.add(None)
        result[n.name] = served.pop() if len(served) == 1 and None not in served else ""
    return result


def scratch_exprs(node: Node) -> List[str]:
    return [a["bind"].split(":", 1)[1] for a in node.kmap.data["abi"] if a["bind"].startswith("scratch:")]


def _assign_offsets(buffers: List[Buffer]) -> int:
    """Greedy by size (largest first): lowest aligned offset free during the buffer's lifetime."""
    placed: List[Buffer] = []
    for b in sorted(buffers, key=lambda b: (-b.bytes, b.first, b.id)):
        conflicts = sorted((p.offset, p.offset + p.bytes) for p in placed if not (p.last < b.first or b.last < p.first))
        offset = 0
        for start, end in conflicts:
            if offset + b.bytes <= start:
                break
            offset = max(offset, align(end))
        b.offset = offset
        placed.append(b)
    return align(max((b.offset + b.bytes for b in buffers), default=0))


def plan_phase(graph: Graph, pg: PhaseGraph) -> PhasePlan:
    guarded = _guarded(graph, pg)
    order = [n for n in pg.nodes if guarded[n.name]] + [n for n in pg.nodes if not guarded[n.name]]
    buffers: Dict[str, Buffer] = {}
    for i, node in enumerate(order):
        for tid in node.outputs.values():
            t = pg.tensors[tid]
            if t.placement == "arena" and tid not in buffers:
                size = tensor_bytes(t.dtype, t.shape)
                buffers[tid] = Buffer(
                    tid, size or 0, i, i, size_c="" if size is not None else _size_c(t.dtype, t.shape)
                )
        for tid in node.inputs.values():
            if tid in buffers:
                buffers[tid].last = i
            elif pg.tensors[tid].placement == "arena":
                raise CompileError(f"internal: {node.name} reads {tid} before it is written")
        for k, text in enumerate(scratch_exprs(node)):
            value = expr.evaluate(text, node.dims, f"kernel {node.kernel}: scratch '{text}'")
            size = expr.upper(value)
            bid = f"{node.name}#scratch{k}"
            buffers[bid] = Buffer(bid, max(size or 0, 1), i, i, size_c="" if size is not None else expr.c_text(value))
    flags = [guarded[n.name] for n in order]
    optional = _optional_only(graph, pg)
    skips = [optional[n.name] for n in order]
    if any(b.size_c for b in buffers.values()):
        return PhasePlan(pg.phase, order, flags, skips, buffers, -1, _assign_slots(list(buffers.values())))
    return PhasePlan(pg.phase, order, flags, skips, buffers, _assign_offsets(list(buffers.values())), [])


def _assign_slots(buffers: List[Buffer]) -> List[List[str]]:
    """Run-time sizes: a buffer reuses the first slot whose occupants are all dead before it is
    written; a slot's size is the max of its occupants' (computed in the C)."""
    slots: List[List[Buffer]] = []
    for b in sorted(buffers, key=lambda b: (b.first, b.id)):
        for k, slot in enumerate(slots):
            if all(o.last < b.first for o in slot):
                slot.append(b)
                b.slot = k
                break
        else:
            b.slot = len(slots)
            slots.append([b])
    return [[b.id for b in slot] for slot in slots]


def overlapping_pairs(buffers: List[Buffer]) -> List[Tuple[str, str]]:
    """Pairs of buffers live at the same call whose bytes overlap (must be empty)."""
    bad = []
    for i, a in enumerate(buffers):
        for b in buffers[i + 1 :]:
            live = not (a.last < b.first or b.last < a.first)
            if live and a.offset < b.offset + b.bytes and b.offset < a.offset + a.bytes:
                bad.append((a.id, b.id))
    return bad


def plan_json(graph: Graph, plan: PhasePlan, regions: Dict[str, StateRegion]) -> dict:
    return {
        "circuit": graph.circuit,
        "phase": plan.phase,
        "alignment": ALIGN,
        "arena_bytes": plan.arena_bytes,
        "calls": [
            {"index": i, "node": n.name, "kernel": n.kernel, "guarded_by_cross_kv_cache": g}
            for i, (n, g) in enumerate(zip(plan.order, plan.guarded))
        ],
        "arena": [
            {"id": b.id, "offset": b.offset, "bytes": b.size_c or b.bytes, "slot": b.slot, "live": [b.first, b.last]}
            for b in sorted(plan.buffers.values(), key=lambda b: (b.offset, b.slot, b.first, b.id))
        ],
        "state": [
            {
                "name": r.name,
                "offset": r.offset,
                "instance_bytes": r.instance_bytes,
                "instances": {k: n for k, n in r.instances},
                "shape": list(r.shape),
                "layout": r.layout,
                "dtype": r.dtype,
                "cache": r.cache,
            }
            for r in regions.values()
        ],
    }
