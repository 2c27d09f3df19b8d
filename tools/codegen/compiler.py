"""The pipeline: load -> graph -> select -> layouts -> shapes -> plan -> lower -> emit.
Each pass takes the previous passes' results and returns new data; none reaches back."""

from dataclasses import dataclass
from typing import Dict, List, Optional

from tools.codegen.errors import CompileError
from tools.codegen import emit, graph as graph_pass, layouts, load, lower, plan, selection as selection_pass, shapes


@dataclass
class Result:
    ir: Optional[dict]
    plans: List[dict]
    files: Dict[str, str]


def compile_circuit(circuit_path: str, kernel_map_paths: List[str], config_path: str, manifest_path: Optional[str],
                    variant: str, check_only: bool = False, libraries: Optional[List[str]] = None) -> Result:
    circuit = load.load_circuit(circuit_path)
    kernel_maps = load.load_kernel_maps(load.find_kernel_maps(kernel_map_paths))
    config = load.load_config(config_path)
    manifest = load.load_manifest(manifest_path) if manifest_path else None

    g = graph_pass.build(circuit, config)
    selection = selection_pass.select(g, kernel_maps)
    regions = plan.state_regions(g)
    prefix = f"ckw_{variant}_{g.part}"
    weights = lower.Weights(manifest.data if manifest else None, manifest.path if manifest else "")
    phases, plans = [], []
    for phase in g.phases:
        pg = layouts.join(g, selection, kernel_maps, phase)
        env = shapes.bind(g, pg)
        pp = plan.plan_phase(g, pg)
        plans.append(plan.plan_json(g, pp, regions))
        if not check_only:
            phases.append(lower.lower_phase(g, pg, pp, regions, weights, env, prefix))
    if check_only:
        return Result(None, plans, {})
    ir = lower.lower(g, phases, regions, weights, prefix, plan.state_bytes(regions))
    if libraries is not None:
        missing = [lib for lib in ir["libraries"] if lib not in libraries]
        if missing:
            raise CompileError(f"{circuit_path}: selected kernels need {', '.join(missing)}, which the build does not link; register them (kernels/kernel.bzl) or add them to the rule's kernels")
    return Result(ir, plans, emit.render(ir))
