"""Rejections: every malformed circuit or kernel map fails with file, pointer/edge and reason."""

import json
import os
import shutil

import pytest

from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import TOY, circuit, kmap, port, run_pytest, unary, write_case

ADD = kmap(
    "ckw_add",
    "add",
    {"x": port("input", ["M", "N"]), "r": port("input", ["M", "N"]), "y": port("output", ["M", "N"])},
    ["M", "N"],
)
RELU = unary("ckw_relu", "relu")


def compile_error(tmp_path, circuit_data, maps, config=None) -> str:
    with pytest.raises(CompileError) as e:
        compile_circuit(**write_case(tmp_path, circuit_data, maps, config))
    return str(e.value)


def test_kernel_map_missing_port_field_names_file_and_pointer(tmp_path):
    bad = unary("ckw_relu", "relu")
    del bad["ports"]["x"]["layout"]
    msg = compile_error(tmp_path, circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}]), [bad])
    assert "maps/ckw_relu.json: /ports/x: expected property 'layout'" in msg


def test_circuit_bad_edge_syntax_names_pointer(tmp_path):
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "a.y"}}])
    msg = compile_error(tmp_path, c, [RELU])
    assert "circuit.json: /ops/0/inputs/x: expected a string matching" in msg


def test_missing_port(tmp_path):
    c = circuit([{"name": "a", "kind": "add", "inputs": {"x": "external:x"}}])
    msg = compile_error(tmp_path, c, [ADD])
    assert "/ops/0 (a): kernel ckw_add" in msg and "missing port 'r'" in msg


def test_unknown_slot(tmp_path):
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x", "gate": "external:x"}}])
    msg = compile_error(tmp_path, c, [RELU])
    assert "unknown slot 'gate'" in msg and "the kernel's ports are x, y" in msg


def test_dangling_edge(tmp_path):
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "op:nowhere.y"}}])
    msg = compile_error(tmp_path, c, [RELU])
    assert "/ops/0 (a): /inputs/x: dangling edge 'op:nowhere.y'" in msg


def test_dangling_edge_to_later_op(tmp_path):
    c = circuit(
        [
            {"name": "a", "kind": "relu", "inputs": {"x": "op:b.y"}},
            {"name": "b", "kind": "relu", "inputs": {"x": "external:x"}},
        ]
    )
    assert "no op 'b' is defined before this one" in compile_error(tmp_path, c, [RELU])


def test_two_providers_lists_candidates(tmp_path):
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}])
    msg = compile_error(tmp_path, c, [RELU, unary("ckw_relu_other", "relu")])
    assert "two or more providers for kind 'relu'" in msg
    assert "ckw_relu (" in msg and "ckw_relu_other (" in msg


def test_no_provider(tmp_path):
    c = circuit([{"name": "a", "kind": "softplus", "inputs": {"x": "external:x"}}])
    assert "no provider: no kernel map provides kind 'softplus' in phase 'run'" in compile_error(tmp_path, c, [RELU])


def test_geometry_constraint_is_a_hard_error(tmp_path):
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}])
    c["dims"].update({"H": "h", "Dh": "D // H"})
    c["constraints"] = [{"check": "H * Dh == D", "why": "heads must tile the width"}]
    msg = compile_error(tmp_path, c, [RELU], {"t": 4, "d": 8, "h": 3})
    assert "/constraints/0: geometry: H * Dh == D is false" in msg and "heads must tile" in msg


def test_nonpositive_dim_is_a_hard_error(tmp_path):
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}])
    msg = compile_error(tmp_path, c, [RELU], {"t": 0, "d": 8})
    assert "/dims/T: geometry: 't' = 0, expected a positive size" in msg


def test_valid_case_compiles(tmp_path):
    c = circuit(
        [{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}],
        outputs={
            "y": {"from": "op:a.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major", "phases": ["run"]}
        },
    )
    result = compile_circuit(**write_case(tmp_path, c, [RELU]))
    assert json.dumps(result.plans)


RELU_OUT = {"y": {"from": "op:a.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major", "phases": ["run"]}}
ROWS = {"split": "M", "grain": 2, "chunk": {"y": "start * N", "x": "start * N", "M": "count"}}


