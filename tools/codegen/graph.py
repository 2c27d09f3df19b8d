"""Pass 2: the circuit as a flat graph of ops joined by edges, with every dim resolved.

Repeat groups are unrolled (`blocks.3.q_proj`), carries become ordinary edges, and each
edge is checked to name something that exists and is defined before it is used.
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from tools.codegen import abi, expr
from tools.codegen.errors import CompileError
from tools.codegen.load import Document


@dataclass(frozen=True)
class Ref:
    """An edge source: an op's output port, an external input, or a state instance."""

    kind: str  # "op" | "external" | "state"
    name: str
    port: str = ""
    instance: Tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.kind == "op":
            return f"{self.name}:{self.port}"
        if self.kind == "state" and self.instance:
            return f"state:{self.name}[{','.join(map(str, self.instance))}]"
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class Weight:
    tensor: str
    shape: Tuple


def with_companions(weights: Dict[str, Weight], ports: Dict[str, dict]) -> Dict[str, Weight]:
    """`weights` plus the tensors a kernel reads beside them (a port's `companion`: e.g. an int8
    weight's per-output-channel scales, the tensor named `<weight's tensor><suffix>`, its shape the
    weight's `axes`), unless the op binds that port itself."""
    out = dict(weights)
    for port, spec in sorted(ports.items()):
        c = spec.get("companion")
        if c and port not in out and c["of"] in weights:
            base = weights[c["of"]]
            out[port] = Weight(base.tensor + c["suffix"], tuple(base.shape[i] for i in c["axes"]))
    return out


@dataclass
class Op:
    name: str
    kind: str
    where: str  # "<file>: <json pointer> (<name>)" for diagnostics
    inputs: Dict[str, Ref]
    weights: Dict[str, Weight]
    stores: Dict[str, Ref]
    attrs: Dict
    dims: Dict[str, object]
    phases: Tuple[str, ...]
    contract: Optional[dict] = None
    exports: Dict[str, str] = field(default_factory=dict)


@dataclass
class State:
    name: str
    dtype: str
    shape: Tuple
    layout: str
    instances: Tuple[Tuple[str, int], ...]
    window: Optional[dict]
    cache: Optional[str]


@dataclass
class Graph:
    path: str
    circuit: str
    part: str
    dims: Dict[str, int]
    runtime: Tuple[str, ...]
    phases: Dict[str, dict]
    sequence: Optional[dict]
    externals: Dict[str, dict]
    states: Dict[str, State]
    outputs: Dict[str, dict]
    cross_attention: Optional[dict]
    ops: List[Op] = field(default_factory=list)

    def op(self, name: str) -> Op:
        return next(o for o in self.ops if o.name == name)


def _resolve_dims(doc: Document, config: dict) -> Dict[str, int]:
    env: Dict[str, int] = {k: v for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool)}
    dims: Dict[str, int] = {}
    for name, text in doc.data["dims"].items():
        value = expr.evaluate(text, env, f"{doc.path}: /dims/{name}")
        if not isinstance(value, int) or value <= 0:
            raise CompileError(f"{doc.path}: /dims/{name}: geometry: '{text}' = {value}, expected a positive size")
        env[name] = value
        dims[name] = value
    for i, c in enumerate(doc.data.get("constraints", [])):
        if expr.check(c["check"], env, f"{doc.path}: /constraints/{i}") is False:
            values = ", ".join(f"{n}={env[n]}" for n in sorted(env) if n in c["check"])
            raise CompileError(f"{doc.path}: /constraints/{i}: geometry: {c['check']} is false ({values}): {c['why']}")
    return env


