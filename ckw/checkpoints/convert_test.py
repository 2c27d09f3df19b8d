"""Converters and packer on small synthetic checkpoints written by the test.

The synthetic weights are made under Hugging Face names, fused into CTranslate2 layout by an
independent writer (synthetic.py), converted back by the library and packed. Every packed tensor
must be the original float16 value widened to float32, bit for bit; the Hugging Face route must
give the very same weights.bin; every failure must be one line naming file and tensor.
"""

import hashlib
import json
import os
import tempfile
import unittest

import numpy as np

from ckw.checkpoints import pack, sources, synthetic
from ckw.checkpoints.canonical import canonical_tensors
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.fetch import fetch
from ckw.checkpoints.packed import ALIGNMENT, PackedCheckpoint, tensors_digest
from ckw.checkpoints.tokenizer_merges import restore_missing_merges

DIMS = synthetic.SMALL


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def read_json(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def convert(src_dir: str, out_dir: str) -> dict:
    return fetch("tiny", out_dir, from_dir=src_dir, log=lambda s: None, check_size=False)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.hf = synthetic.hf_tensors(DIMS, seed=3)
        self.ct2 = synthetic.ct2_variables(self.hf, DIMS)
        self.alias = {"decoder/projection/weight": "decoder/embeddings/weight"}

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def ct2_dir(self, name="ct2", variables=None, aliases=None, **kw):
        return synthetic.write_ct2_dir(
            self.path(name),
            self.ct2 if variables is None else variables,
            self.alias if aliases is None else aliases,
            **kw,
        )

    def assertFails(self, src_dir, *fragments):
        out = self.path("out-fail")
        with self.assertRaises(CheckpointError) as ctx:
            convert(src_dir, out)
        msg = str(ctx.exception)
        self.assertNotIn("\n", msg)
        for fragment in fragments:
            self.assertIn(fragment, msg)
        self.assertEqual(os.listdir(out) if os.path.exists(out) else [], [], "a failed run left files")
        return msg


class Ct2ConversionTest(Base):
    def test_every_tensor_bit_exact_and_accounted(self):
        out = self.path("out")
        summary = convert(self.ct2_dir(), out)
        ckpt = PackedCheckpoint(out, verify=True)
        names = [n for n, _ in canonical_tensors(DIMS)]
        self.assertEqual(ckpt.names(), names)
        for name in names:
            got = ckpt.tensor(name)
            self.assertEqual(got.dtype, np.float32)
            if name.endswith("k_proj.bias"):
                self.assertFalse(got.any(), name)
                continue
            want = self.hf[name]
            # Widening is exact: narrowing back gives the source bits, and values agree.
            np.testing.assert_array_equal(got.astype(np.float16).view(np.uint16), want.view(np.uint16), name)
            np.testing.assert_array_equal(got, want.astype(np.float32), name)

        audit = read_json(self.path("out", "audit.json"))
        n_entries = len(self.ct2) + len(self.alias)
        self.assertEqual(audit["counts"]["source_entries"], n_entries)
        self.assertEqual(audit["counts"]["unaccounted"], 0)
        self.assertEqual(audit["counts"]["accounted_percent"], 100.0)
        self.assertEqual(audit["counts"]["ignored"], 2)  # alignment_layer, alignment_heads
        self.assertEqual(audit["counts"]["output_synthesized"], DIMS.n_audio_layer + 2 * DIMS.n_text_layer)
        self.assertTrue(audit["verdict"].startswith("PASS"))
        for e in audit["source_tensors"]:
            self.assertIn(e["disposition"], ("used", "ignored"))
            if e["disposition"] == "ignored":
                self.assertTrue(e["reason"])
        self.assertTrue(all(s["reason"] for s in audit["synthesized"]))
        self.assertEqual(summary["counts"], audit["counts"])

    def test_layout_and_digests(self):
        out = self.path("out")
        convert(self.ct2_dir(), out)
        manifest = read_json(self.path("out", "manifest.json"))
        raw = read_bytes(self.path("out", "weights.bin"))
        self.assertEqual(len(raw), manifest["weights_nbytes"])
        self.assertEqual(hashlib.sha256(raw).hexdigest(), manifest["weights_sha256"])
        end = 0
        for e in manifest["tensors"]:
            self.assertEqual(e["offset"] % ALIGNMENT, 0)
            self.assertGreaterEqual(e["offset"], end)
            self.assertEqual(raw[end : e["offset"]], b"\0" * (e["offset"] - end))
            self.assertEqual(hashlib.sha256(raw[e["offset"] : e["offset"] + e["nbytes"]]).hexdigest(), e["sha256"])
            self.assertIn(e["dtype"], ("f32", "f16"))  # f16 only where exact: storage_test
            end = e["offset"] + e["nbytes"]
        # The documented digest rule, spelled out independently of tensors_digest().
        text = json.dumps(manifest["tensors"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        self.assertEqual(hashlib.sha256(text.encode()).hexdigest(), manifest["manifest_sha256"])
        self.assertEqual(tensors_digest(manifest["tensors"]), manifest["manifest_sha256"])
        # Deterministic: converting again gives identical bytes.
        convert(self.ct2_dir(), self.path("out2"))
        for f in ("weights.bin", "manifest.json", "model_config.json"):
            self.assertEqual(read_bytes(self.path("out", f)), read_bytes(self.path("out2", f)), f)

    def test_model_config(self):
        out = self.path("out")
        convert(self.ct2_dir(), out)
        cfg = read_json(self.path("out", "model_config.json"))
        for key, value in DIMS.to_dict().items():
            self.assertEqual(cfg[key], value, key)
        tok = synthetic.SPECIAL_TOKENS
        self.assertEqual(cfg["eot"], tok["<|endoftext|>"])
        self.assertEqual(cfg["sot"], tok["<|startoftranscript|>"])
        self.assertEqual(cfg["sot_prev"], tok["<|startofprev|>"])
        self.assertEqual(cfg["sot_lm"], tok["<|startoflm|>"])
        self.assertEqual(cfg["no_timestamps"], tok["<|notimestamps|>"])
        self.assertEqual(cfg["no_speech"], tok["<|nocaptions|>"])
        self.assertEqual(cfg["transcribe"], tok["<|transcribe|>"])
        self.assertEqual(cfg["translate"], tok["<|translate|>"])
        self.assertEqual(cfg["timestamp_begin"], tok["<|notimestamps|>"] + 1)
        self.assertEqual(cfg["language_ids"], {"en": 5, "de": 6})
        self.assertEqual(cfg["suppress_tokens"], synthetic.SUPPRESS)
        self.assertEqual(cfg["begin_suppress_tokens"], synthetic.BEGIN_SUPPRESS)
        self.assertEqual(cfg["alignment_heads"], synthetic.ALIGNMENT_HEADS)
        self.assertFalse(cfg["is_multilingual"])
        self.assertEqual(cfg["variant"], "tiny")
        self.assertIn("local directory", cfg["source"])
        self.assertEqual(read_bytes(self.path("out", "tokenizer.json")), read_bytes(self.path("ct2", "tokenizer.json")))
        self.assertEqual(cfg["tokenizer_restored_merges"], [])  # checked, nothing missing: copied as is

    def test_missing_merge_restored(self):
        # "ab" (rank 3) has no merge and splits one way into lower-ranked tokens: its merge comes
        # back at its rank position ("bc" has two splits, "b c" is there anyway). The base
        # checkpoint's packed tokenizer.json is the real case (ckw/runtime/tokenizer_test.py).
        tok = {
            "added_tokens": [],
            "model": {
                "type": "BPE",
                "merges": ["b c", "a bc"],
                "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5},
            },
        }
        self.assertEqual(restore_missing_merges(tok), ["a b"])
        self.assertEqual(tok["model"]["merges"], ["a b", "b c", "a bc"])
        self.assertEqual(restore_missing_merges(tok), [])

    def test_split_parts(self):
        src = self.ct2_dir()
        data = read_bytes(os.path.join(src, "model.bin"))
        os.remove(os.path.join(src, "model.bin"))
        for i, chunk in enumerate((data[:1000], data[1000:5000], data[5000:]), 1):
            write_bytes(os.path.join(src, f"model.bin.part{i}"), chunk)
        convert(src, self.path("parts"))
        convert(self.ct2_dir("whole"), self.path("whole_out"))
        self.assertEqual(
            read_bytes(self.path("parts", "weights.bin")), read_bytes(self.path("whole_out", "weights.bin"))
        )
        os.remove(os.path.join(src, "model.bin.part2"))
        self.assertFails(src, "model.bin.part2 is missing")


class HfConversionTest(Base):
    def test_same_weights_as_ct2_route(self):
        convert(self.ct2_dir(), self.path("from_ct2"))
        reference = read_bytes(self.path("from_ct2", "weights.bin"))
        digest = read_json(self.path("from_ct2", "manifest.json"))["manifest_sha256"]
        variants = {
            "f16": self.hf,
            "f32": {k: v.astype(np.float32) for k, v in self.hf.items()},
            # A bare WhisperModel export (no "model." prefix) with a stored tied projection.
            "bare_tied": {
                **{k[len("model.") :]: v for k, v in self.hf.items()},
                "proj_out.weight": self.hf["model.decoder.embed_tokens.weight"],
            },
        }
        for label, tensors in variants.items():
            src = synthetic.write_hf_dir(self.path(f"hf_{label}"), tensors)
            out = self.path(f"out_{label}")
            convert(src, out)
            self.assertEqual(read_bytes(os.path.join(out, "weights.bin")), reference, label)
            self.assertEqual(read_json(os.path.join(out, "manifest.json"))["manifest_sha256"], digest, label)
            audit = read_json(os.path.join(out, "audit.json"))
            self.assertEqual(audit["counts"]["source_entries"], len(tensors), label)
            self.assertEqual(audit["counts"]["unaccounted"], 0, label)
            cfg = read_json(os.path.join(out, "model_config.json"))
            self.assertEqual(cfg["alignment_heads"], synthetic.ALIGNMENT_HEADS)

    def test_hf_errors(self):
        tensors = dict(self.hf)
        del tensors["model.decoder.layers.1.fc2.bias"]
        self.assertFails(
            synthetic.write_hf_dir(self.path("a"), tensors),
            "model.safetensors",
            "missing tensor",
            "model.decoder.layers.1.fc2.bias",
        )
        tensors = dict(self.hf)
        tensors["model.encoder.layers.0.fc1.weight"] = tensors["model.encoder.layers.0.fc1.weight"][:-1]
        self.assertFails(
            synthetic.write_hf_dir(self.path("b"), tensors), "wrong shape", "model.encoder.layers.0.fc1.weight"
        )
        tensors = dict(self.hf, **{"proj_out.weight": -self.hf["model.decoder.embed_tokens.weight"]})
        self.assertFails(synthetic.write_hf_dir(self.path("c"), tensors), "proj_out.weight", "untied")
        tensors = dict(self.hf, **{"model.extra.weight": np.zeros(3, np.float16)})
        self.assertFails(synthetic.write_hf_dir(self.path("d"), tensors), "unknown tensor", "model.extra.weight")


class Ct2ErrorTest(Base):
    def test_missing_tensor(self):
        v = dict(self.ct2)
        del v["decoder/layer_1/attention/linear_1/bias"]
        self.assertFails(
            self.ct2_dir(variables=v), "model.bin", "missing tensor", "decoder/layer_1/attention/linear_1/bias"
        )

    def test_missing_layer(self):
        v = {k: a for k, a in self.ct2.items() if not k.startswith("encoder/layer_0/")}
        self.assertFails(self.ct2_dir(variables=v), "model.bin", "missing tensor", "encoder/layer_0/")

    def test_wrong_shape(self):
        v = dict(self.ct2)
        v["encoder/layer_1/self_attention/linear_0/weight"] = v["encoder/layer_1/self_attention/linear_0/weight"][:-8]
        self.assertFails(
            self.ct2_dir(variables=v),
            "model.bin",
            "wrong shape",
            "encoder/layer_1/self_attention/linear_0/weight",
            "[24, 8]",
        )

    def test_nonzero_key_bias(self):
        v = dict(self.ct2)
        bias = v["decoder/layer_0/attention/linear_1/bias"].copy()
        bias[0] = 1
        v["decoder/layer_0/attention/linear_1/bias"] = bias
        self.assertFails(
            self.ct2_dir(variables=v), "model.bin", "decoder/layer_0/attention/linear_1/bias", "non-zero key-bias"
        )

    def test_unknown_spec(self):
        self.assertFails(self.ct2_dir(spec="TransformerSpec"), "model.bin", "unknown spec 'TransformerSpec'")
        self.assertFails(self.ct2_dir(name="r2", revision=2), "model.bin", "unknown spec", "revision 2")

    def test_unknown_tensor(self):
        v = dict(self.ct2, **{"decoder/layer_0/ffn/linear_0/weight_scale": np.ones(32, np.float32)})
        self.assertFails(self.ct2_dir(variables=v), "model.bin", "unknown tensor", "weight_scale")

    def test_quantized_weights(self):
        v = dict(self.ct2)
        v["encoder/layer_0/ffn/linear_0/weight"] = v["encoder/layer_0/ffn/linear_0/weight"].astype(np.int8)
        self.assertFails(self.ct2_dir(variables=v), "model.bin", "encoder/layer_0/ffn/linear_0/weight", "int8")

    def test_not_whisper_settings(self):
        v = dict(self.ct2, **{"decoder/activation": np.int8(0)})
        self.assertFails(self.ct2_dir(variables=v), "model.bin", "decoder/activation", "GELU")

    def test_untied_projection(self):
        v = dict(self.ct2, **{"decoder/projection/weight": -self.ct2["decoder/embeddings/weight"]})
        self.assertFails(self.ct2_dir(variables=v, aliases={}), "decoder/projection/weight", "untied")
        v["decoder/projection/weight"] = self.ct2["decoder/embeddings/weight"].copy()
        convert(self.ct2_dir(name="tied_copy", variables=v, aliases={}), self.path("ok"))

    def test_truncated_model(self):
        src = self.ct2_dir()
        model = os.path.join(src, "model.bin")
        data = read_bytes(model)
        write_bytes(model, data[: len(data) - 100])
        self.assertFails(src, "model.bin", "truncated")

    def test_tokenizer_of_another_model(self):
        src = self.ct2_dir()
        tok = synthetic.tokenizer_json({**synthetic.SPECIAL_TOKENS, "<|notimestamps|>": 50})
        write_bytes(os.path.join(src, "tokenizer.json"), json.dumps(tok).encode())
        self.assertFails(src, "tokenizer.json", "timestamps")

    def test_missing_config_lists(self):
        self.assertFails(self.ct2_dir(config={"lang_ids": None}), "config.json", "suppress_ids")


class AtomicWriteTest(Base):
    def test_failure_midway_leaves_previous_outputs_untouched(self):
        out = self.path("out")
        convert(self.ct2_dir(), out)
        before = {f: read_bytes(os.path.join(out, f)) for f in os.listdir(out)}
        src = sources.from_directories([self.ct2_dir("again")], "test")
        with sources.open_conversion(src) as conversion:

            def boom():
                raise CheckpointError("injected failure")

            conversion.tensors[len(conversion.tensors) // 2].load = boom
            with self.assertRaises(CheckpointError):
                pack.write_packed(conversion, src.tokenizer_path, out, "tiny", "test", src.files)
        after = {f: read_bytes(os.path.join(out, f)) for f in os.listdir(out)}
        self.assertEqual(before, after)  # same names (no temp dir left), same bytes

    def test_failure_on_fresh_directory_leaves_nothing(self):
        out = self.path("fresh")
        src = sources.from_directories([self.ct2_dir()], "test")
        with sources.open_conversion(src) as conversion:
            conversion.tensors[-1].load = lambda: np.zeros(3, np.float32)  # wrong shape
            with self.assertRaises(CheckpointError) as ctx:
                pack.write_packed(conversion, src.tokenizer_path, out, "tiny", "test", src.files)
        self.assertIn("model.decoder.layer_norm.bias", str(ctx.exception))
        self.assertEqual(os.listdir(out), [])


if __name__ == "__main__":
    unittest.main()
