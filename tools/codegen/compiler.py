"""The pipeline: load -> graph -> select -> layouts -> shapes -> plan -> lower -> emit.
Each pass takes the previous passes' results and returns new data; none reaches back."""

from dataclasses import dataclass, field

from tools.codegen import emit, explain, layouts, load, lower, plan, shapes
from tools.codegen import graph as graph_pass
from tools.codegen import selection as selection_pass
from tools.codegen.errors import CompileError


@dataclass
class Result:
    ir: dict | None
    plans: list[dict]
    files: dict[str, str]
    explain: dict


@dataclass
class Trace:
    """What the passes produced, recorded as each one finishes: after a CompileError it holds
    everything up to the failing pass, so a tool can still draw the compile (explain.describe)."""

    circuit_path: str
    kernel_maps: list = field(default_factory=list)
    graph: graph_pass.Graph | None = None
    selection: selection_pass.Selection | None = None
    phases: dict[str, layouts.PhaseGraph] = field(default_factory=dict)
    plans: dict[str, plan.PhasePlan] = field(default_factory=dict)


def compile_circuit(
    circuit_path: str,
    kernel_map_paths: list[str],
    config_path: str,
    manifest_path: str | None,
    variant: str,
    check_only: bool = False,
    libraries: list[str] | None = None,
    trace: Trace | None = None,
) -> Result:
    trace = trace or Trace(circuit_path)
    circuit = load.load_circuit(circuit_path)
    kernel_maps = trace.kernel_maps = load.load_kernel_maps(load.find_kernel_maps(kernel_map_paths))
    config = load.load_config(config_path)
    manifest = load.load_manifest(manifest_path) if manifest_path else None

    g = graph_pass.build(circuit, config)
    g = trace.graph = graph_pass.with_state_dtypes(g, load.state_dtypes(manifest)) if manifest else g
    dtypes = load.weight_dtypes(manifest) if manifest else None
    precision = load.build_precision(manifest) if manifest else None
    selection = trace.selection = selection_pass.select(g, kernel_maps, dtypes, precision)
    regions = plan.state_regions(g)
    prefix = f"ckw_{variant}_{g.part}"
    weights = lower.Weights(manifest.data if manifest else None, manifest.path if manifest else "")
    phases, plans = [], []
    for phase in g.phases:
        try:
            pg = trace.phases[phase] = layouts.join(g, selection, kernel_maps, phase)
            env = shapes.bind(g, pg)
            pp = plan.plan_phase(g, pg)
            plans.append(plan.plan_json(g, pp, regions))
            if not check_only:
                phases.append(lower.lower_phase(g, pg, pp, regions, weights, env, prefix))
            trace.plans[phase] = pp
        except CompileError as e:
            e.context.setdefault("phase", phase)
            raise
    if check_only:
        return Result(None, plans, {}, explain.describe(trace))
    ir = lower.lower(g, phases, regions, weights, prefix, plan.state_bytes(regions))
    if libraries is not None:
        missing = [lib for lib in ir["libraries"] if lib not in libraries]
        if missing:
            raise CompileError(
                f"{circuit_path}: selected kernels need {', '.join(missing)}, which the build does not link; "
                "register them (kernels/kernel.bzl) or add them to the rule's kernels"
            )
    files = emit.render(ir)
    described = explain.describe(trace)
    files["explain.json"] = emit.dumps(described)
    return Result(ir, plans, files, described)
