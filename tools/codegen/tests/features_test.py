"""Circuit features the beam decoder and word timestamps use, on tiny circuits: a repeat's
`phases` as its ops' default, in-place state updates through a kernel's `may_alias` pair, and
optional outputs stacked over a repeat (slices of the caller's buffer; calls that only serve the
output are skipped when it is NULL), an op's int attr given per phase as an expression over
the phase's runtime scalars (the decoder's rows_alone: 1 where each sequence runs one token), and
element ranges of integer arguments checked before any kernel runs (positions, block tables)."""

import json

import pytest

from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import circuit, kmap, port, run_pytest, unary, write_case

SCALE = unary("ckw_scale", "scale")
SUM = kmap("ckw_sum", "sum", {"x": port("input", ["M", "N"]), "y": port("output", ["M", "N"])}, ["M", "N"])
UPDATE = dict(
    kmap(
        "ckw_update",
        "update",
        {"src": port("input", ["M", "N"], "row_major"), "dst": port("output", ["M", "N"], "row_major")},
        ["M", "N"],
    ),
    may_alias=[["dst", "src"]],
)
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
    ops = [
        {
            "repeat": "blocks",
            "count": 2,
            "index": "i",
            "phases": ["run"],
            "ops": [{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}, "stores": {"y": "state:s"}}],
        }
    ]
    maps = [dict(STORE, provides="scale")]
    result = compile_case(tmp_path, two_phases(ops), maps)
    assert calls(result, "run") == ["blocks.0.a", "blocks.1.a"] and calls(result, "other") == []


def test_an_op_may_not_run_outside_its_repeats_phases(tmp_path):
    ops = [
        {
            "repeat": "blocks",
            "count": 2,
            "index": "i",
            "phases": ["run"],
            "ops": [{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}, "phases": ["other"]}],
        }
    ]
    with pytest.raises(CompileError, match=r"blocks\.0\.a\): /phases: other not among its repeat's phases"):
        compile_case(tmp_path, two_phases(ops), [SCALE], check_only=True)


def test_in_place_update_through_may_alias(tmp_path):
    ops = [
        {
            "repeat": "blocks",
            "count": 2,
            "index": "i",
            "phases": ["other"],
            "ops": [{"name": "u", "kind": "update", "inputs": {"src": "state:s"}, "stores": {"dst": "state:s"}}],
        }
    ]
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
    ops = [
        {
            "repeat": "blocks",
            "count": 3,
            "index": "i",
            "carry": {"h": {"init": "external:x", "next": "op:a.y"}},
            "ops": [
                {"name": "a", "kind": "scale", "inputs": {"x": "external:x"}},
                {"name": "b", "kind": "sum", "inputs": {"x": "op:a.y"}},
            ],
        },
        {"name": "c", "kind": "scale", "inputs": {"x": "op:blocks.h" if also_used else "external:x"}},
    ]
    outputs = {
        "stack": {
            "from": "op:b.y",
            "stack": "blocks",
            "dtype": "f32",
            "shape": [3, "T", "D"],
            "layout": "token_major",
            "phases": ["run"],
            "optional": optional,
        },
        "y": {"from": "op:c.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major", "phases": ["run"]},
    }
    return circuit(ops, outputs)


def test_optional_stacked_output_is_sliced_and_skipped_when_null(tmp_path):
    result = compile_case(tmp_path, stacked_case(), [SCALE, SUM])
    (phase,) = result.ir["phases"]
    by_node = {c["node"]: c for c in phase["calls"]}
    assert {n: c["optional"] for n, c in by_node.items()} == {
        "blocks.0.a": "stack",
        "blocks.0.b": "stack",
        "blocks.1.a": "stack",
        "blocks.1.b": "stack",
        "blocks.2.a": "stack",
        "blocks.2.b": "stack",
        "c": "",
    }
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
    m["parallel"] = [
        {"split": "M", "when": "alone == 0", "grain": 1, "chunk": {"y": "start * N", "x": "start * N", "M": "count"}},
        {"split": "N", "grain": 1, "chunk": {"y": "start", "x": "start", "N": "count"}},
    ]
    outputs = {
        "y": {"from": "op:a.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major", "phases": ["run", "step"]}
    }
    data = circuit(
        [{"name": "a", "kind": "scale", "inputs": {"x": "external:x"}, "attrs": {"alone": "single"}}], outputs
    )
    data["runtime"] = {"single": {"doc": "1 where every row runs alone"}}
    data["phases"] = {"run": {"runtime": {"single": {"value": 0}}}, "step": {"runtime": {"single": step_binding}}}
    return data, [m]