class _Unroller:
    """Flattens the op list; scopes map a local op name to its unrolled name."""

    def __init__(self, doc: Document, dims: Dict[str, int]):
        self.doc = doc
        self.dims = dims
        self.data = doc.data
        self.ops: List[Op] = []
        self.defined: Dict[str, Op] = {}
        self.group_results: Dict[str, Dict[str, Ref]] = {}
        self.repeat_counts: Dict[str, int] = {}

    def ref(self, text: str, where: str, scope: Dict[str, str], carries: Dict[str, Ref], index: Optional[int]) -> Ref:
        kind, _, rest = text.partition(":")
        if kind == "external":
            if rest not in self.data["externals"]:
                raise CompileError(f"{where}: dangling edge '{text}': no external '{rest}' is declared")
            return Ref("external", rest)
        if kind == "state":
            states = self.data.get("state", {})
            if rest not in states:
                raise CompileError(f"{where}: dangling edge '{text}': no state '{rest}' is declared")
            n = len(states[rest]["instances"])
            instance = tuple(
                ([index] if index is not None and n else []) + [0] * (n - (1 if index is not None and n else 0))
            )
            return Ref("state", rest, instance=instance)
        if kind == "carry":
            if rest not in carries:
                raise CompileError(f"{where}: dangling edge '{text}': no carry '{rest}' in this repeat")
            return carries[rest]
        name, _, port = rest.partition(".")
        if name in self.group_results:
            if port not in self.group_results[name]:
                raise CompileError(f"{where}: dangling edge '{text}': repeat '{name}' has no carry '{port}'")
            return self.group_results[name][port]
        flat = scope.get(name, name)
        if flat not in self.defined:
            raise CompileError(f"{where}: dangling edge '{text}': no op '{name}' is defined before this one")
        return Ref("op", flat, port)

    def phases(self, item: dict, where: str, default: Optional[Tuple[str, ...]]) -> Tuple[str, ...]:
        """An op's (or repeat's) phases: its own, else its repeat's, else every phase."""
        phases = tuple(item.get("phases", default or list(self.data["phases"])))
        for ph in phases:
            if ph not in self.data["phases"]:
                raise CompileError(
                    f"{where}: /phases: unknown phase '{ph}' (declared: {', '.join(self.data['phases'])})"
                )
        if default and not set(phases) <= set(default):
            raise CompileError(
                f"{where}: /phases: {', '.join(p for p in phases if p not in default)} not among its repeat's phases"
            )
        return phases

    def run(
        self,
        items: list,
        pointer: str,
        scope: Dict[str, str],
        carries: Dict[str, Ref],
        index_name: Optional[str],
        index: Optional[int],
        prefix: str,
        default_phases: Optional[Tuple[str, ...]] = None,
    ) -> None:
        for i, item in enumerate(items):
            where_ptr = f"{pointer}/{i}"
            if "repeat" in item:
                self.repeat(item, where_ptr, scope, carries, index, default_phases)
                continue
            flat = prefix + item["name"]
            where = f"{self.doc.path}: {where_ptr} ({flat})"
            if flat in self.defined:
                raise CompileError(f"{where}: op name is already used")
            inputs = {
                p: self.ref(r, f"{where}: /inputs/{p}", scope, carries, index)
                for p, r in sorted(item["inputs"].items())
            }
            weights = {}
            for p, w in sorted(item.get("weights", {}).items()):
                tensor = w["tensor"].replace("{" + index_name + "}", str(index)) if index_name else w["tensor"]
                weights[p] = Weight(tensor, tuple(w["shape"]))
            stores = {
                p: self.ref(s, f"{where}: /stores/{p}", scope, carries, index)
                for p, s in sorted(item.get("stores", {}).items())
            }
            phases = self.phases(item, where, default_phases)
            op = Op(
                flat,
                item["kind"],
                where,
                inputs,
                weights,
                stores,
                dict(item.get("attrs", {})),
                dict(item.get("dims", {})),
                phases,
                item.get("contract"),
                dict(item.get("exports", {})),
            )
            self.ops.append(op)
            self.defined[flat] = op
            scope[item["name"]] = flat

    def repeat(
        self,
        group: dict,
        pointer: str,
        outer_scope: Dict[str, str],
        outer_carries: Dict[str, Ref],
        outer_index: Optional[int],
        outer_phases: Optional[Tuple[str, ...]] = None,
    ) -> None:
        name = group["repeat"]
        where = f"{self.doc.path}: {pointer} ({name})"
        phases = self.phases(group, where, outer_phases)
        count = expr.evaluate(group["count"], self.dims, f"{where}: /count")
        if not isinstance(count, int) or count <= 0:
            raise CompileError(f"{where}: /count: expected a positive count, got {count}")
        carry_specs = group.get("carry", {})
        current = {
            c: self.ref(s["init"], f"{where}: /carry/{c}/init", outer_scope, outer_carries, outer_index)
            for c, s in sorted(carry_specs.items())
        }
        for i in range(count):
            scope = dict(outer_scope)
            self.run(group["ops"], f"{pointer}/ops", scope, current, group["index"], i, f"{name}.{i}.", phases)
            current = {
                c: self.ref(s["next"], f"{where}: /carry/{c}/next", scope, current, i)
                for c, s in sorted(carry_specs.items())
            }
        self.group_results[name] = current
        self.repeat_counts[name] = count


def with_state_dtypes(graph: Graph, dtypes: Dict[str, str]) -> Graph:
    """`graph` with the states a build stores narrower (load.state_dtypes) in that dtype. One
    checkpoint serves several circuits (encoder, decoders), so a name this circuit lacks is not
    an error here: the build's tests check which kernels each circuit runs."""
    states = {n: dataclasses.replace(s, dtype=dtypes.get(n, s.dtype)) for n, s in graph.states.items()}
    return dataclasses.replace(graph, states=states)


