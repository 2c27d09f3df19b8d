"""A variant's generated encoder and decoder against openai-whisper's own `Whisper` model holding
the very same weights, on jfk.wav's log-mel: encoder memory, teacher-forced prefill logits (all
rows, and some rows in any order, repeated), incremental decode logits (self-K/V cache, cross-K/V
reused) within stated float32 bounds, and greedy tokens where the reference's top two logits are
not a near-tie. The weights are a real checkpoint (tiny.en) or, for a model whose real weights
this build cannot download, seeded values of its exact layout (ckw/checkpoints/seeded.py).
"""

import os
import sys
import unittest

import numpy as np

from ckw.runtime import abi

ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
# Relative bounds (max |ours - ref| / max |ref|): float32 with a different summation order over
# K up to 3072 per layer; measured about 7e-6 (tiny.en) and 1e-5 (small) for the encoder, 1e-6
# to 1.2e-5 for logits.
ENCODER_REL = 2e-4
LOGITS_REL = 2e-4
GREEDY_STEPS = 8
# A greedy pick is compared only where openai-whisper's top two logits are further apart than this
# (relative to the logits' scale): a nearer tie may fall either way under another summation order.
NEAR_TIE_REL = 1e-4


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
        cls.weights = os.path.abspath(ARGS["weights"])
        cls.ref = load_openai_whisper(os.path.dirname(cls.weights), verify=False)
        audio, rate = soundfile.read(ARGS["wav"], dtype="float32")
        assert rate == 16000
        mel = whisper.log_mel_spectrogram(torch.from_numpy(audio), cls.ref.dims.n_mels, padding=whisper.audio.N_SAMPLES)
        cls.mel = np.ascontiguousarray(mel[:, : whisper.audio.N_FRAMES].numpy())
        with torch.no_grad():
            cls.ref_memory = cls.ref.encoder(torch.from_numpy(cls.mel)[None])[0].numpy()
        variant = ARGS["variant"]
        cls.enc = abi.Library.for_model(os.path.abspath(ARGS["encoder"]), variant, "encoder")
        cls.dec = abi.Library.for_model(os.path.abspath(ARGS["decoder"]), variant, "decoder")
        cls.memory = cls.encode()

    @classmethod
    def handle(cls, lib):
        rc, h = lib.create(cls.weights)
        assert rc == abi.OK, rc
        return h

    @classmethod
    def encode(cls):
        memory = np.zeros_like(cls.ref_memory)
        h = cls.handle(cls.enc)
        try:
            assert cls.enc.call("run", h, cls.mel, memory) == abi.OK
        finally:
            cls.enc.call("free", h)
        return memory

    def reference_logits(self, tokens):
        with self.torch.no_grad():
            return self.ref.decoder(
                self.torch.from_numpy(np.asarray(tokens, np.int64)[None]), self.torch.from_numpy(self.ref_memory[None])
            )[0].numpy()

    def decoder(self):
        h = self.handle(self.dec)
        self.addCleanup(self.dec.call, "free", h)
        self.assertEqual(self.dec.call("set_encoder_memory", h, self.memory), abi.OK)
        return h

    def test_dimensions_are_the_models(self):
        d = self.ref.dims
        self.assertEqual(self.dec.dim("n_vocab"), d.n_vocab)
        self.assertEqual(self.dec.dim("n_layers"), d.n_text_layer)
        self.assertEqual(self.enc.dim("d_model"), d.n_audio_state)
        print(f"{ARGS['variant']}: {d}", file=sys.stderr)

    def test_encoder_matches(self):
        err = rel_err(self.memory, self.ref_memory)
        print(f"encoder relative max error {err:.2e}", file=sys.stderr)
        self.assertLess(err, ENCODER_REL)

    def test_prefill_and_decode_logits_match(self):
        tokens = np.array([50258, 50259, 50359, 50363, 400, 370, 452, 7829], np.int32)
        ref = self.reference_logits(tokens)
        h = self.decoder()
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
        self.assertEqual(self.dec.call("reset", h), abi.OK)
        part = np.zeros((2, full.shape[1]), np.float32)
        self.assertEqual(self.dec.call("prefill", h, tokens[:2], every[:2], 2, 2, None, part), abi.OK)
        step = np.zeros((1, full.shape[1]), np.float32)
        worst = 0.0
        for i in range(2, len(tokens)):
            self.assertEqual(self.dec.call("decode", h, tokens[i : i + 1], 1, step), abi.OK)
            worst = max(worst, rel_err(step[0], ref[i]))
        print(f"decode step logits relative max error {worst:.2e}", file=sys.stderr)
        self.assertLess(worst, LOGITS_REL)
        self.assertEqual(self.dec.call("cross_kv_projections", h), 1)

    def test_greedy_tokens_match_where_not_a_near_tie(self):
        prompt = [50258, 50259, 50359, 50363]
        h = self.decoder()
        step = np.zeros((1, self.dec.dim("n_vocab")), np.float32)
        rows = np.array([len(prompt) - 1], np.int32)
        tokens = list(prompt)
        self.assertEqual(
            self.dec.call("prefill", h, np.array(prompt, np.int32), rows, 1, len(prompt), None, step), abi.OK
        )
        compared = 0
        for _ in range(GREEDY_STEPS):
            ref = self.reference_logits(tokens)[-1]
            top2 = np.sort(ref)[-2:]
            ours = int(np.argmax(step[0]))
            if top2[1] - top2[0] > NEAR_TIE_REL * np.abs(ref).max():
                self.assertEqual(ours, int(np.argmax(ref)), f"greedy step {len(tokens) - len(prompt)}")
                compared += 1
            tokens.append(int(np.argmax(ref)))  # both sides follow the reference's pick
            self.assertEqual(self.dec.call("decode", h, np.array(tokens[-1:], np.int32), 1, step), abi.OK)
        print(
            f"greedy: {compared} of {GREEDY_STEPS} picks compared (the rest near-ties): {tokens[len(prompt) :]}",
            file=sys.stderr,
        )
        self.assertGreater(compared, GREEDY_STEPS // 2)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
