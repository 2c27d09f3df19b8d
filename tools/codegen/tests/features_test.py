"""Circuit features the beam decoder and word timestamps use, on tiny circuits: a repeat's
`phases` as its ops' default, in-place state updates through a kernel's `may_alias` pair, and
optional outputs stacked over a repeat (slices of the caller's buffer; calls that only serve the
output are skipped when it is NULL), and an op's int attr given per phase as an expression over
the phase's runtime scalars (the decoder's rows_alone: 1 where each sequence runs one token)."""

import pytest

from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import circuit, kmap, port, run_pytest, unary, write_case

SCALE = unary("ckw_scale", "scale")
SUM = kmap("ckw_sum", "sum", {"x": port("input", ["M", "N"]), "y": port("output", ["M", "N"])}, ["M", "N"])
UPDATE = dict(kmap("ckw_update", "update", {"src": port("input", ["M", "N"], "row_major"),
                                            "dst": port("output", ["M", "N"], "row_major")}, ["M", "N"]),
              may_alias=[["dst", "src"]])
STORE = unary("ckw_store", "store", "token_major", "row_major")


def compile_case(tmp_path, data, maps, check_only=False):
    args = write_case(tmp_path, data, maps)
    args["check_only"] = check_only
    return compile_circuit(**args)


def two_phases(ops, outputs=None):
    data = circuit(ops, outputs)
    data["phases"] = {"run": {}, "other": {}}
    data["state"] = {"s": {"dtype": "f32", "shape": ["T", "D"], "layout": "row_major", "instances": {"layer": 2}}}
    return data


def calls(result, phase):
    return [c["node"] for p in result.ir["phases"] if p["phase"] == phase for c in p["calls"]]


def test_repeat_phases_are_its_ops_default(tmp_path):
    ops = [{"repeat": "blocks", "count": 2, "index": "i", "phases": ["run"],
            "ops": [{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}, "stores": {"y": "state:s"}}]}]
    maps = [dict(STORE, provides="scale")]
    result = compile_case(tmp_path, two_phases(ops), maps)
    assert calls(result, "run") == ["blocks.0.a", "blocks.1.a"] and calls(result, "other") == []


def test_an_op_may_not_run_outside_its_repeats_phases(tmp_path):
    ops = [{"repeat": "blocks", "count": 2, "index": "i", "phases": ["run"],
            "ops": [{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}, "phases": ["other"]}]}]
    with pytest.raises(CompileError, match=r"blocks\.0\.a\): /phases: other not among its repeat's phases"):
        compile_case(tmp_path, two_phases(ops), [SCALE], check_only=True)


def test_in_place_update_through_may_alias(tmp_path):
    ops = [{"repeat": "blocks", "count": 2, "index": "i", "phases": ["other"],
            "ops": [{"name": "u", "kind": "update", "inputs": {"src": "state:s"}, "stores": {"dst": "state:s"}}]}]
    result = compile_case(tmp_path, two_phases(ops), [UPDATE])
    (phase,) = [p for p in result.ir["phases"] if p["phase"] == "other"]
    for c in phase["calls"]:
        a = {x["arg"]: x for x in c["args"]}
        assert a["dst"]["source"] == a["src"]["source"] == f"state state:s[{c['node'].split('.')[1]}]"


def test_reading_and_writing_a_state_without_may_alias_is_an_error(tmp_path):
    ops = [{"name": "u", "kind": "update", "inputs": {"src": "state:s"}, "stores": {"dst": "state:s"}}]
    no_alias = {k: v for k, v in UPDATE.items() if k != "may_alias"}
    with pytest.raises(CompileError, match="read before this op writes it.*may_alias"):
        compile_case(tmp_path, two_phases(ops), [no_alias], check_only=True)


def stacked_case(optional=True, also_used=False):
    """y = c(x); stack[i] = b(a(x)) per iteration; with also_used, y = c(the last a) instead."""
    ops = [{"repeat": "blocks", "count": 3, "index": "i", "carry": {"h": {"init": "external:x", "next": "op:a.y"}},
            "ops": [{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}},
                    {"name": "b", "kind": "sum", "inputs": {"x": "op:a.y"}}]},
           {"name": "c", "kind": "scale", "inputs": {"x": "op:blocks.h" if also_used else "external:x"}}]
    outputs = {"stack": {"from": "op:b.y", "stack": "blocks", "dtype": "f32", "shape": [3, "T", "D"],
                         "layout": "token_major", "phases": ["run"], "optional": optional},
               "y": {"from": "op:c.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major", "phases": ["run"]}}
    return circuit(ops, outputs)


