"""Pass 3: exactly one kernel map provides each op in each phase it runs in.

A map is a candidate when it provides the op's kind, runs in the phase and every port the op binds
a checkpoint tensor to has the tensor's dtype in the manifest (an f32 weight selects an f32
kernel, a bf16 weight a bf16 one): one circuit compiles against any precision of checkpoint.
Likewise every input port has the dtype of what it reads (a state in the dtype the build stores
it in, the manifest's `state_dtypes`: f16 cross-attention K/V select kernels that read f16).
A map may also state the builds it is made for (`precisions`, matched against the manifest's
`precision`): it is a candidate only in those builds, and there it is chosen over the maps that
state none (how an op without weights, attention say, computes in bf16 in the bf16 build).

Also checks the op's slots against the provider's ports: every required input and weight
port is wired, and the op wires no port the kernel does not have; and an op's `contract`, if it
states `kind` or `tolerance_c`, must agree with the provider's (the kernel map is the one place a
tolerance is stated: a circuit may only restate it, never loosen or tighten it).
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from tools.codegen.errors import CompileError
from tools.codegen.graph import Graph, Op, State
from tools.codegen.load import Document

# One kernel map as a candidate for an op: the map, and why it was rejected (None: it provides the op).
Candidate = Tuple[Document, Optional[str]]


@dataclass(frozen=True)
class Selection:
    """(op name, phase) -> the kernel map document that runs it, and every map considered."""

    providers: Dict[Tuple[str, str], Document]
    considered: Dict[Tuple[str, str], Tuple[Candidate, ...]]


def _runs_in(doc: Document, phase: str) -> bool:
    phases = doc.data["phases"]
    return "any" in phases or phase in phases


def rejection(
    op: Op,
    phase: str,
    doc: Document,
    dtypes: Optional[Dict[str, str]] = None,
    precision: Optional[str] = None,
    reads: Optional[Dict[str, Tuple[str, str]]] = None,
    states: Optional[Dict[str, State]] = None,
) -> Optional[str]:
    """Why `doc` cannot run `op` in `phase`, or None when it is a candidate. `dtypes`: the
    manifest's tensor dtypes (None without a manifest: weights then choose nothing); `precision`:
    the manifest's build (None: the converted checkpoint); `reads`: what each input reads and its
    dtype (_reads); `states`: the graph's states, in the dtypes the build stores them in."""
    provides = doc.data["provides"]
    if provides != op.kind:
        return f"provides '{provides}', not '{op.kind}'"
    if not _runs_in(doc, phase):
        return f"runs in phase(s) {', '.join(doc.data['phases'])}, not '{phase}'"
    builds = doc.data.get("precisions")
    if builds and precision not in builds:
        return f"made for the {', '.join(builds)} build(s), not {'the ' + precision if precision else 'this'} one"
    for port, w in sorted(op.weights.items()):
        spec = doc.data["ports"].get(port)
        have = (dtypes or {}).get(w.tensor)
        if spec is not None and have is not None and spec["dtype"] != have:
            return f"port '{port}' reads {spec['dtype']}, but weight {w.tensor} is {have}"
    return _bound_rejection(op, doc, reads or {}, states or {})


def _bound_rejection(
    op: Op, doc: Document, reads: Dict[str, Tuple[str, str]], states: Dict[str, State]
) -> Optional[str]:
    """An input port must have the dtype of what it reads (`reads`: port -> (what, dtype)), and a
    port that writes a state in the state's own layout (in place) the state's dtype; an output in
    another layout reaches its state through converters (layouts.py), which may change the dtype."""
    ports = doc.data["ports"]
    for port, (what, dtype) in sorted(reads.items()):
        spec = ports.get(port)
        if spec is not None and spec["dtype"] != dtype:
            return f"port '{port}' reads {spec['dtype']}, but {what} is {dtype}"
    for port, ref in sorted(op.stores.items()):
        spec, st = ports.get(port), states.get(ref.name)
        if spec is not None and st is not None and spec["layout"] == st.layout and spec["dtype"] != st.dtype:
            return f"port '{port}' writes {spec['dtype']}, but state {st.name} is {st.dtype}"
    return None


def _reads(graph: Graph, op: Op, phase: str, providers: Dict[Tuple[str, str], Document]) -> Dict[str, Tuple[str, str]]:
    """What each input of `op` reads in `phase`, and its dtype: a state in the dtype the build
    stores it in, an external, or an output of an op already selected (unknown ones are left to
    the layouts pass, which names the edge)."""
    result = {}
    for port, ref in op.inputs.items():
        if ref.kind == "state" and ref.name in graph.states:
            result[port] = (f"state {ref.name}", graph.states[ref.name].dtype)
        elif ref.kind == "external" and ref.name in graph.externals:
            result[port] = (f"external {ref.name}", graph.externals[ref.name]["dtype"])
        elif ref.kind == "op" and (ref.name, phase) in providers:
            spec = providers[(ref.name, phase)].data["ports"].get(ref.port)
            if spec is not None:
                result[port] = (f"{ref.name}.{ref.port}", spec["dtype"])
    return result


