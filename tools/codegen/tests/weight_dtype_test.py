"""A weight's dtype comes from the manifest and chooses the kernel: on the toy decoder, an f32
checkpoint selects the f32 maps even when a bf16 map of the same kind is present (and the C does
not change), a bf16 one selects the bf16 map; no candidate, two candidates, an unknown manifest
dtype and a weight whose dtype or size differs from its port's are errors naming what is wrong."""

import json
import os
import shutil

import pytest

from tools.codegen import lower
from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.graph import Weight
from tools.codegen.testing.toy import TOY, run_pytest

MAPS = os.path.join(TOY, "kernels")
BF16_MAPS = os.path.join(TOY, "bf16_kernels")
CIRCUIT = f"{TOY}/toy_decoder.json"
CONFIG = f"{TOY}/config.json"
F32_MANIFEST = f"{TOY}/manifest.json"
# The toy's plain linear weights (kind 'linear'); mlp (linear_gelu) and the embedding stay f32.
BF16_SUFFIXES = (".k.w", ".v.w", ".q.w", ".xk.w", ".xv.w")


def bf16_manifest(tmp_path, dtype="bf16") -> str:
    """The toy manifest with the linear weights as `dtype` (2 bytes each), repacked 64-byte aligned."""
    with open(F32_MANIFEST) as f:
        manifest = json.load(f)
    offset = 0
    for t in manifest["tensors"]:
        if t["name"].endswith(BF16_SUFFIXES):
            t["dtype"], t["nbytes"] = dtype, t["nbytes"] // 2
        t["offset"] = offset = (offset + 63) // 64 * 64
        offset += t["nbytes"]
    manifest["weights_nbytes"] = offset
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    return str(path)


def compile_toy(maps, manifest=F32_MANIFEST, check_only=False):
    return compile_circuit(CIRCUIT, maps, CONFIG, manifest, "toy", check_only=check_only)


def calls(result, node):
    return [c for p in result.ir["phases"] for c in p["calls"] if c["node"] == node]


def test_f32_checkpoint_selects_f32_kernels_and_the_c_is_unchanged():
    alone = compile_toy([MAPS])
    both = compile_toy([MAPS, BF16_MAPS])
    for name in ("ckw_toy_decoder.c", "ckw_toy_decoder.h", "ir.json"):
        assert both.files[name] == alone.files[name], name
    assert {c["kernel"] for c in calls(both, "blocks.0.q_proj")} == {"ckw_f32_gemm_nt_bias"}
    # explain.json records why the bf16 map was turned away
    reasons = [
        c["rejected"]
        for group in both.explain["candidates"]
        for c in group
        if c["kernel"] == "ckw_bf16w_gemm_nt_bias" and c["rejected"] and c["rejected"].startswith("port")
    ]
    assert reasons and all("reads bf16, but weight" in r and "is f32" in r for r in reasons)


def test_bf16_checkpoint_selects_the_bf16_kernel(tmp_path):
    result = compile_toy([MAPS, BF16_MAPS], bf16_manifest(tmp_path))
    q = calls(result, "blocks.0.q_proj")
    assert q and {c["kernel"] for c in q} == {"ckw_bf16w_gemm_nt_bias"}
    w = next(a for a in q[0]["args"] if a["arg"] == "w")
    assert w["ctype"] == "const uint16_t *" and w["c"].startswith("(const uint16_t *)(weights + ")
    # f32 weights of other kinds keep their f32 kernels in the same compile
    assert {c["kernel"] for c in calls(result, "blocks.0.mlp")} == {"ckw_f32_gemm_nt_bias_gelu"}
    assert "(const uint16_t *)(weights + " in result.files["ckw_toy_decoder.c"]
    checked = {c["name"]: c["nbytes"] for c in result.ir["weight_checks"]}
    assert checked["blocks.0.q.w"] == 8 * 8 * 2


def test_bf16_weight_without_a_bf16_kernel_names_op_weight_dtype_and_candidates(tmp_path):
    with pytest.raises(CompileError) as e:
        compile_toy([MAPS], bf16_manifest(tmp_path))
    msg = str(e.value)
    assert "(blocks.0.k_proj)" in msg and "no provider" in msg, msg
    assert "w=blocks.0.k.w (bf16)" in msg and "b=blocks.0.k.b (f32)" in msg, msg
    assert "ckw_f32_gemm_nt_bias (" in msg and "port 'w' reads f32, but weight blocks.0.k.w is bf16" in msg, msg
    assert "\n" not in msg


def test_two_bf16_kernels_for_one_weight_dtype_are_an_error(tmp_path):
    maps = tmp_path / "bf16_maps"
    shutil.copytree(BF16_MAPS, maps)
    other = json.loads((maps / "linear_bf16w.json").read_text())
    other["kernel"] = "ckw_bf16w_gemm_nt_bias_other"
    (maps / "other.json").write_text(json.dumps(other))
    with pytest.raises(CompileError) as e:
        compile_toy([MAPS, str(maps)], bf16_manifest(tmp_path))
    msg = str(e.value)
    assert "two or more providers for kind 'linear'" in msg and "w=blocks.0.k.w (bf16)" in msg, msg
    assert "ckw_bf16w_gemm_nt_bias (" in msg and "ckw_bf16w_gemm_nt_bias_other (" in msg, msg


