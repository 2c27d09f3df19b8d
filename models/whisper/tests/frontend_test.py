"""The generated frontend (WAV bytes -> log-mel, whole recording) against openai-whisper's
log_mel_spectrogram(audio, n_mels, padding=N_SAMPLES) on jfk.wav, the shape query, other
formats, and a malformed file's error; for the library, symbol prefix and band count in the
arguments (80 or 128 bands)."""

import ctypes
import os
import sys
import unittest

import numpy as np

from ckw.runtime import abi

ARGS = {}
for _arg in sys.argv[1:]:  # "name=path", or a bare path continuing the previous name's list
    if "=" in _arg:
        _key, _value = _arg.split("=", 1)
        ARGS[_key] = _value
    else:
        ARGS[_key] += "," + _arg
N_MELS = int(ARGS["n_mels"])
# log-mel is (log10 + 4) / 4 of float32 sums; measured max abs error about 3e-5 on jfk.wav.
MEL_ABS = 1e-4


class FrontendTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The one ctypes table, built from the library's own ABI data (ckw/runtime/abi.py).
        cls.lib = abi.Library(os.path.abspath(ARGS["frontend"]), ARGS["prefix"], "frontend")
        cls.handle = abi.Handle(cls.lib)

    @classmethod
    def tearDownClass(cls):
        cls.handle.close()

    def call(self, name, *args):
        return self.lib.call(name, self.handle.h, *args)

    def mel(self, data: bytes):
        wav = np.frombuffer(data, np.uint8)
        shape = (ctypes.c_int64 * 2)()
        rc = self.call("run_shape", wav, wav.size, shape)
        if rc:
            return rc, None
        out = np.zeros((shape[0], shape[1]), np.float32)
        rc = self.call("run", wav, wav.size, out, out.size)
        return rc, out

    def test_jfk_matches_openai_whisper(self):
        import soundfile
        import torch
        import whisper

        data = open(ARGS["jfk"], "rb").read()
        rc, ours = self.mel(data)
        self.assertEqual(rc, 0)
        audio, _ = soundfile.read(ARGS["jfk"], dtype="float32")
        ref = whisper.log_mel_spectrogram(torch.from_numpy(audio), N_MELS, padding=whisper.audio.N_SAMPLES).numpy()
        self.assertEqual(ours.shape, ref.shape)
        err = float(np.abs(ours - ref).max())
        print(f"frontend max abs error {err:.2e}", file=sys.stderr)
        self.assertLess(err, MEL_ABS)

    def test_other_rates_and_channels(self):
        wavs = [p for p in ARGS["formats"].split(",") if p.endswith(".wav")]
        self.assertGreaterEqual(len(wavs), 2)
        for path in wavs:
            data = open(path, "rb").read()
            rc, ours = self.mel(data)
            self.assertEqual(rc, 0, path)
            self.assertEqual(ours.shape[0], N_MELS)
            self.assertGreater(ours.shape[1], 3000)
            self.assertTrue(np.isfinite(ours).all(), path)

    def test_capacity_is_checked(self):
        data = open(ARGS["jfk"], "rb").read()
        small = np.zeros((N_MELS, 10), np.float32)
        wav = np.frombuffer(data, np.uint8)
        self.assertEqual(self.call("run", wav, wav.size, small, small.size), abi.E_ARGUMENT)

    def test_malformed_wav_reports_the_parser_error(self):
        rc, _ = self.mel(b"RIFF\x10\x00\x00\x00WAVEjunk")
        self.assertEqual(rc, abi.E_KERNEL)
        self.assertTrue(self.call("last_error"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
