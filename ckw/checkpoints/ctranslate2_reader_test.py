"""The model.bin reader against files written by the test: by CTranslate2's own serializer (so
the format knowledge is checked against the real writer) and by a hand-written writer (to make
every kind of damage)."""

import os
import struct
import tempfile
import unittest

import numpy as np

from ckw.checkpoints import synthetic
from ckw.checkpoints.ctranslate2_reader import Ct2Model
from ckw.checkpoints.errors import CheckpointError


def official_whisper_spec(directory: str) -> dict:
    """Write a 1+1-layer WhisperSpec with ctranslate2's own ModelSpec.save(); return the
    float32 values assigned (ctranslate2 stores them as float16)."""
    from ctranslate2.specs import whisper_spec

    spec = whisper_spec.WhisperSpec(1, 2, 1, 2)
    rng = np.random.default_rng(1)
    assigned = {}
    d = 8

    def f(name, *shape):
        value = rng.standard_normal(shape).astype(np.float32)
        assigned[name] = value
        return value

    def lin(obj, name, rows, cols):
        obj.weight = f(f"{name}/weight", rows, cols)
        obj.bias = f(f"{name}/bias", rows)

    def ln(obj, name):
        obj.gamma = f(f"{name}/gamma", d)
        obj.beta = f(f"{name}/beta", d)

    e = spec.encoder
    e.conv1.weight = f("encoder/conv1/weight", d, 4, 3)
    e.conv1.bias = f("encoder/conv1/bias", d)
    e.conv2.weight = f("encoder/conv2/weight", d, d, 3)
    e.conv2.bias = f("encoder/conv2/bias", d)
    e.position_encodings.encodings = f("encoder/position_encodings/encodings", 10, d)
    ln(e.layer_norm, "encoder/layer_norm")
    layer = e.layer[0]
    lin(layer.self_attention.linear[0], "encoder/layer_0/self_attention/linear_0", 3 * d, d)
    lin(layer.self_attention.linear[1], "encoder/layer_0/self_attention/linear_1", d, d)
    ln(layer.self_attention.layer_norm, "encoder/layer_0/self_attention/layer_norm")
    lin(layer.ffn.linear_0, "encoder/layer_0/ffn/linear_0", 4 * d, d)
    lin(layer.ffn.linear_1, "encoder/layer_0/ffn/linear_1", d, 4 * d)
    ln(layer.ffn.layer_norm, "encoder/layer_0/ffn/layer_norm")
    dec = spec.decoder
    dec.embeddings.weight = f("decoder/embeddings/weight", 20, d)
    dec.position_encodings.encodings = f("decoder/position_encodings/encodings", 6, d)
    dec.projection.weight = dec.embeddings.weight  # tied: the serializer turns it into an alias
    ln(dec.layer_norm, "decoder/layer_norm")
    layer = dec.layer[0]
    lin(layer.self_attention.linear[0], "decoder/layer_0/self_attention/linear_0", 3 * d, d)
    lin(layer.self_attention.linear[1], "decoder/layer_0/self_attention/linear_1", d, d)
    ln(layer.self_attention.layer_norm, "decoder/layer_0/self_attention/layer_norm")
    lin(layer.attention.linear[0], "decoder/layer_0/attention/linear_0", d, d)
    lin(layer.attention.linear[1], "decoder/layer_0/attention/linear_1", 2 * d, d)
    lin(layer.attention.linear[2], "decoder/layer_0/attention/linear_2", d, d)
    ln(layer.attention.layer_norm, "decoder/layer_0/attention/layer_norm")
    lin(layer.ffn.linear_0, "decoder/layer_0/ffn/linear_0", 4 * d, d)
    lin(layer.ffn.linear_1, "decoder/layer_0/ffn/linear_1", d, 4 * d)
    ln(layer.ffn.layer_norm, "decoder/layer_0/ffn/layer_norm")
    spec.register_vocabulary([f"t{i}" for i in range(20)])
    spec.validate()
    spec.optimize(quantization="float16")
    spec.save(directory)
    return assigned