def test_without_a_manifest_two_dtypes_of_one_kind_cannot_be_chosen():
    with pytest.raises(CompileError) as e:
        compile_toy([MAPS, BF16_MAPS], manifest=None, check_only=True)
    msg = str(e.value)
    assert "two or more providers for kind 'linear'" in msg and "no manifest" in msg and "--manifest" in msg, msg


def test_unknown_manifest_dtype_names_the_file_and_tensor(tmp_path):
    path = bf16_manifest(tmp_path, dtype="f8e4m3")
    with pytest.raises(CompileError) as e:
        compile_toy([MAPS, BF16_MAPS], path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: /tensors/") and "/dtype: tensor blocks.0.k.w has dtype 'f8e4m3'" in msg, msg


def test_lower_refuses_a_weight_whose_dtype_or_size_is_not_the_ports(tmp_path):
    with open(bf16_manifest(tmp_path)) as f:
        manifest = json.load(f)
    weights = lower.Weights(manifest, "m.json")
    w = Weight("blocks.0.q.w", ("d_model", "d_model"))
    env = {"d_model": 8}
    assert weights.resolve(w, env, "here", "bf16") % 64 == 0
    with pytest.raises(
        CompileError,
        match="has dtype bf16 in m.json, but the port reads f32: a weight's dtype must equal the port's dtype",
    ):
        weights.resolve(w, env, "here", "f32")
    t = next(t for t in manifest["tensors"] if t["name"] == "blocks.0.q.w")
    t["nbytes"] = 256
    with pytest.raises(CompileError, match=r"has nbytes 256 in m.json, but \['8', '8'\] bf16 is 128 bytes"):
        lower.Weights(manifest, "m.json").resolve(w, env, "here", "bf16")


if __name__ == "__main__":
    run_pytest(__file__)


def int8_maps_and_manifest(tmp_path, scales=True):
    """An int8 linear map (the bf16 one with w as i8 and a `w_scale` companion port) and the toy
    manifest with the linear weights as i8 (1 byte each) and, with `scales`, their <name>.scale."""
    maps = tmp_path / "i8_maps"
    maps.mkdir()
    m = json.loads(open(os.path.join(BF16_MAPS, "linear_bf16w.json")).read())
    m["kernel"] = "ckw_i8w_gemm_nt_bias"
    m["ports"]["w"]["dtype"] = "i8"
    m["ports"]["w_scale"] = {
        "role": "weight",
        "dtype": "f32",
        "shape": ["N"],
        "layout": "vector",
        "placement": "weights",
        "companion": {"of": "w", "suffix": ".scale", "axes": [0]},
    }
    m["abi"].insert(3, {"arg": "w_scale", "ctype": "const float *", "bind": "port:w_scale"})
    for a in m["abi"]:
        if a["arg"] == "w":
            a["ctype"] = "const int8_t *"
    (maps / "linear_i8w.json").write_text(json.dumps(m))
    with open(F32_MANIFEST) as f:
        manifest = json.load(f)
    tensors = []
    for t in manifest["tensors"]:
        if t["name"].endswith(BF16_SUFFIXES):
            t["dtype"], t["nbytes"] = "i8", t["nbytes"] // 4
            if scales:
                tensors.append(
                    dict(t, name=t["name"] + ".scale", dtype="f32", shape=t["shape"][:1], nbytes=4 * t["shape"][0])
                )
        tensors.append(t)
    offset = 0
    for t in tensors:
        t["offset"] = offset = (offset + 63) // 64 * 64
        offset += t["nbytes"]
    manifest["tensors"], manifest["weights_nbytes"] = tensors, offset
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return str(maps), str(tmp_path / "manifest.json"), {t["name"]: t["offset"] for t in tensors}


def test_a_companion_port_reads_the_tensor_beside_its_weight(tmp_path):
    maps, manifest, offsets = int8_maps_and_manifest(tmp_path)
    result = compile_toy([MAPS, maps], manifest)
    q = calls(result, "blocks.0.q_proj")
    assert q and {c["kernel"] for c in q} == {"ckw_i8w_gemm_nt_bias"}
    args = {a["arg"]: a for a in q[0]["args"]}
    assert args["w"]["c"] == f"(const int8_t *)(weights + {offsets['blocks.0.q.w']})"
    assert args["w_scale"]["c"] == f"(const float *)(weights + {offsets['blocks.0.q.w.scale']})"
    assert args["w_scale"]["source"] == "weight blocks.0.q.w.scale"
    checked = {c["name"]: c["nbytes"] for c in result.ir["weight_checks"]}
    assert checked["blocks.0.q.w"] == 8 * 8 and checked["blocks.0.q.w.scale"] == 8 * 4  # create() checks both


def test_a_missing_companion_tensor_names_it_and_the_manifest(tmp_path):
    maps, manifest, _ = int8_maps_and_manifest(tmp_path, scales=False)
    with pytest.raises(CompileError) as e:
        compile_toy([MAPS, maps], manifest)
    msg = str(e.value)
    assert "weight blocks.0." in msg and ".w.scale is not in " + manifest in msg and "\n" not in msg, msg
