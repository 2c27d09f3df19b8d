"""A build may store a state narrower than the circuit states it (the manifest's `state_dtypes`,
copied from the precision policy): on the toy decoder with the cross-attention K/V as f16, the
cross-attention selects the map whose K/V ports read f16 while the self-attention keeps the f32
one, the projections' f32 rows reach the cache through the rounding converter, the state takes
half the bytes, and the C is unchanged when no state is narrowed. Without a kernel that reads the
narrower state, or a converter that writes it, the compile fails naming what is missing; a
manifest with a dtype the compiler does not know is refused naming the file."""

import json
import os

import pytest

from tools.codegen.compiler import compile_circuit
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import TOY, run_pytest, toy_manifest_with

MAPS = os.path.join(TOY, "kernels")
CIRCUIT = f"{TOY}/toy_decoder.json"
CONFIG = f"{TOY}/config.json"
F32_MANIFEST = f"{TOY}/manifest.json"


def _map(name):
    with open(os.path.join(MAPS, name)) as f:
        return json.load(f)


def f16_maps(tmp_path, attention=True, converter=True) -> str:
    """The toy's attention reading f16 K/V and its head-major converter writing f16."""
    folder = tmp_path / "f16_maps"
    folder.mkdir()
    if attention:
        m = _map("attention.json")
        m["kernel"] = "ckw_f16kv_attention"
        for port in ("k", "v"):
            m["ports"][port]["dtype"] = "f16"
        for a in m["abi"]:
            if a["arg"] in ("k", "v"):
                a["ctype"] = "const uint16_t *"
        (folder / "f16kv_attention.json").write_text(json.dumps(m))
    if converter:
        m = _map("token_to_head_major.json")
        m["kernel"] = "ckw_f16_token_to_head_major"
        m["ports"]["y"]["dtype"] = "f16"
        next(a for a in m["abi"] if a["arg"] == "y")["ctype"] = "uint16_t *"
        m["layout_conversion"]["value_semantics"] = "rounded"
        (folder / "f16_token_to_head_major.json").write_text(json.dumps(m))
    return str(folder)


def manifest_with(tmp_path, states) -> str:
    return toy_manifest_with(tmp_path, "manifest_states.json", state_dtypes=states)


F16_KV = {"cross_k": "f16", "cross_v": "f16"}


def kernels_of(result, suffix):
    return {c["kernel"] for p in result.ir["phases"] for c in p["calls"] if c["node"].endswith(suffix)}


def writers(result):
    """Converter calls per state instance they write: {'state:cross_k[0,0]': kernel}."""
    return {
        c["node"].split("<-")[0]: c["kernel"]
        for p in result.ir["phases"]
        for c in p["calls"]
        if c["node"].startswith("state:")
    }


def regions(result):
    return {r["name"]: dict(r, offset=None) for r in result.plans[0]["state"]}


def test_the_narrow_state_chooses_its_readers_and_writers(tmp_path):
    maps = [MAPS, f16_maps(tmp_path)]
    result = compile_circuit(CIRCUIT, maps, CONFIG, manifest_with(tmp_path, F16_KV), "toy")
    assert kernels_of(result, "cross_attn") == {"ckw_f16kv_attention"}
    assert kernels_of(result, "self_attn") == {"ckw_f32_attention"}
    w = writers(result)
    assert {w[f"state:{s}[{i},0]"] for s in F16_KV for i in (0, 1)} == {"ckw_f16_token_to_head_major"}, w
    assert {w[f"state:{s}[{i},0]"] for s in ("self_k", "self_v") for i in (0, 1)} == {"ckw_f32_token_to_head_major"}
    f32 = compile_circuit(CIRCUIT, maps, CONFIG, F32_MANIFEST, "toy")
    narrow, wide = regions(result), regions(f32)
    assert narrow["state:cross_k"]["dtype"] == "f16" and narrow["state:self_k"] == wide["state:self_k"]
    elements = 2 * 5 * 4  # [n_heads, mem_len, head_dim]
    assert (
        wide["state:cross_k"]["instance_bytes"]
        >= 4 * elements
        > narrow["state:cross_k"]["instance_bytes"]
        >= 2 * elements
    )
    assert result.ir["state_bytes"] < f32.ir["state_bytes"]


def test_without_narrow_states_the_c_is_unchanged(tmp_path):
    alone = compile_circuit(CIRCUIT, [MAPS], CONFIG, F32_MANIFEST, "toy")
    both = compile_circuit(CIRCUIT, [MAPS, f16_maps(tmp_path)], CONFIG, manifest_with(tmp_path, {}), "toy")
    for name in ("ckw_toy_decoder.c", "ckw_toy_decoder.h", "ir.json"):
        assert both.files[name] == alone.files[name], name


def test_no_kernel_reads_the_narrow_state(tmp_path):
    with pytest.raises(
        CompileError,
        match=r"no provider: no kernel map provides kind 'attention'.*ckw_f32_attention "
        r"\(.*: port 'k' reads f32, but state cross_k is f16\)",
    ):
        compile_circuit(
            CIRCUIT, [MAPS, f16_maps(tmp_path, attention=False)], CONFIG, manifest_with(tmp_path, F16_KV), "toy"
        )


def test_no_converter_writes_the_narrow_state(tmp_path):
    with pytest.raises(
        CompileError,
        match=r"-> state:cross_k.*no route: no declared converter chain from token_major "
        r"to head_major for f32 to f16",
    ):
        compile_circuit(
            CIRCUIT, [MAPS, f16_maps(tmp_path, converter=False)], CONFIG, manifest_with(tmp_path, F16_KV), "toy"
        )


@pytest.mark.parametrize("states", [{"cross_k": "half"}, ["cross_k"], {"cross_k": "float16"}])
def test_a_state_dtype_the_compiler_does_not_know_is_refused(tmp_path, states):
    manifest = manifest_with(tmp_path, states)
    with pytest.raises(CompileError, match=rf"^{manifest}: /state_dtypes: expected {{state name: dtype}}"):
        compile_circuit(CIRCUIT, [MAPS], CONFIG, manifest, "toy")


if __name__ == "__main__":
    run_pytest(__file__)