class OfficialWriterTest(unittest.TestCase):
    def test_reads_what_ctranslate2_writes(self):
        with tempfile.TemporaryDirectory() as tmp:
            assigned = official_whisper_spec(tmp)
            with Ct2Model(os.path.join(tmp, "model.bin")) as m:
                self.assertEqual((m.binary_version, m.spec, m.revision), (6, "WhisperSpec", 3))
                self.assertEqual(m.aliases, {"decoder/projection/weight": "decoder/embeddings/weight"})
                for name, value in assigned.items():
                    var = m.resolve(name)
                    self.assertEqual(var.dtype, "float16", name)
                    self.assertEqual(var.shape, value.shape, name)
                    np.testing.assert_array_equal(m.read_array(name), value.astype(np.float16), name)
                self.assertEqual(m.read_scalar("encoder/num_heads"), 2)
                self.assertEqual(m.read_scalar("decoder/activation"), 3)
                self.assertIs(m.resolve("decoder/projection/weight"), m.resolve("decoder/embeddings/weight"))
                # Every stored variable is either one we assigned or a scalar setting.
                for name, var in m.variables.items():
                    self.assertTrue(name in assigned or var.shape == (), name)


class HandWrittenTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, "model.bin")
        self.vars = {
            "a/weight": np.arange(12, dtype=np.float16).reshape(3, 4),
            "b/bias": np.array([1.5, -2.0], dtype=np.float32),
            "c/num": np.int16(7),
        }
        synthetic.write_ct2(self.path, self.vars, {"d/tied": "a/weight"})
        with open(self.path, "rb") as f:
            self.data = f.read()

    def write(self, data: bytes, name="model.bin") -> str:
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def assertError(self, path_or_paths, *fragments):
        with self.assertRaises(CheckpointError) as ctx:
            Ct2Model(path_or_paths).close()
        msg = str(ctx.exception)
        self.assertNotIn("\n", msg)
        for fragment in fragments:
            self.assertIn(fragment, msg)
        return msg

    def test_variables_and_aliases(self):
        with Ct2Model(self.path) as m:
            self.assertEqual(m.names(), ["a/weight", "b/bias", "c/num", "d/tied"])
            np.testing.assert_array_equal(m.read_array("d/tied"), self.vars["a/weight"])
            np.testing.assert_array_equal(m.read_array("b/bias"), self.vars["b/bias"])
            self.assertEqual(m.read_scalar("c/num"), 7)
            # A row range is a byte range.
            self.assertEqual(m.read_bytes("a/weight", 8, 8), self.vars["a/weight"][1].tobytes())

    def test_parts_split_anywhere_read_like_one_file(self):
        for cut in (3, 40, len(self.data) // 2, len(self.data) - 5):
            p1 = self.write(self.data[:cut], "model.bin.part1")
            p2 = self.write(self.data[cut:], "model.bin.part2")
            with Ct2Model([p1, p2]) as m:
                self.assertEqual(m.label, "model.bin.part1+model.bin.part2")
                for name, value in self.vars.items():
                    np.testing.assert_array_equal(m.read_array(name), value)

    def test_bad_version(self):
        self.assertError(self.write(struct.pack("<I", 5) + self.data[4:]), "model.bin", "bad version", "5")

    def test_truncated_everywhere(self):
        # Cut inside the header, a name, a shape, tensor data and the alias table.
        for cut in (0, 2, 6, 20, 40, len(self.data) - 30, len(self.data) - 1):
            path = self.write(self.data[:cut])
            msg = self.assertError(path, "model.bin")
            self.assertRegex(msg, "truncated|corrupt")

    def test_truncated_tensor_names_the_tensor(self):
        end_of_a = self.data.index(b"b/bias") - 2 - 10  # inside a/weight's data
        self.assertError(self.write(self.data[:end_of_a]), "truncated", "a/weight")

    def test_missing_second_part_is_a_short_read(self):
        p1 = self.write(self.data[: len(self.data) // 2], "model.bin.part1")
        self.assertError([p1], "truncated", "model.bin.part1")

    def test_trailing_bytes(self):
        self.assertError(self.write(self.data + b"\0\0"), "corrupt", "unexpected bytes")

    def test_unknown_dtype(self):
        synthetic.write_ct2(self.path, {"x": ((2,), 9, b"\0\0")})
        self.assertError(self.path, "corrupt", "'x'", "unknown dtype id 9")

    def test_byte_count_mismatch(self):
        synthetic.write_ct2(self.path, {"x": ((2,), 0, b"\0" * 4)})
        self.assertError(self.path, "corrupt", "'x'", "declares 4 bytes")

    def test_dangling_alias(self):
        synthetic.write_ct2(self.path, self.vars, {"e": "nope"})
        self.assertError(self.path, "corrupt", "'e'", "nope")

    def test_missing_file(self):
        self.assertError(os.path.join(self.tmp.name, "absent.bin"), "absent.bin", "cannot read")

    def test_empty_file(self):
        self.assertError(self.write(b""), "truncated", "too short")


if __name__ == "__main__":
    unittest.main()
