"""The compiled tiny.en encoder and decoder against openai-whisper (PyTorch) holding the very
same weights, on jfk.wav: encoder memory, teacher-forced prefill logits, and incremental
decode logits (self-KV cache, reused cross-K/V cache) all within stated float32 bounds."""

import json
import os
import sys
import unittest

import numpy as np

from runtime import abi

ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
# Relative bounds (max |ours - ref| / max |ref|): float32 with a different summation order over
# K up to 1536 per layer; measured about 7e-6 for the encoder, 4e-6 for logits.
ENCODER_REL = 2e-4
LOGITS_REL = 2e-4


def rel_err(ours, ref):
    return float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-6))


class ParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import soundfile
        import torch
        import whisper

        from models.whisper.reference.openai_whisper_ref import load_openai_whisper

        torch.set_num_threads(1)
        cls.torch = torch
        checkpoint_dir = os.path.dirname(os.path.abspath(ARGS["weights"]))
        cls.ref = load_openai_whisper(checkpoint_dir, verify=False)
        audio, rate = soundfile.read(ARGS["wav"], dtype="float32")
        assert rate == 16000
        mel = whisper.log_mel_spectrogram(torch.from_numpy(audio), padding=whisper.audio.N_SAMPLES)
        cls.mel = np.ascontiguousarray(mel[:, : whisper.audio.N_FRAMES].numpy())
        with torch.no_grad():
            cls.ref_memory = cls.ref.encoder(torch.from_numpy(cls.mel)[None])[0].numpy()
        cls.enc = abi.Library.for_model(os.path.abspath(ARGS["encoder"]), "tiny", "encoder")
        cls.dec = abi.Library.for_model(os.path.abspath(ARGS["decoder"]), "tiny", "decoder")

    def handle(self, lib):
        rc, h = lib.create(ARGS["weights"])
        self.assertEqual(rc, abi.OK)
        self.addCleanup(lib.call, "free", h)
        return h

    def encode(self):
        memory = np.zeros_like(self.ref_memory)
        self.assertEqual(self.enc.call("run", self.handle(self.enc), self.mel, memory), abi.OK)
        return memory

    def test_encoder_matches(self):
        err = rel_err(self.encode(), self.ref_memory)
        print(f"encoder relative max error {err:.2e}", file=sys.stderr)
        self.assertLess(err, ENCODER_REL)

    def test_decoder_prefill_and_decode_match(self):
        memory = self.encode()
        with open(ARGS["config"]) as f:
            config = json.load(f)
        # <|startoftranscript|> <|notimestamps|>, then text tokens (" And so my fellow").
        tokens = np.array([config["sot"], config["no_timestamps"], 400, 370, 452, 7829], np.int32)
        with self.torch.no_grad():
            ref = self.ref.decoder(self.torch.from_numpy(tokens[None].astype(np.int64)),
                                   self.torch.from_numpy(self.ref_memory[None]))[0].numpy()
        h = self.handle(self.dec)
        self.assertEqual(self.dec.call("set_encoder_memory", h, memory), abi.OK)
        full = np.zeros((len(tokens), self.dec.dim("n_vocab")), np.float32)
        every = np.arange(len(tokens), dtype=np.int32)
        self.assertEqual(self.dec.call("prefill", h, tokens, every, every.size, len(tokens), None, full), abi.OK)
        print(f"prefill logits relative max error {rel_err(full, ref):.2e}", file=sys.stderr)
        self.assertLess(rel_err(full, ref), LOGITS_REL)
        # Only some rows, in any order, repeated: each is that position's logits.
        rows = np.array([5, 0, 5], np.int32)
        some = np.zeros((rows.size, full.shape[1]), np.float32)
        self.assertEqual(self.dec.call("reset", h), abi.OK)
        self.assertEqual(self.dec.call("prefill", h, tokens, rows, rows.size, len(tokens), None, some), abi.OK)
        self.assertLess(rel_err(some, ref[rows]), LOGITS_REL)
        # Incremental: prefill two tokens, then one decode step per token.
        self.assertEqual(self.dec.call("reset", h), abi.OK)
        part = np.zeros((2, full.shape[1]), np.float32)
        self.assertEqual(self.dec.call("prefill", h, tokens[:2], every[:2], 2, 2, None, part), abi.OK)
        step = np.zeros((1, full.shape[1]), np.float32)
        for i in range(2, len(tokens)):
            self.assertEqual(self.dec.call("decode", h, tokens[i:i + 1], 1, step), abi.OK)
            self.assertLess(rel_err(step[0], ref[i]), LOGITS_REL, f"decode step {i}")
        self.assertEqual(self.dec.call("cross_kv_projections", h), 1)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
