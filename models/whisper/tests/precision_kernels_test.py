"""What each build of tiny computes with, read from the generated libraries' ir.json: the GEMMs on
the manifest's weight dtypes (f16 weights in fp32, bf16, int8) and the attention that kernel maps
made for a build choose (bf16_attention in bf16 only: the int8 build keeps f32 attention, a
measured choice, docs/precision.md); the decoders' cross-attention on the cache their policy
stores (f16 in bf16: f16kv_attention, written by the rounding converter; f32 in fp32 and int8)."""

import json
import os
import sys
import unittest

# The generated files of tiny's libraries per build, in the runfiles.
LIBRARY = {"fp32": "tiny", "bf16": "tiny_bf16", "int8": "tiny_int8"}
# The converters that write the encoder's projections into the cross-attention cache (tiny: 4 layers).
STORES = tuple(f"state:cross_{kv}[{layer}]<-head_major" for kv in "kv" for layer in range(4))


def kernels(precision, part, kind_of):
    """node suffix -> the kernels its calls use, over every phase of `part` in `precision`."""
    with open(os.path.join("models", "whisper", f"{LIBRARY[precision]}_{part}_c", "ir.json")) as f:
        ir = json.load(f)
    found = {}
    for phase in ir["phases"]:
        for call in phase["calls"]:
            if call["node"].split(".")[-1] in kind_of:
                found.setdefault(call["node"].split(".")[-1], set()).add(call["kernel"])
    return found


class PrecisionKernelsTest(unittest.TestCase):
    def test_encoder_gemms_and_attention_per_build(self):
        want = {
            "fp32": ("ckw_f16w_gemm_nt_bias", "ckw_f32_attention"),
            "bf16": ("ckw_bf16w_gemm_nt_bias", "ckw_bf16_attention"),
            "int8": ("ckw_i8w_gemm_nt_bias", "ckw_f32_attention"),
        }
        for precision, (gemm, attention) in want.items():
            got = kernels(precision, "encoder", ("q_proj", "self_attn"))
            self.assertEqual(got, {"q_proj": {gemm}, "self_attn": {attention}}, precision)

    def test_decoder_attention_per_build(self):
        want = {
            "fp32": ("ckw_f32_attention_batched", "ckw_f32", "ckw_f32_token_to_head_major"),
            "bf16": ("ckw_bf16_attention_batched", "ckw_f16kv", "ckw_f16_token_to_head_major"),
            "int8": ("ckw_f32_attention_batched", "ckw_f32", "ckw_f32_token_to_head_major"),
        }
        for precision, (self_attn, cross, store) in want.items():
            got = kernels(precision, "decoder", ("self_attn", "cross_attn", "cross_qk"))
            # self-attention runs each beam on its own cache (attention_batched)
            self.assertEqual(
                got,
                {
                    "self_attn": {self_attn},
                    "cross_attn": {cross + "_attention"},
                    "cross_qk": {cross + "_attention_scores"},
                },
                precision,
            )
            stores = kernels(precision, "decoder", STORES)
            self.assertEqual(stores, {name: {store} for name in STORES}, precision)

    def test_paged_decoder_cross_attention_per_build(self):
        for precision, cross, store in (
            ("fp32", "ckw_f32", "ckw_f32_token_to_paged"),
            ("bf16", "ckw_f16kv", "ckw_f16_token_to_paged"),
            ("int8", "ckw_f32", "ckw_f32_token_to_paged"),
        ):
            got = kernels(precision, "decoder_paged", ("cross_attn", "cross_qk", "cross_k_store", "cross_v_store"))
            self.assertEqual(
                got,
                {
                    "cross_attn": {cross + "_attention_paged"},
                    "cross_qk": {cross + "_attention_scores_paged"},
                    "cross_k_store": {store},
                    "cross_v_store": {store},
                },
                precision,
            )


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
