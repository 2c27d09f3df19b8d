"""The generated frontend (WAV bytes -> log-mel, whole recording) against openai-whisper's
log_mel_spectrogram(audio, padding=N_SAMPLES) on jfk.wav, the shape query, other formats, and
a malformed file's error."""

import ctypes
import os
import sys
import unittest

import numpy as np

ARGS = {}
for _arg in sys.argv[1:]:  # "name=path", or a bare path continuing the previous name's list
    if "=" in _arg:
        _key, _value = _arg.split("=", 1)
        ARGS[_key] = _value
    else:
        ARGS[_key] += "," + _arg
PREFIX = "ckw_whisper_frontend_"
E_KERNEL = -9
# log-mel is (log10 + 4) / 4 of float32 sums; measured max abs error about 3e-5 on jfk.wav.
MEL_ABS = 1e-4


class FrontendTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lib = ctypes.CDLL(os.path.abspath(ARGS["frontend"]))
        h = ctypes.c_void_p
        u8 = ctypes.c_char_p
        f32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
        i64p = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
        sig = {
            "create": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(h)], ctypes.c_int),
            "free": ([h], None),
            "run_shape": ([h, u8, ctypes.c_int64, i64p], ctypes.c_int),
            "run": ([h, u8, ctypes.c_int64, f32, ctypes.c_int64], ctypes.c_int),
            "last_error": ([h], ctypes.c_char_p),
        }
        for name, (args, res) in sig.items():
            fn = getattr(lib, PREFIX + name)
            fn.argtypes, fn.restype = args, res
        cls.lib = lib
        cls.h = h()
        assert lib.ckw_whisper_frontend_create(None, None, ctypes.byref(cls.h)) == 0

    @classmethod
    def tearDownClass(cls):
        cls.lib.ckw_whisper_frontend_free(cls.h)

    def mel(self, data: bytes):
        shape = np.zeros(2, np.int64)
        rc = self.lib.ckw_whisper_frontend_run_shape(self.h, data, len(data), shape)
        if rc:
            return rc, None
        out = np.zeros(tuple(shape), np.float32)
        rc = self.lib.ckw_whisper_frontend_run(self.h, data, len(data), out, out.size)
        return rc, out

    def test_jfk_matches_openai_whisper(self):
        import soundfile
        import torch
        import whisper

        data = open(ARGS["jfk"], "rb").read()
        rc, ours = self.mel(data)
        self.assertEqual(rc, 0)
        audio, _ = soundfile.read(ARGS["jfk"], dtype="float32")
        ref = whisper.log_mel_spectrogram(torch.from_numpy(audio), padding=whisper.audio.N_SAMPLES).numpy()
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
            self.assertEqual(ours.shape[0], 80)
            self.assertGreater(ours.shape[1], 3000)
            self.assertTrue(np.isfinite(ours).all(), path)

    def test_capacity_is_checked(self):
        data = open(ARGS["jfk"], "rb").read()
        small = np.zeros((80, 10), np.float32)
        self.assertEqual(self.lib.ckw_whisper_frontend_run(self.h, data, len(data), small, small.size), -1)

    def test_malformed_wav_reports_the_parser_error(self):
        rc, _ = self.mel(b"RIFF\x10\x00\x00\x00WAVEjunk")
        self.assertEqual(rc, E_KERNEL)
        self.assertTrue(self.lib.ckw_whisper_frontend_last_error(self.h))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
