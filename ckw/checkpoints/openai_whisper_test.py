"""The proof that the conversion is right: openai-whisper (PyTorch) loaded with the packed
weights transcribes jfk.wav greedily to the known text.

One Bazel target per variant selects its test with `-k` (each has only its own checkpoint).
Decoding is openai-whisper's own `decode()` with temperature 0 (greedy) and no timestamps;
English-only tiny.en is told the language, multilingual base must detect English itself.
"""

import os
import unittest
import wave

import numpy as np

from ckw.checkpoints.packed import PackedCheckpoint, runfiles_checkpoint_dir
from models.whisper.reference.openai_whisper_ref import load_openai_whisper

EXPECTED = {
    "tiny": "And so my fellow Americans ask not what your country can do for you, "
    "ask what you can do for your country.",
    "base": "And so my fellow Americans, ask not what your country can do for you, "
    "ask what you can do for your country.",
}


def runfile(repo: str, path: str) -> str:
    for root in (os.environ.get("TEST_SRCDIR"), os.environ.get("RUNFILES_DIR")):
        if root:
            for candidate in (os.path.join(root, repo, path), os.path.join(root, "ckw", "external", repo, path)):
                if os.path.exists(candidate):
                    return candidate
    raise FileNotFoundError(f"@{repo}//:{path} not in runfiles; add it to data")


def read_wav_16k_mono(path: str) -> np.ndarray:
    with wave.open(path) as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (16000, 1, 2):
            raise ValueError(f"{path}: expected 16 kHz mono PCM16")
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
    return pcm.astype(np.float32) / 32768.0


class OpenAIWhisperTest(unittest.TestCase):
    def check_greedy_jfk(self, variant: str) -> None:
        import torch
        import whisper

        torch.set_num_threads(2)
        directory = runfiles_checkpoint_dir(variant)
        model = load_openai_whisper(directory)
        packed = PackedCheckpoint(directory, verify=False)
        # The reference holds exactly the packed bits.
        np.testing.assert_array_equal(
            model.decoder.token_embedding.weight.detach().numpy(), packed.tensor("model.decoder.embed_tokens.weight")
        )
        self.assertEqual(model.is_multilingual, packed.config["is_multilingual"])

        audio = torch.from_numpy(read_wav_16k_mono(runfile("test_audio", "jfk.wav")))
        mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(audio), model.dims.n_mels)
        options = whisper.DecodingOptions(
            temperature=0.0,
            fp16=False,
            without_timestamps=True,
            language=None if model.is_multilingual else "en",
        )
        result = whisper.decode(model, mel, options)
        print(f"{variant}: {len(result.tokens)} tokens: {result.text!r}")
        self.assertEqual(result.language, "en")
        self.assertEqual(result.text, EXPECTED[variant])
        self.assertNotIn(packed.config["eot"], result.tokens)  # text tokens only, read ids from the config

    def test_tiny(self):
        self.check_greedy_jfk("tiny")

    def test_base(self):
        self.check_greedy_jfk("base")


if __name__ == "__main__":
    unittest.main()