def _weights_note(op: Op, dtypes: Optional[Dict[str, str]]) -> str:
    """` for weights w=T (bf16), ...` when the op binds weights: they take part in the choice."""
    if not op.weights:
        return ""
    if dtypes is None:
        return " (no manifest, so the weights' dtypes cannot choose; pass --manifest)"
    bound = ", ".join(
        f"{p}={w.tensor} ({dtypes.get(w.tensor, 'not in the manifest')})" for p, w in sorted(op.weights.items())
    )
    return f" for weights {bound}"


def _record(candidates: List[Candidate]) -> List[dict]:
    return [{"kernel": d.data["kernel"], "path": d.path, "rejected": why} for d, why in candidates]


def _check_slots(op: Op, doc: Document) -> None:
    ports = doc.data["ports"]
    where = f"{op.where}: kernel {doc.data['kernel']} ({doc.path})"
    # A weight may also feed an input port (e.g. `add` with checkpoint positions as b).
    for slot, role_group in ((op.inputs, ("input",)), (op.weights, ("weight", "input")), (op.stores, ("output",))):
        for port in slot:
            if port not in ports:
                raise CompileError(f"{where}: unknown slot '{port}': the kernel's ports are {', '.join(sorted(ports))}")
            if ports[port]["role"] not in role_group:
                raise CompileError(
                    f"{where}: slot '{port}' is a {ports[port]['role']} port of the kernel, not {role_group[0]}"
                )
    for port, spec in sorted(ports.items()):
        if spec.get("optional"):
            continue
        if spec["role"] == "input" and port not in op.inputs and port not in op.weights:
            raise CompileError(f"{where}: missing port '{port}': wire it in /inputs")
        if spec["role"] == "weight" and port not in op.weights:
            of = spec.get("companion", {}).get("of")
            if of is None:
                raise CompileError(f"{where}: missing port '{port}': bind a checkpoint tensor in /weights")
            if of not in op.weights:  # read beside another weight (graph.with_companions)
                raise CompileError(
                    f"{where}: port '{port}' is read beside weight port '{of}', which the op does not "
                    "bind; bind a checkpoint tensor to it in /weights"
                )


def _check_contract(op: Op, doc: Document) -> None:
    stated = op.contract or {}
    mapped = doc.data["contract"]
    for key in ("kind", "tolerance_c"):
        if key in stated and stated[key] != mapped.get(key):
            has = f"{mapped[key]!r}" if key in mapped else "none"
            raise CompileError(
                f"{op.where}: /contract/{key}: the circuit states {stated[key]!r} but kernel "
                f"{doc.data['kernel']} ({doc.path}) states /contract/{key} {has}: the kernel map "
                f"is the source of truth; drop {key} from the circuit or make the two agree"
            )


def _made_for_the_build(verdicts: List[Candidate], precision: Optional[str]) -> List[Candidate]:
    """Maps that state the build's precision win over candidates that state none."""
    if not any(why is None and d.data.get("precisions") for d, why in verdicts):
        return verdicts
    return [
        (
            d,
            f"a map made for the {precision} build provides it"
            if why is None and not d.data.get("precisions")
            else why,
        )
        for d, why in verdicts
    ]


def select(
    graph: Graph, kernel_maps: List[Document], dtypes: Optional[Dict[str, str]] = None, precision: Optional[str] = None
) -> Selection:
    """`dtypes`: tensor name -> dtype from the manifest (load.weight_dtypes), None without one;
    `precision`: the manifest's build (load.build_precision), None for the converted checkpoint."""
    providers, considered = {}, {}
    for op in graph.ops:
        for phase in op.phases:
            reads = _reads(graph, op, phase, providers)
            verdicts = _made_for_the_build(
                [(d, rejection(op, phase, d, dtypes, precision, reads, graph.states)) for d in kernel_maps], precision
            )
            candidates = [d for d, why in verdicts if why is None]
            context = dict(op=op.name, phase=phase, candidates=_record(verdicts))
            note = _weights_note(op, dtypes)
            if not candidates:
                # The maps of this kind a weight dtype turned away, with why: what to add or fix.
                near = [
                    f"{d.data['kernel']} ({d.path}: {why})" for d, why in verdicts if why and why.startswith("port '")
                ]  # a dtype: of a weight, a state, an input
                rejected = f": rejected {', '.join(near)}" if near else ""
                raise CompileError(
                    f"{op.where}: no provider: no kernel map provides kind '{op.kind}' in phase "
                    f"'{phase}'{note}{rejected}",
                    **context,
                )
            if len(candidates) > 1:
                names = ", ".join(f"{d.data['kernel']} ({d.path})" for d in candidates)
                raise CompileError(
                    f"{op.where}: two or more providers for kind '{op.kind}' in phase '{phase}'{note}: {names}",
                    **context,
                )
            try:
                _check_slots(op, candidates[0])
                _check_contract(op, candidates[0])
            except CompileError as e:
                raise CompileError(str(e), **context) from None
            providers[(op.name, phase)] = candidates[0]
            considered[(op.name, phase)] = tuple(verdicts)
    return Selection(providers, considered)
