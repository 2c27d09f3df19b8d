"""The Whisper circuits compile against the kernel maps, and the IR shows the four cache facts
of DESIGN.md by construction (for tiny.en and base dims, and a small synthetic model)."""

import json
import os
import tempfile

import pytest

from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.synthetic import write_checkpoint, write_manifest
from tools.codegen.testing.toy import run_pytest, workspace_root

# Runs from the workspace root (runfiles under Bazel); kernel maps and circuits are data deps.
CIRCUITS = os.path.join(workspace_root(), "circuits")
ENCODER = os.path.join(CIRCUITS, "audio_transformer_encoder.json")
DECODER = os.path.join(CIRCUITS, "audio_transformer_decoder.json")
MAPS = [os.path.join(workspace_root(), "kernels")]

DIMS = {
    "small": dict(
        n_mels=4,
        n_audio_ctx=10,
        n_audio_state=8,
        n_audio_head=2,
        n_audio_layer=2,
        n_vocab=30,
        n_text_ctx=6,
        n_text_state=8,
        n_text_head=2,
        n_text_layer=2,
    ),
    "tiny": dict(
        n_mels=80,
        n_audio_ctx=1500,
        n_audio_state=384,
        n_audio_head=6,
        n_audio_layer=4,
        n_vocab=51864,
        n_text_ctx=448,
        n_text_state=384,
        n_text_head=6,
        n_text_layer=4,
    ),
    "base": dict(
        n_mels=80,
        n_audio_ctx=1500,
        n_audio_state=512,
        n_audio_head=8,
        n_audio_layer=6,
        n_vocab=51865,
        n_text_ctx=448,
        n_text_state=512,
        n_text_head=8,
        n_text_layer=6,
    ),
}


@pytest.fixture(scope="module", params=sorted(DIMS))
def model(request):
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "model_config.json")
        with open(config, "w") as f:
            json.dump(DIMS[request.param], f)
        # Every model is lowered to the full IR. tiny and base get a manifest only (their weights
        # would be hundreds of megabytes; the compiler needs just names, shapes and offsets).
        if request.param == "small":
            write_checkpoint(tmp, [ENCODER, DECODER], config)
        else:
            write_manifest(tmp, [ENCODER, DECODER], config)
        manifest = os.path.join(tmp, "manifest.json")
        results = {
            part: compile_circuit(path, MAPS, config, manifest, request.param)
            for part, path in (("encoder", ENCODER), ("decoder", DECODER))
        }
        yield request.param, DIMS[request.param], results


def calls(plan):
    return plan["calls"]


def test_encoder_memory_plan(model):
    name, dims, r = model
    plan = r["encoder"].plans[0]
    assert plan["phase"] == "run" and plan["arena_bytes"] > 0
    n_linear = sum(c["kernel"].startswith("ckw_f32_gemm") for c in calls(plan))
    assert n_linear == 6 * dims["n_audio_layer"]


def test_cross_kv_projected_only_in_prefill_and_guarded(model):
    """Facts 1 and 4: projections of all encoder rows, only in prefill, behind the cache flag."""
    _, dims, r = model
    prefill, decode, _ = r["decoder"].plans
    guarded = [c for c in calls(prefill) if c["guarded_by_cross_kv_cache"]]
    assert len(guarded) == 4 * dims["n_text_layer"]  # k, v projections and their layout writes
    assert all(
        ".cross_k_proj" in c["node"] or ".cross_v_proj" in c["node"] or "state:cross_" in c["node"] for c in guarded
    )
    assert not any("cross_k_proj" in c["node"] or "cross_v_proj" in c["node"] for c in calls(decode))
    assert all(not c["guarded_by_cross_kv_cache"] for c in calls(decode))


def decoder_ir(model):
    name, dims, r = model
    assert r["decoder"].ir is not None and r["encoder"].ir is not None, f"{name}: no IR"
    return dims, {p["phase"]: p for p in r["decoder"].ir["phases"]}


def args_of(phase, node_suffix):
    for c in phase["calls"]:
        if c["node"].endswith(node_suffix):
            return {a["arg"]: a["c"] for a in c["args"]}
    raise AssertionError(f"no call {node_suffix}")