def test_an_attr_expression_takes_each_phases_value(tmp_path):
    data, maps = alone_case({"value": 1})
    result = compile_case(tmp_path, data, maps)
    by_phase = {p["phase"]: p["calls"][0] for p in result.ir["phases"]}
    assert {ph: next(a["c"] for a in c["args"] if a["arg"] == "alone") for ph, c in by_phase.items()} == {
        "run": "0",
        "step": "1",
    }
    # The split's `when` sees the attr: rows may be split where alone == 0 only.
    assert [s["split"] for s in by_phase["run"]["parallel"]["splits"]] == ["M"]
    assert [s["split"] for s in by_phase["step"]["parallel"]["splits"]] == ["N"]


def test_an_attr_expression_must_be_a_constant_in_every_phase(tmp_path):
    data, maps = alone_case({"arg": True, "min": 0, "max": 1})
    with pytest.raises(
        CompileError,
        match=r"\(a\): kernel ckw_scale .*attr alone = 'single' is single in phase "
        r"'step', not a constant",
    ):
        compile_case(tmp_path, data, maps)


def test_an_attr_expression_outside_the_kernels_values_is_refused(tmp_path):
    data, maps = alone_case({"value": 2})
    with pytest.raises(CompileError, match=r"attr alone = 2, the kernel accepts \[0, 1\]"):
        compile_case(tmp_path, data, maps)


