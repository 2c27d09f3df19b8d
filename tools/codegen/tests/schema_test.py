"""Rejections: every malformed circuit or kernel map fails with file, pointer/edge and reason."""

import json

import pytest

from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.tests.toy import circuit, kmap, port, run_pytest, unary, write_case

ADD = kmap("ckw_add", "add", {"x": port("input", ["M", "N"]), "r": port("input", ["M", "N"]),
                              "y": port("output", ["M", "N"])}, ["M", "N"])
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
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "op:b.y"}},
                 {"name": "b", "kind": "relu", "inputs": {"x": "external:x"}}])
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
    c = circuit([{"name": "a", "kind": "relu", "inputs": {"x": "external:x"}}],
                outputs={"y": {"from": "op:a.y", "dtype": "f32", "shape": ["T", "D"], "layout": "token_major",
                               "phases": ["run"]}})
    result = compile_circuit(**write_case(tmp_path, c, [RELU]))
    assert json.dumps(result.plans)


if __name__ == "__main__":
    run_pytest(__file__)
