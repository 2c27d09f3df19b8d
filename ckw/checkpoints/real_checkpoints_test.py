"""The real @whisper_tiny and @whisper_base checked tensor by tensor against their sources.

The expected source of every packed tensor is written out here a second time (independently of
convert_ct2.py), read straight from the source file named in audit.json, and compared bit for bit:
narrowing the packed float32 back to float16 must give the stored bits, and widening the stored
value must give the packed one. Hugging Face sources are read with the `safetensors` library.
"""

import fnmatch
import json
import os
import re
import unittest

import numpy as np

from ckw.checkpoints import storage
from ckw.checkpoints.ctranslate2_reader import Ct2Model
from ckw.checkpoints.pack import file_sha256
from ckw.checkpoints.packed import PackedCheckpoint, runfiles_checkpoint_dir

EXPECTED = {
    "tiny": {
        "n_audio_state": 384,
        "n_audio_head": 6,
        "n_audio_layer": 4,
        "n_text_layer": 4,
        "n_vocab": 51864,
        "eot": 50256,
        "sot": 50257,
        "multilingual": False,
    },
    "base": {
        "n_audio_state": 512,
        "n_audio_head": 8,
        "n_audio_layer": 6,
        "n_text_layer": 6,
        "n_vocab": 51865,
        "eot": 50257,
        "sot": 50258,
        "multilingual": True,
    },
}

# Canonical block-relative name -> (CTranslate2 block-relative name, part, parts).
_BLOCK = {
    "self_attn.q_proj.weight": ("self_attention/linear_0/weight", 0, 3),
    "self_attn.q_proj.bias": ("self_attention/linear_0/bias", 0, 3),
    "self_attn.k_proj.weight": ("self_attention/linear_0/weight", 1, 3),
    "self_attn.k_proj.bias": ("self_attention/linear_0/bias", 1, 3),
    "self_attn.v_proj.weight": ("self_attention/linear_0/weight", 2, 3),
    "self_attn.v_proj.bias": ("self_attention/linear_0/bias", 2, 3),
    "self_attn.out_proj.weight": ("self_attention/linear_1/weight", 0, 1),
    "self_attn.out_proj.bias": ("self_attention/linear_1/bias", 0, 1),
    "self_attn_layer_norm.weight": ("self_attention/layer_norm/gamma", 0, 1),
    "self_attn_layer_norm.bias": ("self_attention/layer_norm/beta", 0, 1),
    "encoder_attn.q_proj.weight": ("attention/linear_0/weight", 0, 1),
    "encoder_attn.q_proj.bias": ("attention/linear_0/bias", 0, 1),
    "encoder_attn.k_proj.weight": ("attention/linear_1/weight", 0, 2),
    "encoder_attn.k_proj.bias": ("attention/linear_1/bias", 0, 2),
    "encoder_attn.v_proj.weight": ("attention/linear_1/weight", 1, 2),
    "encoder_attn.v_proj.bias": ("attention/linear_1/bias", 1, 2),
    "encoder_attn.out_proj.weight": ("attention/linear_2/weight", 0, 1),
    "encoder_attn.out_proj.bias": ("attention/linear_2/bias", 0, 1),
    "encoder_attn_layer_norm.weight": ("attention/layer_norm/gamma", 0, 1),
    "encoder_attn_layer_norm.bias": ("attention/layer_norm/beta", 0, 1),
    "fc1.weight": ("ffn/linear_0/weight", 0, 1),
    "fc1.bias": ("ffn/linear_0/bias", 0, 1),
    "fc2.weight": ("ffn/linear_1/weight", 0, 1),
    "fc2.bias": ("ffn/linear_1/bias", 0, 1),
    "final_layer_norm.weight": ("ffn/layer_norm/gamma", 0, 1),
    "final_layer_norm.bias": ("ffn/layer_norm/beta", 0, 1),
}
_TOP = {
    "model.encoder.conv1.weight": "encoder/conv1/weight",
    "model.encoder.conv1.bias": "encoder/conv1/bias",
    "model.encoder.conv2.weight": "encoder/conv2/weight",
    "model.encoder.conv2.bias": "encoder/conv2/bias",
    "model.encoder.embed_positions.weight": "encoder/position_encodings/encodings",
    "model.encoder.layer_norm.weight": "encoder/layer_norm/gamma",
    "model.encoder.layer_norm.bias": "encoder/layer_norm/beta",
    "model.decoder.embed_tokens.weight": "decoder/embeddings/weight",
    "model.decoder.embed_positions.weight": "decoder/position_encodings/encodings",
    "model.decoder.layer_norm.weight": "decoder/layer_norm/gamma",
    "model.decoder.layer_norm.bias": "decoder/layer_norm/beta",
}


def ct2_source(name: str) -> tuple[str, int, int]:
    if name in _TOP:
        return _TOP[name], 0, 1
    m = re.fullmatch(r"model\.(encoder|decoder)\.layers\.(\d+)\.(.+)", name)
    src, part, parts = _BLOCK[m.group(3)]
    return f"{m.group(1)}/layer_{m.group(2)}/{src}", part, parts


