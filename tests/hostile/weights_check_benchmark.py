"""What the weights check costs at every start, against its peers measured in the same run.

    ./bazelw run //tests/hostile:weights_check_benchmark -- --runs 5

Per variant, the median over --runs of:
  read      one pass over weights.bin (numpy sum of the mapped file as uint64): the floor;
  create    the encoder and decoder libraries' create(): mmap, exact size, the manifest's hash and
            the XXH64 of every tensor each reads (the check every start pays);
  sha256    hashlib.sha256 over every tensor (what --verify_weights adds, less its layout checks).
The file is in the page cache for all three (a first read warms it).
"""

import hashlib
import statistics
import sys
import time

import numpy as np
from absl import app, flags

from ckw import runfiles
from ckw.runtime import abi

FLAGS = flags.FLAGS
flags.DEFINE_integer("runs", 5, "Timed repetitions per measurement (the median is printed).")


def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times)


def measure(variant, runs):
    weights = runfiles.locate(f"whisper_{variant}", "weights.bin")
    mapped = np.memmap(weights, dtype=np.uint8, mode="r")
    libs = [
        abi.Library.for_model(runfiles.locate("ckw", f"models/whisper/libckw_{variant}_{part}.so"), variant, part)
        for part in ("encoder", "decoder")
    ]

    def read():
        return int(mapped[: mapped.size // 8 * 8].view(np.uint64).sum())

    def create():
        for lib in libs:
            abi.Handle(lib, weights, threads=1).close()

    def sha256():
        for start in range(0, mapped.size, 1 << 24):
            hashlib.sha256(mapped[start : start + (1 << 24)]).digest()

    read()  # page cache
    return {
        "read": median_ms(read, runs),
        "create": median_ms(create, runs),
        "sha256": median_ms(sha256, runs),
        "mb": mapped.size / 1e6,
    }


def main(argv):
    del argv
    print(
        f"{'variant':8} {'MB':>7} {'read ms':>9} {'create ms':>10} {'sha256 ms':>10} {'create/read':>12} "
        f"{'sha256/create':>14}"
    )
    for variant in ("tiny", "base"):
        m = measure(variant, FLAGS.runs)
        print(
            f"{variant:8} {m['mb']:7.1f} {m['read']:9.1f} {m['create']:10.1f} {m['sha256']:10.1f} "
            f"{m['create'] / m['read']:12.2f} {m['sha256'] / m['create']:14.2f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
