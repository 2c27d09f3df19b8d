"""What a page is made from: a library's compiler outputs (explain.json, ir.json,
plan_<phase>.json), either read from the directory the build wrote them to, or produced by
running the compiler here (so a compile that fails still yields its partial explain data and
the error)."""

import json
import os
from dataclasses import dataclass

from tools.codegen import explain, plan
from tools.codegen.compiler import Trace, compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.explorer.errors import ExploreError


@dataclass
class Library:
    explain: dict
    ir: dict | None  # None when the compile failed
    plans: dict[str, dict]  # phase -> plan JSON (phases that got that far)
    origin: str  # where it came from, shown on the page


def read_json(path: str, what: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise ExploreError(f"{path}: not found: {what}") from None
    except OSError as e:
        raise ExploreError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ExploreError(f"{path}:{e.lineno}:{e.colno}: invalid JSON ({e.msg}): {what}") from None


def from_outputs(directory: str) -> Library:
    """A library the build compiled: the directory holding its explain.json, ir.json and plans."""
    rebuild = "point --outputs at a compiler output directory (e.g. bazel-bin/models/whisper/tiny_decoder_c)"
    if not os.path.isdir(directory):
        raise ExploreError(f"--outputs {directory}: not a directory: {rebuild}")
    ex = read_json(os.path.join(directory, "explain.json"), f"the compiler writes it with ir.json; {rebuild}")
    if not isinstance(ex, dict) or ex.get("version") != explain.VERSION:
        raise ExploreError(
            f"{os.path.join(directory, 'explain.json')}: "
            f"explain version {ex.get('version') if isinstance(ex, dict) else '?'}, "
            f"this explorer reads version {explain.VERSION}: rebuild the library"
        )
    ir = read_json(os.path.join(directory, "ir.json"), rebuild)
    plans = {p["phase"]: read_json(os.path.join(directory, f"plan_{p['phase']}.json"), rebuild) for p in ex["phases"]}
    return Library(ex, ir, plans, directory)


def from_compile(circuit: str, kernel_maps: list[str], config: str, manifest: str | None, variant: str) -> Library:
    """Runs the compiler; on a CompileError the page shows what it finished and the error."""
    trace = Trace(circuit)
    try:
        result = compile_circuit(circuit, kernel_maps, config, manifest, variant, trace=trace)
    except CompileError as e:
        partial = {p: _plan_json(trace, p) for p in trace.plans}
        return Library(explain.describe(trace, e), None, partial, circuit)
    return Library(result.explain, result.ir, {p["phase"]: p for p in result.plans}, circuit)


def _plan_json(trace: Trace, phase: str) -> dict:
    return plan.plan_json(trace.graph, trace.plans[phase], plan.state_regions(trace.graph))
