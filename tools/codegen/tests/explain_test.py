"""explain.json: the compiler's decisions as data. For the toy decoder: every op lists every
kernel map with exactly one selected and a reason for each rejection; converters carry the
routes they were chosen from; edges join calls and persistent state; and a failed compile
(no layout route, no provider) still describes the graph and names the failing edge or op."""

import os
import shutil

import pytest

from tools.codegen import explain
from tools.codegen.compiler import Trace, compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import TOY, run_pytest

MAPS = os.path.join(TOY, "kernels")


def compile_toy(maps_dir=MAPS):
    return compile_circuit(f"{TOY}/toy_decoder.json", [maps_dir], f"{TOY}/config.json", f"{TOY}/manifest.json", "toy")


def failed_toy(tmp_path, drop: str):
    """The toy compiled without one kernel map: (the CompileError, explain.json of what was done)."""
    maps = tmp_path / "maps"
    shutil.copytree(MAPS, maps)
    os.remove(maps / drop)
    trace = Trace(f"{TOY}/toy_decoder.json")
    with pytest.raises(CompileError) as e:
        compile_circuit(
            f"{TOY}/toy_decoder.json", [str(maps)], f"{TOY}/config.json", f"{TOY}/manifest.json", "toy", trace=trace
        )
    return e.value, explain.describe(trace, e.value)


def test_every_op_lists_every_kernel_map_with_one_selected():
    ex = compile_toy().explain
    kernels = set(ex["kernels"])
    assert len(kernels) == len(os.listdir(MAPS))
    ops = [n for p in ex["phases"] for n in p["nodes"] if n["kind"] == "op"]
    assert ops
    for n in ops:
        cands = ex["candidates"][n["candidates"]]
        assert {c["kernel"] for c in cands} == kernels
        selected = [c["kernel"] for c in cands if c["rejected"] is None]
        assert selected == [n["kernel"]], n["name"]
        assert all(c["rejected"] for c in cands if c["kernel"] != n["kernel"])
    attn = next(n for n in ops if n["name"] == "blocks.0.cross_attn")
    reasons = {c["kernel"]: c["rejected"] for c in ex["candidates"][attn["candidates"]]}
    assert reasons["ckw_f32_layer_norm"] == "provides 'layer_norm', not 'attention'"


def test_converters_carry_their_route():
    ex = compile_toy().explain
    convs = [n for p in ex["phases"] for n in p["nodes"] if n["kind"] == "converter"]
    assert convs
    for n in convs:
        assert n["candidates"] is None
        r = n["route"]
        assert r["routes"][0]["chain"][r["step"]] == n["kernel"]
        assert r["from_layout"] != r["to_layout"] and " -> " in r["edge"]


def test_every_call_is_a_node_and_edges_join_nodes_or_holders():
    result = compile_toy()
    ex = result.explain
    for ir_phase, phase in zip(result.ir["phases"], ex["phases"]):
        assert phase["status"] == "compiled"
        names = [n["name"] for n in phase["nodes"]]
        assert names == [c["node"] for c in ir_phase["calls"]]  # in call order
        assert [n["call"] for n in phase["nodes"]] == list(range(len(names)))
        for e in phase["edges"]:
            assert e["value"] in phase["values"]
            for end in (e["from"], e["to"]):
                assert end in names or end in phase["values"] or end.startswith("output:"), end
    decode = ex["phases"][1]
    reads = {e["to"]: e["from"] for e in decode["edges"] if e["to_port"] == "k"}
    assert reads["blocks.0.cross_attn"] == "state:cross_k[0,0]"
    assert decode["values"]["state:cross_k[0,0]"]["cache"] == "cross_kv"
    assert decode["values"]["state:self_k[1,0]"]["cache"] == "self_kv"
    assert ex["phases"][0]["values"]["external:memory"]["cache"] == "setter"  # encoder memory, set by its setter
    # The cross-K/V cache is read but not written in decode: no converter writes it there.
    assert not [e for e in decode["edges"] if e["to"] == "state:cross_k[0,0]"]


def test_explain_is_deterministic():
    assert compile_toy().files["explain.json"] == compile_toy().files["explain.json"]


def test_no_route_names_the_failing_edge(tmp_path):
    error, ex = failed_toy(tmp_path, "token_to_head_major.json")
    assert "no route" in str(error)
    assert [(p["phase"], p["status"]) for p in ex["phases"]] == [("prefill", "failed"), ("decode", "not reached")]
    edge = ex["error"]["edge"]
    assert edge["phase"] == "prefill"
    failed = next(e for e in ex["phases"][0]["edges"] if e["id"] == edge["id"])
    assert (failed["from"], failed["to"]) == ("blocks.0.k_proj", "state:self_k[0,0]")
    assert ex["error"]["message"] == str(error)
    assert ex["error"]["route"]["routes"] == [] and ex["error"]["route"]["converters"] == []
    # The graph is still drawn from the circuit: every op of the phase is a node.
    assert "blocks.1.cross_attn" in {n["name"] for n in ex["phases"][0]["nodes"]}


def test_no_provider_names_the_op_and_its_candidates(tmp_path):
    error, ex = failed_toy(tmp_path, "attention.json")
    assert "no provider" in str(error)
    err = ex["error"]
    assert err["op"] == "blocks.0.self_attn" and err["phase"] == "prefill" and err["edge"] is None
    assert err["candidates"] and all(c["rejected"] for c in err["candidates"])
    assert ex["phases"][0]["status"] == "failed"
    node = next(n for n in ex["phases"][0]["nodes"] if n["name"] == "blocks.0.self_attn")
    assert node["kernel"] is None
    assert [c["kernel"] for c in ex["candidates"][node["candidates"]]] == [c["kernel"] for c in err["candidates"]]


if __name__ == "__main__":
    run_pytest(__file__)
