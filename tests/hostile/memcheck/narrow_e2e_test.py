"""The narrow drivers (//tests/hostile/memcheck:narrow_e2e and :narrow_bf16_e2e) natively on
jfk.wav: they run clean, and their greedy tokens (random weights: any ids, up to the driver's 48)
are the same on 1 and 2 threads (valgrind's step runs them on one and compares with a native run)."""

import os
import subprocess

import pytest

from ckw import runfiles


def tokens(variant: str, threads: int) -> list[int]:
    here = "tests/hostile/memcheck"
    proc = subprocess.run(
        [
            runfiles.locate("ckw", f"{here}/{variant}_e2e"),
            runfiles.locate("ckw", f"{here}/{variant}_checkpoint/weights.bin"),
            runfiles.locate("test_audio", "jfk.wav"),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "CKW_NUM_THREADS": str(threads)},
    )
    assert proc.returncode == 0, proc.stderr
    return [int(t) for t in proc.stdout.split()]


@pytest.mark.parametrize("variant", ["narrow", "narrow_bf16"])
def test_runs_and_threads_give_the_same_tokens(variant):
    one = tokens(variant, 1)
    assert 1 <= len(one) <= 48 and all(0 <= t < 51864 for t in one)
    assert tokens(variant, 2) == one
