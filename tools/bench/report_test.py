"""The table's arithmetic without engines: the encoder FLOP count, ckw's ISA rule, whisper.cpp's timing
lines, medians, ratios and the rendered table."""

from tools.bench import report, sgemm
from tools.bench.whispercpp_peer import parse_timings

TINY = {"n_audio_state": 384, "n_mels": 80, "n_audio_layer": 4, "n_audio_ctx": 1500}
BASE = {"n_audio_state": 512, "n_mels": 80, "n_audio_layer": 6, "n_audio_ctx": 1500}

WHISPER_CPP_TIMINGS = """
whisper_print_timings:     load time =   163.41 ms
whisper_print_timings:     fallbacks =   0 p /   0 h
whisper_print_timings:      mel time =    97.54 ms
whisper_print_timings:   sample time =    33.23 ms /     1 runs (    33.23 ms per run)
whisper_print_timings:   encode time =  3308.76 ms /     2 runs (  1654.38 ms per run)
whisper_print_timings:   decode time =  3314.12 ms /    48 runs (    69.04 ms per run)
whisper_print_timings:   batchd time =   413.06 ms /     4 runs (   103.26 ms per run)
whisper_print_timings:   prompt time =     0.00 ms /     1 runs (     0.00 ms per run)
whisper_print_timings:    total time =  7420.95 ms
"""


def test_encoder_flops_by_hand():
    # conv1 2*3000*80*3*384, conv2 2*1500*384*3*384, per block: Q K V O 4*2*1500*384^2,
    # scores and weighted sum 2*2*1500^2*384, MLP 2*2*1500*384*1536.
    per_block = 4 * 2 * 1500 * 384**2 + 2 * 2 * 1500**2 * 384 + 2 * 2 * 1500 * 384 * 1536
    assert sgemm.encoder_flops(TINY) == 2 * 3000 * 80 * 3 * 384 + 2 * 1500 * 384 * 3 * 384 + 4 * per_block
    assert round(sgemm.encoder_flops(TINY) / 1e9, 1) == 36.9  # issue 12: "the tiny encoder (37 GFLOP)"
    assert round(sgemm.encoder_flops(BASE) / 1e9, 1) == 87.4


def test_ckw_isa_rule():
    flags = dict.fromkeys(sgemm.ISA_FLAGS, True)
    assert sgemm.ckw_isa(flags) == "avx512"
    assert sgemm.ckw_isa(dict(flags, avx512vl=False)) == "avx2"
    assert sgemm.ckw_isa(dict.fromkeys(sgemm.ISA_FLAGS, False)) == "scalar"
    assert sgemm.ckw_isa({"avx2": True, "fma": False, "f16c": True}) == "scalar"
    assert sgemm.ckw_isa({"avx2": True, "fma": True, "f16c": False}) == "scalar"
    assert sgemm.ckw_isa(dict(flags, f16c=False)) == "scalar"  # both SIMD paths widen f16 weights with F16C
    assert sgemm.ckw_isa(flags, "avx2") == "avx2"  # CKW_ISA caps the path
    assert sgemm.ckw_isa(dict(flags, avx512vl=False), "avx512") == "avx2"  # but never raises it
    assert sgemm.ckw_isa(flags, "bogus") == "avx512"


def test_cpu_info_reads_proc_cpuinfo(tmp_path):
    p = tmp_path / "cpuinfo"
    p.write_text(
        "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu avx2 fma avx512f\n\n"
        "processor\t: 1\nmodel name\t: Test CPU\nflags\t\t: fpu avx2 fma avx512f\n"
    )
    info = sgemm.cpu_info(str(p))
    assert info["model"] == "Test CPU" and info["logical_cpus"] == 2
    assert info["flags"]["avx2"] and info["flags"]["avx512f"] and not info["flags"]["amx_bf16"]


def test_sgemm_probe_reports_gflops():
    probe = sgemm.Sgemm(64, 32, 48, threads=1, reps=3)
    assert probe.flops == 2 * 64 * 32 * 48 and probe.run() > 0


def test_whisper_cpp_timings():
    t = parse_timings(WHISPER_CPP_TIMINGS)
    assert t["mel"] == (97.54, 1) and t["encode"] == (3308.76, 2) and t["decode"] == (3314.12, 48)
    assert t["batchd"] == (413.06, 4) and t["prompt"] == (0.0, 1) and "fallbacks" not in t


def test_normalise_text():
    assert report.normalise_text(" And so, my fellow Americans: ask not!") == "and so my fellow americans ask not"
    assert report.normalise_text("Don't 'quote'") == "don't quote"


def _run(total, decode=None):
    return {
        "text": "Hello, world.",
        "tokens": 3,
        "windows": 1,
        "stages": {
            "frontend": 1.0,
            "encoder": 10.0,
            "prefill": None if decode is None else 2.0,
            "decode_per_token": decode,
            "total": total,
        },
    }


