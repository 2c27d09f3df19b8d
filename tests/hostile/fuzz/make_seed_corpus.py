"""Writes the fuzzers' seed corpus: small WAV files made from numbers (no audio is committed),
one per format the parser accepts and one per way a header can be broken, so libFuzzer starts
from every branch of the parser instead of discovering RIFF from scratch.

    make_seed_corpus.py --out_dir DIR
"""

import argparse
import os
import struct

import numpy as np

from tests.hostile import wav_builder as wb

RATE = 8000


def tone(n=200, channels=1):
    t = np.arange(n) / RATE
    x = 0.5 * np.sin(2 * np.pi * 440 * t)
    return np.repeat(x[:, None], channels, axis=1) if channels > 1 else x


def extensible(sub_tag=wb.PCM, bits=16, valid_bits=16, channels=2):
    guid_tail = bytes([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
    block = channels * bits // 8
    body = struct.pack("<HHIIHHHHI", 0xFFFE, channels, RATE, RATE * block, block, bits, 22, valid_bits, 3)
    body += struct.pack("<H", sub_tag) + guid_tail
    data = (np.round(tone(100, channels) * 32767).astype("<i2")).tobytes()
    return wb.riff(b"fmt " + struct.pack("<I", len(body)) + body, wb.chunk(b"data", data))


def seeds() -> dict:
    x = tone()
    canonical = wb.wav(x, RATE)
    return {
        "pcm8.wav": wb.wav(x, RATE, bits=8),
        "pcm16.wav": canonical,
        "pcm24.wav": wb.wav(x, RATE, bits=24),
        "pcm32.wav": wb.wav(x, RATE, bits=32),
        "float32.wav": wb.wav(x, RATE, 32, wb.IEEE_FLOAT),
        "float64.wav": wb.wav(x, RATE, 64, wb.IEEE_FLOAT),
        "stereo.wav": wb.wav(tone(channels=2), RATE),
        "six_channels.wav": wb.wav(tone(50, channels=6), 48000),
        "rate_1hz.wav": wb.wav(x[:20], 1),
        "rate_768khz.wav": wb.wav(x, 768000),
        "rate_44100.wav": wb.wav(x, 44100),
        "extensible_pcm.wav": extensible(),
        "extensible_float.wav": extensible(wb.IEEE_FLOAT, 32, 32, 1),
        "list_chunk_odd.wav": wb.wav(x, RATE, extra_chunks=(wb.chunk(b"LIST", b"INFOodd"),)),
        "streamed.wav": wb.wav(x, RATE, declared_data=0xFFFFFFFF),
        "empty_data.wav": wb.wav(np.zeros(0), RATE),
        "float_nan.wav": wb.wav(np.array([0.1, np.nan, 0.2]), RATE, 32, wb.IEEE_FLOAT),
        "header_only.wav": canonical[:44],
        "truncated.wav": canonical[:-7],
        "chunk_4gib.wav": wb.wav(x, RATE, extra_chunks=(wb.chunk(b"LIST", b"", 0xFFFFFFF0),)),
        "zero_channels.wav": wb.riff(wb.fmt_chunk(wb.PCM, 0, RATE, 16, 2), wb.chunk(b"data", bytes(16))),
        "zero_rate.wav": wb.riff(wb.fmt_chunk(wb.PCM, 1, 0, 16), wb.chunk(b"data", bytes(16))),
        "bits7.wav": wb.riff(wb.fmt_chunk(wb.PCM, 1, RATE, 7, 1), wb.chunk(b"data", bytes(16))),
        "no_fmt.wav": wb.riff(wb.chunk(b"data", bytes(16))),
        "two_data.wav": wb.riff(
            wb.fmt_chunk(wb.PCM, 1, RATE, 16), wb.chunk(b"data", bytes(4)), wb.chunk(b"data", bytes(4))
        ),
        "rifx.wav": b"RIFX" + canonical[4:],
        "not_riff.bin": b"fLaC" + bytes(60),
        "riff_size_zero.wav": canonical[:4] + bytes(4) + canonical[8:],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out_dir", required=True)
    out = p.parse_args().out_dir
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