def build(doc: Document, config: Document) -> Graph:
    data = doc.data
    dims = _resolve_dims(doc, config.data)
    states = {}
    for name, s in sorted(data.get("state", {}).items()):
        where = f"{doc.path}: /state/{name}"
        instances = tuple((k, expr.evaluate(v, dims, f"{where}/instances/{k}")) for k, v in s["instances"].items())
        states[name] = State(
            name, s["dtype"], tuple(s["shape"]), s["layout"], instances, s.get("window"), s.get("cache")
        )
    unroller = _Unroller(doc, dims)
    unroller.run(data["ops"], "/ops", {}, {}, None, None, "")
    outputs = {}
    for name, out in sorted(data["outputs"].items()):
        where = f"{doc.path}: /outputs/{name}"
        if "stack" not in out:
            outputs[name] = dict(out, ref=unroller.ref(out["from"], f"{where}/from", {}, {}, None), stacked=[])
            continue
        # One slice per iteration of a repeat: `from` names an op inside it, unrolled as <stack>.<i>.<op>.
        stack = out["stack"]
        if stack not in unroller.repeat_counts:
            raise CompileError(
                f"{where}/stack: no repeat named '{stack}' (repeats: {', '.join(sorted(unroller.repeat_counts))})"
            )
        kind, _, rest = out["from"].partition(":")
        op, _, port = rest.partition(".")
        refs = [Ref("op", f"{stack}.{i}.{op}", port) for i in range(unroller.repeat_counts[stack])]
        if kind != "op" or any(r.name not in unroller.defined for r in refs):
            raise CompileError(f"{where}/from: '{out['from']}' is not an op port inside repeat '{stack}'")
        outputs[name] = dict(out, ref=refs[0], stacked=refs)
    for name, ext in data["externals"].items():
        for ph in ext.get("phases", []):
            if ph not in data["phases"]:
                raise CompileError(f"{doc.path}: /externals/{name}/phases: unknown phase '{ph}'")
        _check_range(doc.path, name, ext)
    cross = data.get("cross_attention")
    if cross:
        pc = cross["projection_cache"]
        for key in ("populate_phase", "reuse_phase"):
            if pc[key] not in data["phases"]:
                raise CompileError(f"{doc.path}: /cross_attention/projection_cache/{key}: unknown phase '{pc[key]}'")
        src = cross["key_value_source"]
        if data["externals"].get(src, {}).get("binding") != "setter":
            raise CompileError(
                f"{doc.path}: /cross_attention/key_value_source: '{src}' must be an external with binding 'setter'"
            )
        if "entries" in pc:
            _check_entries(doc.path, pc, dims, data)
    return Graph(
        doc.path,
        data["circuit"],
        data["part"],
        dims,
        tuple(sorted(data.get("runtime", {}))),
        data["phases"],
        data.get("sequence"),
        data["externals"],
        states,
        outputs,
        cross,
        unroller.ops,
    )


INTEGER_DTYPES = ("i64", "i32", "i16", "u8", "i8")


def _check_range(path: str, name: str, ext: dict) -> None:
    """An element range is checked by the entry point on the caller's array, so it needs an
    integer argument and an error code the ABI has."""
    rng = ext.get("range")
    if rng is None:
        return
    where = f"{path}: /externals/{name}/range"
    if ext["dtype"] not in INTEGER_DTYPES:
        raise CompileError(
            f"{where}: '{name}' is {ext['dtype']}; a range needs an integer dtype ({', '.join(INTEGER_DTYPES)})"
        )
    if ext.get("binding", "argument") != "argument":
        raise CompileError(
            f"{where}: '{name}' has binding '{ext['binding']}'; a range is checked on entry-point arguments only"
        )
    codes = [n[2:] for n, _, _ in abi.ERRORS if n.startswith("E_")]
    if rng.get("error", "ARGUMENT") not in codes:
        raise CompileError(f"{where}/error: '{rng['error']}' is not an error code (one of {', '.join(codes)})")


def _check_entries(path: str, pc: dict, dims: dict, data: dict) -> None:
    """Per-entry projection caches: a positive constant count, and an index that is an integer
    argument passed by value in the populate phase (one entry per call) and as a vector (each
    row's entry) in the reuse phase."""
    where = f"{path}: /cross_attention/projection_cache/entries"
    count = expr.evaluate(pc["entries"]["count"], dims, f"{where}/count")
    if not isinstance(count, int) or count < 1:
        raise CompileError(
            f"{where}/count: '{pc['entries']['count']}' must be a constant >= 1, not {expr.c_text(count)}"
        )
    name = pc["entries"]["index"]
    ext = data["externals"].get(name)
    if ext is None or ext["dtype"] not in INTEGER_DTYPES or ext.get("binding", "argument") != "argument":
        raise CompileError(f"{where}/index: '{name}' must be an integer external with binding 'argument'")
    populate, reuse = pc["populate_phase"], pc["reuse_phase"]
    if name not in data["phases"][populate].get("by_value", []):
        raise CompileError(
            f"{where}/index: '{name}' must be in /phases/{populate}/by_value: a {populate} fills one entry"
        )
    if name in data["phases"][reuse].get("by_value", []):
        raise CompileError(f"{where}/index: '{name}' must not be by value in {reuse}: each row names its own entry")