def split_relu(*options, contract=None):
    m = unary("ckw_relu", "relu")
    m["parallel"] = list(options)
    if contract:
        m["contract"] = contract
    return m


def relu_circuit():
    return circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}], outputs=RELU_OUT)


def test_split_over_a_reduction_dim_is_refused(tmp_path):
    m = split_relu(
        dict(ROWS, split="N", chunk={"y": "start", "N": "count"}), contract={"kind": "float", "reduction_dim": "N"}
    )
    msg = compile_error(tmp_path, relu_circuit(), [m])
    assert "maps/ckw_relu.json: /parallel/0/split: 'N' is a reduction dim" in msg and "split over outputs only" in msg


def test_split_chunk_names_an_unknown_argument_or_name(tmp_path):
    msg = compile_error(tmp_path, relu_circuit(), [split_relu(dict(ROWS, chunk=dict(ROWS["chunk"], z="start")))])
    assert "/parallel/0/chunk/z: no ABI argument 'z'" in msg
    msg = compile_error(tmp_path, relu_circuit(), [split_relu(dict(ROWS, chunk=dict(ROWS["chunk"], x="start * Q")))])
    assert "/parallel/0/chunk/x: 'Q' in 'start * Q' is neither start, count nor an integer ABI argument" in msg


def test_split_must_move_every_output_and_shrink_the_extent(tmp_path):
    msg = compile_error(tmp_path, relu_circuit(), [split_relu(dict(ROWS, chunk={"x": "start * N", "M": "count"}))])
    assert "/parallel/0/chunk: output y has no chunk offset" in msg
    msg = compile_error(tmp_path, relu_circuit(), [split_relu(dict(ROWS, chunk={"x": "start * N", "y": "start * N"}))])
    assert "/parallel/0/chunk: no argument takes 'count'" in msg


def test_split_kernel_must_return_void(tmp_path):
    m = split_relu(ROWS)
    m["returns"] = "status"
    assert "/parallel: only kernels returning void may be split" in compile_error(tmp_path, relu_circuit(), [m])


def generated_c(tmp_path, maps, config):
    args = write_case(tmp_path, relu_circuit(), maps, config)
    args["check_only"] = False
    result = compile_circuit(**args)
    return result.files["ckw_t_p.c"], result.ir


def test_split_call_runs_on_the_pool_and_short_calls_run_whole(tmp_path):
    never = dict(ROWS, split="N", when="M == 1", chunk={"y": "start", "x": "start", "N": "count"})
    text, ir = generated_c(tmp_path, [split_relu(never, ROWS)], {"t": 8, "d": 4})
    assert "ckw_pool_run(h->base.pool, 8, 2, ckw_relu__chunk1, &args);" in text
    assert [f["function"] for f in ir["split_kernels"][0]["functions"]] == ["ckw_relu__chunk1"]  # chunk0 never applies
    assert "a->y + (start * a->N)" in text and "(int64_t)(count)" in text
    assert ir["threads"] == {"max": 8, "pool": True, "scratch_bytes": 0}
    scratch = kmap("ckw_relu", "relu", unary("ckw_relu", "relu")["ports"], ["M", "N"], scratch="4 * N * 40")
    scratch["parallel"] = [ROWS]
    text, ir = generated_c(tmp_path, [scratch], {"t": 8, "d": 4})  # 640 scratch bytes per thread
    assert ir["threads"]["scratch_bytes"] == 640
    assert (
        "slot == 0 ? a->scratch : (void *)(a->ckw_threads_scratch + (slot - 1) * kLibrary.thread_scratch_bytes)" in text
    )
    text, ir = generated_c(tmp_path, [split_relu(ROWS)], {"t": 3, "d": 4})  # 3 rows < 2 chunks of 2
    assert "ckw_pool_run" not in text and "pthread" not in text and ir["threads"]["pool"] is False


