"""//tests/hostile/memcheck:tiny_e2e natively on jfk.wav: it runs clean and its greedy tokens
decode to jfk's words (the MSan step, .ci/steps/msan.sh, then compares its run with a native one)."""

import json
import os
import subprocess

from ckw import runfiles
from ckw.runtime.tokenizer import WhisperTokenizer


def test_tiny_e2e_transcribes_jfk():
    weights = runfiles.locate("whisper_tiny", "weights.bin")
    checkpoint = os.path.dirname(weights)
    proc = subprocess.run(
        [runfiles.locate("ckw", "tests/hostile/memcheck/tiny_e2e"), weights, runfiles.locate("test_audio", "jfk.wav")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    tokens = [int(t) for t in proc.stdout.split()]
    with open(os.path.join(checkpoint, "model_config.json"), encoding="utf-8") as f:
        tokenizer = WhisperTokenizer(os.path.join(checkpoint, "tokenizer.json"), json.load(f))
    assert tokens[-1] == tokenizer.eot
    assert "ask not what your country can do for you" in tokenizer.decode(tokens[:-1])
