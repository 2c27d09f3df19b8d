"""Pass 3: exactly one kernel map provides each op in each phase it runs in.

Also checks the op's slots against the provider's ports: every required input and weight
port is wired, and the op wires no port the kernel does not have; and an op's `contract`, if it
states `kind` or `tolerance_c`, must agree with the provider's (the kernel map is the one place a
tolerance is stated: a circuit may only restate it, never loosen or tighten it).
"""

from dataclasses import dataclass
from typing import Dict, List, Tuple

from tools.codegen.errors import CompileError
from tools.codegen.graph import Graph, Op
from tools.codegen.load import Document


@dataclass(frozen=True)
class Selection:
    """(op name, phase) -> the kernel map document that runs it."""

    providers: Dict[Tuple[str, str], Document]


def _runs_in(doc: Document, phase: str) -> bool:
    phases = doc.data["phases"]
    return "any" in phases or phase in phases


def _check_slots(op: Op, doc: Document) -> None:
    ports = doc.data["ports"]
    where = f"{op.where}: kernel {doc.data['kernel']} ({doc.path})"
    # A weight may also feed an input port (e.g. `add` with checkpoint positions as b).
    for slot, role_group in ((op.inputs, ("input",)), (op.weights, ("weight", "input")), (op.stores, ("output",))):
        for port in slot:
            if port not in ports:
                raise CompileError(f"{where}: unknown slot '{port}': the kernel's ports are {', '.join(sorted(ports))}")
            if ports[port]["role"] not in role_group:
                raise CompileError(f"{where}: slot '{port}' is a {ports[port]['role']} port of the kernel, not {role_group[0]}")
    for port, spec in sorted(ports.items()):
        if spec.get("optional"):
            continue
        if spec["role"] == "input" and port not in op.inputs and port not in op.weights:
            raise CompileError(f"{where}: missing port '{port}': wire it in /inputs")
        if spec["role"] == "weight" and port not in op.weights:
            raise CompileError(f"{where}: missing port '{port}': bind a checkpoint tensor in /weights")


def _check_contract(op: Op, doc: Document) -> None:
    stated = op.contract or {}
    mapped = doc.data["contract"]
    for key in ("kind", "tolerance_c"):
        if key in stated and stated[key] != mapped.get(key):
            has = f"{mapped[key]!r}" if key in mapped else "none"
            raise CompileError(f"{op.where}: /contract/{key}: the circuit states {stated[key]!r} but kernel "
                               f"{doc.data['kernel']} ({doc.path}) states /contract/{key} {has}: the kernel map "
                               f"is the source of truth; drop {key} from the circuit or make the two agree")


def select(graph: Graph, kernel_maps: List[Document]) -> Selection:
    providers = {}
    for op in graph.ops:
        for phase in op.phases:
            candidates = [d for d in kernel_maps if d.data["provides"] == op.kind and _runs_in(d, phase)]
            if not candidates:
                raise CompileError(f"{op.where}: no provider: no kernel map provides kind '{op.kind}' in phase '{phase}'")
            if len(candidates) > 1:
                names = ", ".join(f"{d.data['kernel']} ({d.path})" for d in candidates)
                raise CompileError(f"{op.where}: two or more providers for kind '{op.kind}' in phase '{phase}': {names}")
            _check_slots(op, candidates[0])
            _check_contract(op, candidates[0])
            providers[(op.name, phase)] = candidates[0]
    return Selection(providers)