def test_medians_ratios_and_table():
    ours = report.summarise([_run(100.0, 4.0), _run(300.0, 6.0), _run(200.0, 5.0)])
    peer = report.summarise([_run(400.0), _run(400.0), _run(500.0)])
    assert ours["median_ms"]["total"] == 200.0 and ours["median_ms"]["decode_per_token"] == 5.0
    assert peer["median_ms"]["prefill"] is None
    assert report.ratio(200.0, 400.0) == 0.5 and report.ratio(1.0, None) is None
    row = {
        "model": "tiny",
        "clip": "jfk.wav",
        "seconds": 11.0,
        "mode": "one window",
        "runs": 3,
        "engines": {"ckw": ours, "peer": peer},
        "encoder_gflop": 36.9,
        "encoder_gflops": {"ckw": 3690.0, "peer": 3690.0},
        "encoder_fraction_of_sgemm": 0.5,
        "sgemm": {"shape": "1500x384x1536", "threads": 2, "gflops": 7380.0},
    }
    text = "\n".join(report.render_row(row))
    assert "ratio = ckw / peer" in text
    total_line = next(line for line in text.split("\n") if line.startswith("total"))
    assert "200.0" in total_line and "400.0" in total_line and "0.50" in total_line
    assert "text peer: = ckw" in text and "reaches 50% of it" in text
    assert "medians of 3 runs after" in text
    assert "medians of 3 runs (stopped: 5 planned)" in "\n".join(report.render_row(dict(row, runs_planned=5)))


def test_a_stopped_runs_json_renders():
    row = {
        "model": "tiny",
        "clip": "long",
        "seconds": 600.0,
        "mode": "long-form",
        "runs": 2,
        "runs_planned": 5,
        "engines": {"ckw": report.summarise([_run(100.0, 4.0)]), "peer": report.summarise([_run(200.0)])},
        "encoder_gflop": 36.9,
        "encoder_gflops": {"ckw": 3690.0},
        "encoder_fraction_of_sgemm": 0.5,
        "sgemm": {"shape": "1500x384x1536", "threads": 2, "gflops": 7380.0},
    }
    saved = {
        "machine": {"model": "Test CPU", "logical_cpus": 2, "flags": {"avx2": True}},
        "ckw_isa": "avx2",
        "threads": 2,
        "runs": 5,
        "ggml_type": "f16",
        "blas": [],
        "rows": [],
        "unfinished_row": row,
        "loadavg": {"start": 3.0, "per_round": [4.0, 5.0]},
    }
    text = report.render_saved(saved)
    assert "tiny · long (600.0 s, long-form) · medians of 2 runs (stopped: 5 planned)" in text
    assert "3.00 before the run, at most 5.00" in text and "WARNING: the machine was busy" in text
    assert report.loadavg_summary(1.0, [3.0, 4.4], 4.0, 2)["busy"] is False


def test_decode_floors_and_their_lines():
    step = {"weights": 40e6, "cross_kv": 9e6, "self_kv": 1e6, "total": 50e6}
    ckw = report.summarise([dict(_run(100.0, 5.0), decode_bytes_per_step=step)])
    peer = report.summarise([_run(400.0, 8.0)])  # no bytes: no floor
    reads = [{"gbps": 10.0}, {"gbps": 20.0}, {"gbps": 12.5}]
    floors = report.decode_floors({"ckw": ckw, "peer": peer}, reads, 2)
    assert floors["read"]["gbps"] == 12.5 and list(floors["decode_floors"]) == ["ckw"]
    f = floors["decode_floors"]["ckw"]
    assert f["floor_ms"] == 4.0 and f["share_of_read"] == 0.8  # 50 MB at 12.5 GB/s: 4 ms of the 5 measured
    assert report.decode_floors({"ckw": ckw}, [], 2) == {}
    row = {
        "model": "tiny",
        "clip": "jfk.wav",
        "seconds": 11.0,
        "mode": "one window",
        "runs": 1,
        "engines": {"ckw": ckw, "peer": peer},
        "encoder_gflop": 36.9,
        "encoder_gflops": {"ckw": 3690.0},
        "encoder_fraction_of_sgemm": 0.5,
        "sgemm": {"shape": "1500x384x1536", "threads": 2, "gflops": 7380.0},
        **floors,
    }
    text = "\n".join(report.render_row(row))
    assert "memory read: 12.5 GB/s" in text and "(target for the exact fp32 build: 90%)" in text
    assert (
        "decode ckw: a step reads 50.0 MB (weights 40.0, cross K/V 9.0, self K/V 1.00): floor 4.00 ms; the step "
        "reaches 80% of the read bandwidth (target for the exact fp32 build: 85%)"
    ) in text