def range_case(rng, dtype="i32"):
    """y = gather(x, index) with `index` [n] an argument (phase run, n from the caller) or one
    value (phase one, by_value), its elements declared within `rng`."""
    m = kmap(
        "ckw_gather",
        "gather",
        {"x": port("input", ["M", "N"]), "index": port("input", ["B"], "vector"), "y": port("output", ["B", "N"])},
        ["M", "N", "B"],
    )
    m["ports"]["index"]["dtype"] = "i32"
    m["abi"][1]["ctype"] = "const int32_t *"
    externals = {
        "x": {"role": "input", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major"},
        "index": {"role": "input", "dtype": dtype, "shape": ["n"], "layout": "vector", "range": rng},
    }
    outputs = {
        "y": {"from": "op:g.y", "dtype": "f32", "shape": ["n", "D"], "layout": "token_major", "phases": ["run", "one"]}
    }
    data = circuit(
        [{"name": "g", "kind": "gather", "inputs": {"x": "external:x", "index": "external:index"}}], outputs, externals
    )
    data["runtime"] = {"n": {"doc": "rows gathered"}}
    data["phases"] = {
        "run": {"runtime": {"n": {"arg": True, "min": 1, "max": "T"}}},
        "one": {"runtime": {"n": {"value": 1}}, "by_value": ["index"]},
    }
    return data, [m]


def test_an_arguments_elements_are_checked_against_its_range(tmp_path):
    data, maps = range_case({"min": 0, "max": "T - n", "error": "CONTEXT_FULL"})
    result = compile_case(tmp_path, data, maps)
    c_text = result.files["ckw_t_p.c"]
    # After the check of n that sizes the loop, before the first kernel call.
    run = c_text[c_text.index("static int ckw_t_p_run__in_call") : c_text.index("ckw_gather(")]
    assert run.index("if (n < 1 || n > 4)") < run.index(
        "  for (int64_t i = 0; i < (n); ++i)\n    if (index[i] < 0 || index[i] > 4 - n) return CKW_T_P_E_CONTEXT_FULL;"
    )
    assert "if (index < 0 || index > 3) return CKW_T_P_E_CONTEXT_FULL;" in c_text  # by value: n is 1
    docs = {p["phase"]: next(q["doc"] for q in p["params"] if q["name"] == "index") for p in result.ir["phases"]}
    assert docs == {"run": "(each in [0, 4 - n], else E_CONTEXT_FULL)", "one": "(each in [0, 3], else E_CONTEXT_FULL)"}


def test_a_range_needs_an_integer_argument_and_a_known_error(tmp_path):
    data, maps = range_case({"min": 0, "max": 3}, dtype="f32")
    with pytest.raises(CompileError, match=r"/externals/index/range: 'index' is f32; a range needs an integer dtype"):
        compile_case(tmp_path, data, maps, check_only=True)
    data, maps = range_case({"min": 0, "max": 3, "error": "OOPS"})
    with pytest.raises(
        CompileError,
        match=r"/externals/index/range/error: 'OOPS' is not an error code \(one of "
        r"ARGUMENT, IO, ",
    ):
        compile_case(tmp_path, data, maps, check_only=True)


def entries_case(populate_by_value=True):
    """A projection cache per entry: `fill` projects memory into state c (guarded) for the entry
    `e` names (one value), `step` reads c for each row's entry (a vector of n)."""
    gather = kmap(
        "ckw_gather",
        "gather",
        {"x": port("input", ["M", "N"]), "index": port("input", ["B"], "vector"), "y": port("output", ["B", "N"])},
        ["M", "N", "B"],
    )
    store = kmap(
        "ckw_put",
        "put",
        {"x": port("input", ["K", "N"]), "index": port("input", ["B"], "vector"), "y": port("output", ["M", "N"])},
        ["M", "N", "B", "K"],
    )
    for m in (gather, store):
        m["ports"]["index"]["dtype"] = "i32"
        m["abi"][1]["ctype"] = "const int32_t *"
    externals = {
        "memory": {"role": "input", "binding": "setter", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major"},
        "e": {"role": "input", "dtype": "i32", "shape": ["n"], "layout": "vector"},
    }
    ops = [
        {"name": "proj", "kind": "scale", "inputs": {"x": "external:memory"}, "phases": ["fill"]},
        {
            "name": "put",
            "kind": "put",
            "inputs": {"x": "op:proj.y", "index": "external:e"},
            "stores": {"y": "state:c"},
            "phases": ["fill"],
        },
        {"name": "read", "kind": "gather", "inputs": {"x": "state:c", "index": "external:e"}, "phases": ["step"]},
    ]
    outputs = {
        "y": {"from": "op:read.y", "dtype": "f32", "shape": ["n", "D"], "layout": "token_major", "phases": ["step"]}
    }
    data = circuit(ops, outputs, externals)
    data["dims"]["E"] = 3
    data["state"] = {
        "c": {
            "dtype": "f32",
            "shape": ["E", "D"],
            "layout": "token_major",
            "instances": {"layer": 1},
            "cache": "cross_kv",
        }
    }
    data["runtime"] = {"n": {"doc": "rows"}}
    data["phases"] = {
        "fill": {"runtime": {"n": {"value": 1}}},
        "step": {"runtime": {"n": {"arg": True, "min": 1, "max": "T"}}},
    }
    if populate_by_value:
        data["phases"]["fill"]["by_value"] = ["e"]
    data["cross_attention"] = {
        "causal": False,
        "query_source": "q",
        "key_value_source": "memory",
        "kv_layout": "x",
        "projection_cache": {
            "populate_phase": "fill",
            "reuse_phase": "step",
            "invalidation": "memory_update",
            "storage": "x",
            "entries": {"count": "E", "index": "e"},
        },
    }
    return data, [SCALE, gather, store]


def test_a_projection_cache_per_entry(tmp_path):
    data, maps = entries_case()
    result = compile_case(tmp_path, data, maps)
    c = result.files["ckw_t_p.c"]
    assert "  uint8_t cross_kv_valid[3];" in c and "  int64_t memory_entry;" in c
    setter = c[
        c.index("static int ckw_t_p_set_memory__in_call(ckw_t_p_handle *h, int64_t entry, const float *memory)") :
    ]
    setter = setter[: setter.index("\n}\n")]
    assert "if (entry < 0 || entry >= 3) return CKW_T_P_E_ARGUMENT;" in setter
    assert "h->memory_entry = entry;" in setter and "h->cross_kv_valid[entry] = 0;" in setter
    assert "cross_kv_valid = 0" not in setter.replace("cross_kv_valid[entry] = 0", "")
    fill = c[c.index("static int ckw_t_p_fill__in_call") :]
    fill = fill[: fill.index("\n}\n")]
    assert "if (e < 0 || e >= 3) return CKW_T_P_E_ARGUMENT;" in fill
    assert "if (!h->has_memory) return" not in fill  # asked for only when the entry must be projected
    guard = fill[fill.index("if (!h->cross_kv_valid[e]) {") :]
    assert (
        guard.index("if (!h->has_memory || h->memory_entry != e) return CKW_T_P_E_MISSING_INPUT;")
        < guard.index("ckw_scale(")
        < guard.index("ckw_put(")
        < guard.index("h->cross_kv_valid[e] = 1;")
    )
    step = c[c.index("static int ckw_t_p_step__in_call") :]
    step = step[: step.index("ckw_gather(")]
    assert "    if (e[i] < 0 || e[i] >= 3) return CKW_T_P_E_ARGUMENT;" in step
    assert "    if (!h->cross_kv_valid[e[i]]) return CKW_T_P_E_CROSS_KV_INVALID;" in step
    assert "if (!h->cross_kv_valid) return" not in step
    assert "API int ckw_t_p_cross_kv_invalidate(ckw_t_p_handle *h, int64_t entry)" in c
    fns = {f["name"]: f for f in json.loads(result.files["abi.json"])["functions"]}
    assert [q["name"] for q in fns["ckw_t_p_set_memory"]["params"]] == ["h", "entry", "memory"]
    assert "ckw_t_p_cross_kv_invalidate" in fns


def test_an_entry_index_is_one_value_in_the_populate_phase(tmp_path):
    data, maps = entries_case(populate_by_value=False)
    with pytest.raises(
        CompileError,
        match=r"/cross_attention/projection_cache/entries/index: 'e' must be in "
        r"/phases/fill/by_value",
    ):
        compile_case(tmp_path, data, maps, check_only=True)


if __name__ == "__main__":
    run_pytest(__file__)