def test_ir_geometry_facts(model):
    dims, ph = decoder_ir(model)
    prefill, decode = ph["prefill"], ph["decode"]
    # Fact 1: cross K projection runs over every encoder row.
    assert args_of(prefill, "blocks.0.cross_k_proj")["M"] == str(dims["n_audio_ctx"])
    # Fact 2: cross-attention queries = active tokens; keys = all encoder rows.
    assert args_of(prefill, "blocks.0.cross_attn")["Tq"] == "n_tokens"
    assert args_of(decode, "blocks.0.cross_attn")["Tq"] == "n_beams"  # one query per beam
    assert args_of(decode, "blocks.0.cross_attn")["Tk"] == str(dims["n_audio_ctx"])
    # Fact 3: a decode step attends pos + 1 cached rows.
    assert args_of(decode, "blocks.0.self_attn")["Tk"] == "pos + 1"
    assert args_of(decode, "blocks.0.self_attn")["q_pos"] == "pos"
    # Fact 4: decode requires the cache, prefill fills it.
    assert decode["requires_cross_kv"] and not prefill["requires_cross_kv"]
    # A prefill projects only the prompt rows it is asked for onto the vocabulary (a long-form
    # prompt has ~200 rows; decoding needs one or two).
    assert args_of(prefill, "prompt_logits")["M"] == "n_logit_rows"
    assert [p["name"] for p in prefill["params"]] == [
        "tokens",
        "logit_rows",
        "n_logit_rows",
        "n_tokens",
        "cross_qk",
        "prompt_logits",
    ]


def test_beams_share_cross_kv_and_run_every_gemm_once_per_step(model):
    """Beams: a decode step takes every beam's row through each GEMM in one call (weights read
    once per step); each beam has its own self-K/V (a leading axis of max_beams), the cross-K/V
    has no beam axis (one projection shared by all beams); reorder touches only the self-K/V."""
    dims, ph = decoder_ir(model)
    decode, reorder = ph["decode"], ph["reorder"]
    gemms = [c for c in decode["calls"] if c["kernel"].startswith("ckw_f32_gemm")]
    assert len(gemms) == 8 * dims["n_text_layer"] + 1  # q k v o, cross q o, fc1 fc2; logits
    assert all({a["arg"]: a["c"] for a in c["args"]}["M"] == "n_beams" for c in gemms)
    assert [p["name"] for p in decode["params"]] == ["tokens", "n_beams", "logits"]
    assert args_of(decode, "blocks.0.self_attn")["B"] == "n_beams"
    state = {s["name"]: s for s in model[2]["decoder"].plans[0]["state"]}
    max_beams = model[2]["decoder"].ir["dims"]["max_beams"]
    for name in ("self_k", "self_v"):
        assert state[f"state:{name}"]["instances"] == {"layer": dims["n_text_layer"]}
        assert state[f"state:{name}"]["shape"][0] == max_beams
    for name in ("cross_k", "cross_v"):
        assert state[f"state:{name}"]["instances"] == {"layer": dims["n_text_layer"]}
        assert state[f"state:{name}"]["shape"] == [
            dims["n_text_head"],
            dims["n_audio_ctx"],
            dims["n_text_state"] // dims["n_text_head"],
        ]
    assert {c["kernel"] for c in reorder["calls"]} == {"ckw_f32_reorder_batches"}
    assert len(reorder["calls"]) == 2 * dims["n_text_layer"]
    assert [p["name"] for p in reorder["params"]] == ["beam_indices", "n_beams"]
    for c in reorder["calls"]:
        a = {x["arg"]: x for x in c["args"]}
        assert a["dst"]["source"] == a["src"]["source"] and "self_" in a["dst"]["source"]  # in place
        assert a["n"]["c"] == "pos"  # only the rows written so far move


def test_geometry_error_for_bad_heads(tmp_path):
    config = tmp_path / "model_config.json"
    config.write_text(json.dumps(dict(DIMS["small"], n_text_head=3)))
    with pytest.raises(CompileError, match="/dims/head_dim: 8 / 3 is not exact"):
        compile_circuit(DECODER, MAPS, str(config), None, "bad", check_only=True)


def test_zero_encoder_length_is_an_error(tmp_path):
    config = tmp_path / "model_config.json"
    config.write_text(json.dumps(dict(DIMS["small"], n_audio_ctx=0)))
    with pytest.raises(CompileError, match="geometry"):
        compile_circuit(DECODER, MAPS, str(config), None, "bad", check_only=True)


if __name__ == "__main__":
    run_pytest(__file__)
