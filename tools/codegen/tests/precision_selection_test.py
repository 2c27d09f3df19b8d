"""A kernel map may state the builds it is made for (`precisions`), matched against the manifest's
`precision`: on the toy decoder, a bf16 attention map (an op without weights) is chosen in the
bf16 build over the map that states no build, is turned away in every other build (the C then as
without it), and two maps made for one build are an error; a manifest whose precision is not a
name is refused naming the file."""

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


def bf16_attention_maps(tmp_path, name="bf16_maps", kernel="ckw_bf16_attention", precisions=("bf16",)) -> str:
    """The toy's attention map again, as `kernel`, made for `precisions`."""
    folder = tmp_path / name
    folder.mkdir()
    with open(os.path.join(MAPS, "attention.json")) as f:
        m = json.load(f)
    m["kernel"], m["precisions"] = kernel, list(precisions)
    (folder / "attention_bf16.json").write_text(json.dumps(m))
    return str(folder)


def manifest_of(tmp_path, precision) -> str:
    return toy_manifest_with(tmp_path, f"manifest_{precision}.json", precision=precision)


def reasons_for(result, kernel):
    """Why `kernel` was turned away, at every attention op (other ops: not its kind)."""
    return [
        c["rejected"]
        for group in result.explain["candidates"]
        for c in group
        if c["kernel"] == kernel and not (c["rejected"] or "").startswith("provides ")
    ]


def attention_kernels(result):
    return {c["kernel"] for p in result.ir["phases"] for c in p["calls"] if c["node"].endswith("self_attn")}


def test_the_build_a_map_is_made_for_chooses_it(tmp_path):
    result = compile_circuit(
        CIRCUIT, [MAPS, bf16_attention_maps(tmp_path)], CONFIG, manifest_of(tmp_path, "bf16"), "toy"
    )
    assert attention_kernels(result) == {"ckw_bf16_attention"}
    reasons = reasons_for(result, "ckw_f32_attention")
    assert reasons and all(r == "a map made for the bf16 build provides it" for r in reasons), reasons


@pytest.mark.parametrize("precision", [None, "int8"])
def test_other_builds_turn_it_away_and_their_c_is_unchanged(tmp_path, precision):
    manifest = manifest_of(tmp_path, precision) if precision else F32_MANIFEST
    alone = compile_circuit(CIRCUIT, [MAPS], CONFIG, manifest, "toy")
    both = compile_circuit(CIRCUIT, [MAPS, bf16_attention_maps(tmp_path)], CONFIG, manifest, "toy")
    assert attention_kernels(both) == {"ckw_f32_attention"}
    for name in ("ckw_toy_decoder.c", "ckw_toy_decoder.h", "ir.json"):
        assert both.files[name] == alone.files[name], name
    reasons = reasons_for(both, "ckw_bf16_attention")
    build = f"the {precision} one" if precision else "this one"
    assert reasons and all(r == f"made for the bf16 build(s), not {build}" for r in reasons), reasons


def test_two_maps_made_for_one_build_are_an_error(tmp_path):
    maps = [MAPS, bf16_attention_maps(tmp_path), bf16_attention_maps(tmp_path, "more", "ckw_bf16_attention_2")]
    with pytest.raises(
        CompileError,
        match=r"two or more providers for kind 'attention'.*ckw_bf16_attention \(.*"
        r"ckw_bf16_attention_2",
    ):
        compile_circuit(CIRCUIT, maps, CONFIG, manifest_of(tmp_path, "bf16"), "toy")


def test_a_precision_that_is_not_a_name_is_refused(tmp_path):
    manifest = manifest_of(tmp_path, 16)
    with pytest.raises(CompileError, match=rf"^{manifest}: /precision: expected the build's name"):
        compile_circuit(CIRCUIT, [MAPS], CONFIG, manifest, "toy")


if __name__ == "__main__":
    run_pytest(__file__)
