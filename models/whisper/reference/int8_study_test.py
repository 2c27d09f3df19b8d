"""//models/whisper/reference:int8_study at its smallest (tiny, 3 clips): the table's rows, parsed from its output."""

import subprocess

import pytest

from ckw import runfiles


def study(*args) -> subprocess.CompletedProcess:
    cmd = [
        runfiles.locate("ckw", "models/whisper/reference/int8_study"),
        "--model=tiny",
        "--clips=3",
        "--threads=1",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def rows() -> dict:
    result = study("--schemes=float32,int8,bf16")
    print(result.stdout, result.stderr[-2000:])
    assert result.returncode == 0
    out = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] in ("float32", "int8", "bf16"):
            wer, gap, agree, disagree, kl = (float(x) for x in fields[1:])
            out[fields[0]] = dict(wer=wer, gap=gap, agree=agree, disagree=disagree, kl=kl)
    return out


def test_float32_scheme_is_the_reference_exactly(rows):
    assert rows["float32"] == dict(wer=rows["float32"]["wer"], gap=0.0, agree=100.0, disagree=0.0, kl=0.0)


def test_int8_moves_the_next_token_distribution_more_than_bf16(rows):
    assert 0.0 < rows["bf16"]["kl"] < rows["int8"]["kl"] < 0.1
    assert 90.0 < rows["int8"]["agree"] <= 100.0 and rows["bf16"]["agree"] >= rows["int8"]["agree"]


def test_unknown_scheme_is_one_line():
    result = study("--schemes=int4")
    assert result.returncode != 0
    assert (
        result.stderr.strip().splitlines()[-1] == "--schemes: int4 unknown; choose from "
        "float32, int8, int8-f32-logits, int8-f32-logits-input, int8-logits-input-g32, int8-weights-only, "
        "int8-mse-scales, int8-mse-weights-only, int8-act-only, int8-act-g64, int8-act-g32, int8-g32, bf16"
    )