def test_optional_stacked_output_is_sliced_and_skipped_when_null(tmp_path):
    result = compile_case(tmp_path, stacked_case(), [SCALE, SUM])
    (phase,) = result.ir["phases"]
    by_node = {c["node"]: c for c in phase["calls"]}
    assert {n: c["optional"] for n, c in by_node.items()} == {
        "blocks.0.a": "stack", "blocks.0.b": "stack", "blocks.1.a": "stack", "blocks.1.b": "stack",
        "blocks.2.a": "stack", "blocks.2.b": "stack", "c": ""}
    ys = [next(a["c"] for a in by_node[f"blocks.{i}.b"]["args"] if a["arg"] == "y") for i in range(3)]
    assert ys == ["(float *)stack", "(float *)(stack + 1 * 4 * 8)", "(float *)(stack + 2 * 4 * 8)"]
    param = next(p for p in phase["params"] if p["name"] == "stack")
    assert param["optional"] and param["doc"].startswith("[3, 4, 8]")
    c_text = result.files["ckw_t_p.c"]
    assert "if (!x || !y) return" in c_text  # NULL is refused for y, allowed for stack
    assert "if (stack) {  // only for the optional output stack" in c_text


def test_a_call_another_output_needs_is_not_skipped(tmp_path):
    result = compile_case(tmp_path, stacked_case(also_used=True), [SCALE, SUM])
    (phase,) = result.ir["phases"]
    optional = {c["node"]: c["optional"] for c in phase["calls"]}
    assert optional["blocks.2.a"] == "" and optional["blocks.1.a"] == "stack" and optional["blocks.2.b"] == "stack"


def test_required_stacked_output_runs_always(tmp_path):
    result = compile_case(tmp_path, stacked_case(optional=False), [SCALE, SUM])
    (phase,) = result.ir["phases"]
    assert all(c["optional"] == "" for c in phase["calls"])


def test_stack_must_name_a_repeat(tmp_path):
    data = stacked_case()
    data["outputs"]["stack"]["stack"] = "nope"
    with pytest.raises(CompileError, match="/outputs/stack/stack: no repeat named 'nope'"):
        compile_case(tmp_path, data, [SCALE, SUM], check_only=True)


def alone_case(step_binding):
    """y = scale(x) with the kernel's int attr `alone` from the runtime scalar `single`: 0 in
    phase run, `step_binding` in phase step; the kernel splits rows only when alone == 0."""
    m = unary("ckw_scale", "scale")
    m["attrs"] = {"alone": {"ctype": "int", "default": 0, "values": [0, 1]}}
    m["abi"].append({"arg": "alone", "ctype": "int", "bind": "attr:alone"})
    m["parallel"] = [{"split": "M", "when": "alone == 0", "grain": 1, "chunk": {"y": "start * N", "x": "start * N",
                                                                              "M": "count"}},
                     {"split": "N", "grain": 1, "chunk": {"y": "start", "x": "start", "N": "count"}}]
    outputs = {"y": {"from": "op:a.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major",
                     "phases": ["run", "step"]}}
    data = circuit([{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}, "attrs": {"alone": "single"}}],
                   outputs)
    data["runtime"] = {"single": {"doc": "1 where every row runs alone"}}
    data["phases"] = {"run": {"runtime": {"single": {"value": 0}}}, "step": {"runtime": {"single": step_binding}}}
    return data, [m]


def test_an_attr_expression_takes_each_phases_value(tmp_path):
    data, maps = alone_case({"value": 1})
    result = compile_case(tmp_path, data, maps)
    by_phase = {p["phase"]: p["calls"][0] for p in result.ir["phases"]}
    assert {ph: next(a["c"] for a in c["args"] if a["arg"] == "alone") for ph, c in by_phase.items()} == \
        {"run": "0", "step": "1"}
    # The split's `when` sees the attr: rows may be split where alone == 0 only.
    assert [s["split"] for s in by_phase["run"]["parallel"]["splits"]] == ["M"]
    assert [s["split"] for s in by_phase["step"]["parallel"]["splits"]] == ["N"]


def test_an_attr_expression_must_be_a_constant_in_every_phase(tmp_path):
    data, maps = alone_case({"arg": True, "min": 0, "max": 1})
    with pytest.raises(CompileError, match=r"\(a\): kernel ckw_scale .*attr alone = 'single' is single in phase "
                                           r"'step', not a constant"):
        compile_case(tmp_path, data, maps)


def test_an_attr_expression_outside_the_kernels_values_is_refused(tmp_path):
    data, maps = alone_case({"value": 2})
    with pytest.raises(CompileError, match=r"attr alone = 2, the kernel accepts \[0, 1\]"):
        compile_case(tmp_path, data, maps)


if __name__ == "__main__":
    run_pytest(__file__)