class RealCheckpointTest(unittest.TestCase):
    def check_variant(self, variant: str) -> None:
        want = EXPECTED[variant]
        directory = runfiles_checkpoint_dir(variant)
        ckpt = PackedCheckpoint(directory, verify=True)  # layout, digest, every tensor's sha256
        cfg = ckpt.config
        with open(os.path.join(directory, "audit.json"), encoding="utf-8") as f:
            audit = json.load(f)

        # model_config: dims and special ids read from the checkpoint match the known facts.
        self.assertEqual(cfg["variant"], variant)
        for key in ("n_audio_state", "n_audio_head", "n_audio_layer", "n_text_layer", "n_vocab", "eot", "sot"):
            self.assertEqual(cfg[key], want[key], key)
        self.assertEqual(cfg["n_mels"], 80)
        self.assertEqual((cfg["n_audio_ctx"], cfg["n_text_ctx"]), (1500, 448))
        self.assertEqual(cfg["is_multilingual"], want["multilingual"])
        self.assertEqual(cfg["language_ids"]["en"], cfg["sot"] + 1)
        self.assertEqual(len(cfg["language_ids"]), 99)
        self.assertEqual(cfg["timestamp_begin"], cfg["no_timestamps"] + 1)
        self.assertEqual(cfg["n_vocab"] - cfg["timestamp_begin"], 1501)
        self.assertEqual(len(cfg["alignment_heads"]), 8)
        self.assertIn(cfg["eot"], cfg["begin_suppress_tokens"])
        self.assertEqual(cfg["manifest_sha256"], ckpt.manifest_sha256)

        # Audit: every source entry accounted for, nothing unexplained.
        counts = audit["counts"]
        self.assertEqual(counts["unaccounted"], 0)
        self.assertEqual(counts["used"] + counts["ignored"], counts["source_entries"])
        self.assertEqual(counts["output_tensors"], len(ckpt.names()))
        self.assertTrue(audit["verdict"].startswith("PASS"), audit["verdict"])
        for e in audit["source_tensors"]:
            self.assertTrue(e["disposition"] == "used" or e["reason"], e)
        self.assertEqual(
            {s["name"] for s in audit["synthesized"]}, {n for n in ckpt.names() if n.endswith(".k_proj.bias")}
        )
        # The published weights are float16 values, so every storage candidate is stored as f16
        # (half the bytes; the f16 kernels widen them back exactly) and nothing else is.
        candidates = sorted(n for n in ckpt.names() if any(fnmatch.fnmatchcase(n, p) for p in storage.F16_CANDIDATES))
        self.assertEqual(len(candidates), 1 + 6 * cfg["n_audio_layer"] + 10 * cfg["n_text_layer"])
        self.assertEqual(sorted(audit["stored_f16"]), candidates)
        self.assertEqual(sorted(e["name"] for e in ckpt.manifest["tensors"] if e["dtype"] == "f16"), candidates)
        # The sources are unchanged since conversion.
        for f in audit["source_files"]:
            self.assertEqual(file_sha256(f["path"]), f["sha256"], f["path"])

        models = [
            f["path"]
            for f in audit["source_files"]
            if re.fullmatch(r"model\.bin(\.part\d+)?", os.path.basename(f["path"]))
        ]
        if audit["source_format"].startswith("CTranslate2"):
            with Ct2Model(models) as src:
                self.compare_ct2(ckpt, src, cfg)
        else:
            self.compare_safetensors(
                ckpt, [f["path"] for f in audit["source_files"] if f["path"].endswith(".safetensors")]
            )

    def compare_ct2(self, ckpt, src, cfg) -> None:
        used = set()
        for name in ckpt.names():
            packed = ckpt.tensor(name)
            ct2_name, part, parts = ct2_source(name)
            stored = src.read_array(ct2_name)
            used.add(ct2_name)
            rows = stored.shape[0] // parts
            stored = stored[part * rows : (part + 1) * rows]
            self.assertEqual(stored.dtype, np.float16, ct2_name)
            if name.endswith(".k_proj.bias"):  # synthesized; the source slice is zero too
                self.assertFalse(packed.any(), name)
                self.assertFalse(stored.any(), ct2_name)
                continue
            self.assertEqual(packed.shape, stored.shape, name)
            self.assertTrue(np.array_equal(packed.astype(np.float16).view(np.uint16), stored.view(np.uint16)), name)
            self.assertTrue(np.array_equal(packed, stored.astype(np.float32)), name)
        # Every stored float tensor fed some packed tensor; the rest are scalar settings.
        floats = {n for n, v in src.variables.items() if v.shape}
        self.assertEqual(floats, used)
        self.assertEqual(src.read_scalar("encoder/num_heads"), cfg["n_audio_head"])
        self.assertEqual(src.read_scalar("decoder/num_heads"), cfg["n_text_head"])

    def compare_safetensors(self, ckpt, files) -> None:
        from safetensors import safe_open

        stored = {}
        for path in files:
            with safe_open(path, framework="numpy") as f:
                for key in f.keys():  # noqa: SIM118 (safe_open is not a dict)
                    stored[key if key.startswith(("model.", "proj_out.")) else f"model.{key}"] = f.get_tensor(key)
        for name in ckpt.names():
            packed = ckpt.tensor(name)
            if name.endswith(".k_proj.bias"):
                self.assertFalse(packed.any(), name)
                continue
            src = stored[name]
            self.assertTrue(np.array_equal(packed, src.astype(np.float32)), name)
            if src.dtype == np.float16:
                self.assertTrue(np.array_equal(packed.astype(np.float16).view(np.uint16), src.view(np.uint16)), name)

    def test_tiny(self):
        self.check_variant("tiny")

    def test_base(self):
        self.check_variant("base")


if __name__ == "__main__":
    unittest.main()