def test_split_too_short_at_run_time_falls_through_to_the_next_option(tmp_path):
    # Rows known only at run time (1..8): the row split needs two chunks of its grain, so fewer
    # rows split over columns; a last option needs no test (one chunk is the whole call).
    c = circuit(
        [{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}],
        outputs={"y": dict(RELU_OUT["y"], shape=["n", "D"])},
        externals={"x": {"role": "input", "dtype": "f32", "shape": ["n", "D"], "layout": "token_major"}},
    )
    c["runtime"] = {"n": {"doc": "rows in this call"}}
    c["phases"] = {"run": {"runtime": {"n": {"arg": True, "min": 1, "max": "T"}}}}
    cols = dict(split="N", grain=2, chunk={"y": "start", "x": "start", "N": "count"})

    def generated(*options):
        args = write_case(tmp_path, c, [split_relu(*options)], {"t": 8, "d": 8})
        args["check_only"] = False
        return compile_circuit(**args).files["ckw_t_p.c"]

    text = generated(ROWS, cols)
    assert (
        "    if (n >= 4)\n      ckw_pool_run(h->base.pool, n, 2, ckw_relu__chunk0, &args);\n"
        "    else\n      ckw_pool_run(h->base.pool, 8, 2, ckw_relu__chunk1, &args);\n"
    ) in text
    text = generated(ROWS)
    assert "ckw_pool_run(h->base.pool, n, 2, ckw_relu__chunk0, &args);" in text and "n >= 4" not in text


def toy_with_contracts(tmp_path, contracts):
    """The toy circuit copied into tmp_path with `contracts` ({top-level op name: contract}) set."""
    shutil.copytree(TOY, tmp_path / "toy")
    path = tmp_path / "toy" / "toy_decoder.json"
    data = json.loads(path.read_text())
    for op in data["ops"]:
        if op.get("name") in contracts:
            op["contract"] = contracts[op["name"]]
    path.write_text(json.dumps(data))
    d = str(tmp_path / "toy")
    return dict(
        circuit_path=str(path),
        kernel_map_paths=[f"{d}/kernels"],
        config_path=f"{d}/config.json",
        manifest_path=None,
        variant="toy",
        check_only=True,
    )


def test_circuit_tolerance_disagreeing_with_the_kernel_map_fails(tmp_path):
    args = toy_with_contracts(tmp_path, {"logits": {"kind": "float", "tolerance_c": 64.0}})
    with pytest.raises(CompileError) as e:
        compile_circuit(**args)
    logits_map = os.path.join(str(tmp_path), "toy", "kernels", "logits.json")
    assert str(e.value) == (
        f"{args['circuit_path']}: /ops/2 (logits): /contract/tolerance_c: the circuit states 64.0 but kernel "
        f"ckw_f32_logits ({logits_map}) states /contract/tolerance_c 4.0: the kernel map is the source of truth; "
        "drop tolerance_c from the circuit or make the two agree"
    )


def test_circuit_contract_kind_disagreeing_with_the_kernel_map_fails(tmp_path):
    args = toy_with_contracts(tmp_path, {"embed": {"kind": "float", "tolerance_c": 1.0}})
    with pytest.raises(CompileError) as e:
        compile_circuit(**args)
    assert "/ops/0 (embed): /contract/kind: the circuit states 'float' but kernel ckw_f32_embed_positions" in str(
        e.value
    )
    assert "embed.json) states /contract/kind 'exact'" in str(e.value)


def test_circuit_tolerance_for_a_map_without_one_fails(tmp_path):
    args = toy_with_contracts(tmp_path, {"embed": {"kind": "exact", "tolerance_c": 0.0}})
    with pytest.raises(
        CompileError,
        match=r"/ops/0 \(embed\): /contract/tolerance_c: the circuit states 0.0 but "
        r"kernel ckw_f32_embed_positions \(.*embed.json\) states /contract/tolerance_c none",
    ):
        compile_circuit(**args)


def test_circuit_contract_agreeing_with_the_kernel_map_compiles(tmp_path):
    args = toy_with_contracts(
        tmp_path, {"logits": {"kind": "float", "reference": "x @ w.T", "tolerance_c": 4}, "embed": {"kind": "exact"}}
    )
    assert compile_circuit(**args).plans


def test_circuit_contract_unknown_field_is_refused(tmp_path):
    args = toy_with_contracts(tmp_path, {"logits": {"kind": "float", "tolerance": 64.0}})
    with pytest.raises(CompileError, match=r"toy_decoder.json: /ops/2/contract: expected only known properties"):
        compile_circuit(**args)


if __name__ == "__main__":
    run_pytest(__file__)
