"""//tools:benchmark_e2e end to end at its smallest (tiny, one timed round, a 30 s long-form row): every
engine gives every stage it exposes, the table and the JSON agree, the texts match on jfk.wav;
whisper.cpp's q8_0 and q5_1 files (made by the run) on the greedy clip rows, f16 on those and long-form."""

import json
import subprocess

import pytest

from ckw import runfiles

STAGES = ("frontend", "encoder", "prefill", "decode_per_token", "total")
WHISPER_CPP = ("whisper.cpp-f16", "whisper.cpp-q8_0", "whisper.cpp-q5_1")
PEERS = ("fw-fp32", "fw-int8") + WHISPER_CPP


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    cmd = [
        runfiles.locate("ckw", "tools/benchmark_e2e"),
        "--models=tiny",
        "--runs=1",
        "--long_minutes=0.5",
        "--pause_ms=0",
        f"--json={out}",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    print(result.stdout, result.stderr[-3000:])
    assert result.returncode == 0
    with open(out, encoding="utf-8") as f:
        return result.stdout, json.load(f)


def test_rows_engines_and_stages(run):
    _, report = run
    assert [(r["model"], r["long_form"], r["beam_size"], r["precision"]) for r in report["rows"]] == [
        ("tiny", False, None, "fp32"),
        ("tiny", False, None, "bf16"),
        ("tiny", False, None, "int8"),
        ("tiny", False, 5, "fp32"),
        ("tiny", True, None, "fp32"),
    ]
    greedy, bf16, int8, beams, long_form = report["rows"]
    # The bf16 and int8 builds against the peers and the fp32 build, on the same clip.
    for row, label in ((bf16, "ckw-bf16"), (int8, "ckw-int8")):
        assert list(row["engines"]) == [label, "ckw", *PEERS]
        assert set(row["ratios"]) == {"ckw", *PEERS}
        assert all(row["engines"][label]["median_ms"][s] is not None for s in STAGES)
        for engine in ("ckw",) + WHISPER_CPP:  # the same engines on the same clip as in the fp32 row
            assert row["engines"][engine]["text"] == greedy["engines"][engine]["text"], engine
    assert list(beams["engines"]) == ["ckw-b5", "ckw", "fw-fp32-b5", "fw-int8-b5"]
    # One decoder call per step for all five beams: about as many calls as greedy makes, not five times.
    b5, b1 = (beams["engines"][e]["runs"][0]["decode_steps"] for e in ("ckw-b5", "ckw"))
    assert b1 / 2 < b5 < 2 * b1
    assert beams["engines"]["ckw-b5"]["text"] == greedy["engines"]["ckw"]["text"]  # jfk: beams agree
    for row, whisper_cpp in ((greedy, WHISPER_CPP), (long_form, WHISPER_CPP[:1])):  # quantized: clip rows only
        engines = row["engines"]
        assert list(engines) == ["ckw", "fw-fp32", "fw-int8", *whisper_cpp]
        for label in ("ckw",) + whisper_cpp:
            assert all(engines[label]["median_ms"][s] is not None for s in STAGES), label
            assert label == "ckw" or row["ratios"][label]["total"] == pytest.approx(
                engines["ckw"]["median_ms"]["total"] / engines[label]["median_ms"]["total"]
            )
        for label in ("fw-fp32", "fw-int8"):
            ms = engines[label]["median_ms"]
            assert ms["prefill"] is None and ms["encoder"] > 0 and ms["total"] > 0
            assert engines[label]["derived"] == ["decode_per_token"]
        assert set(row["ratios"]) == {"fw-fp32", "fw-int8", *whisper_cpp}
        assert len(engines["ckw"]["runs"]) == 1 and row["sgemm"]["gflops"] > 0
        assert row["encoder_gflop"] == pytest.approx(36.94, abs=0.01)
    # The yardsticks: the read bandwidth in every row, a decoder step's bytes and floor on ckw's one-window rows.
    assert all(row["read"]["gbps"] > 0 for row in report["rows"])
    assert set(greedy["decode_floors"]) == {"ckw"} and set(bf16["decode_floors"]) == {"ckw-bf16", "ckw"}
    assert set(int8["decode_floors"]) == {"ckw-int8", "ckw"}
    assert set(beams["decode_floors"]) == {"ckw-b5", "ckw"} and long_form["decode_floors"] == {}
    one, five = greedy["decode_floors"]["ckw"]["bytes"], beams["decode_floors"]["ckw-b5"]["bytes"]
    assert five["weights"] == one["weights"] > 0 and five["cross_kv"] == one["cross_kv"] > 0
    assert five["self_kv"] > 4 * one["self_kv"] > 0  # every beam's own (prompts of equal length)
    assert greedy["decode_floors"]["ckw"]["share_of_read"] > 0
    assert long_form["seconds"] == 30.0
    assert report["ggml_type"] == "f16, q8_0, q5_1"
    made = report["ggml"]["tiny"]
    assert {k: (v["ftype"], v["header_ftype"]) for k, v in made.items()} == {
        "f16": ("f16", 1),
        "q8_0": ("q8_0", 2007),
        "q5_1": ("q5_1", 2009),
    }
    assert made["q5_1"]["bytes"] < made["q8_0"]["bytes"] < made["f16"]["bytes"]
    assert report["ckw_isa"] in ("avx512", "avx2", "scalar")


def test_table_names_the_machine_and_agrees_on_jfk(run):
    text, report = run
    assert report["machine"]["model"] in text and f"ckw ISA path: {report['ckw_isa']}" in text
    assert "OpenBLAS sgemm 1500x384x1536 on 2 threads" in text
    assert "memory read: " in text and "decode ckw: a step reads " in text
    jfk = text.split("tiny · jfk.wav")[1].split("tiny · ")[0]
    for peer in PEERS:
        assert f"text {peer}: = ckw" in jfk
    assert "ggml files: f16, q8_0, q5_1, converted" in text
