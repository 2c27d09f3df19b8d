"""//tools:benchmark_sizes end to end at its smallest: seeded tiny, 8 forced tokens, one run. Every
engine decodes exactly the forced count (ckw in 7 decoder calls after prefill), every number the
table needs is there, and --from_json prints the same table. Nothing here is timed."""

import json
import subprocess

import pytest

from ckw import runfiles

TOKENS = 8


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sizes") / "sizes.json"
    binary = runfiles.locate("ckw", "tools/benchmark_sizes")
    cmd = [binary, "--synthetic=tiny", f"--decode_tokens={TOKENS}", "--runs=1", f"--json={out}"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    print(result.stdout, result.stderr[-3000:])
    assert result.returncode == 0
    with open(out, encoding="utf-8") as f:
        return binary, out, result.stdout, json.load(f)


def test_every_engine_decodes_the_forced_count(run):
    _, _, _, report = run
    (row,) = report["rows"]
    assert list(row["engines"]) == ["ckw", "fw-fp32", "fw-int8"]
    for label, engine in row["engines"].items():
        assert engine["tokens"] == [TOKENS], label
    assert row["engines"]["ckw"]["decode_calls"] == [TOKENS - 1]


def test_the_table_has_what_the_targets_need(run):
    _, _, stdout, report = run
    row = report["rows"][0]
    assert row["model"] == "tiny" and row["layers"] == "4,4" and row["full_depth"]
    assert row["sgemm_gflops"] > 0 and row["read_gbps"] > 0 and row["decode_floor_ms"] > 0
    # tiny's decoder: 4 layers of 14 d x d f16 GEMMs plus the f16 embedding, and f32 cross K/V.
    b = row["decode_bytes_per_step"]
    assert b["weights"] > 2 * (4 * 14 * 384 * 384 + 51864 * 384)
    assert b["cross_kv"] == 4 * 2 * 1500 * 384 * 4
    for engine in row["engines"].values():
        assert engine["peak_rss_mb"] > 0 and engine["encoder_gflops"] > 0
    assert "CPU:" in stdout and "| tiny (4,4) | ckw |" in stdout


def test_from_json_prints_the_same_table(run):
    binary, out, stdout, _ = run
    again = subprocess.run([binary, f"--from_json={out}"], capture_output=True, text=True, check=True)
    assert again.stdout.strip() == stdout.strip()
