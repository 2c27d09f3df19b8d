"""Speed at every size: ckw against faster-whisper (CTranslate2 float32 and int8) on seeded weights of
a published model's exact layout, decoding a forced number of tokens so every engine does the same
work on weights that produce no text.

    ./bazelw run //tools:benchmark_sizes -- --synthetic small,large-v3-turbo --decode_tokens 64 [--json F]

Per size: the seeded checkpoint (ckw/checkpoints/seeded.py) packed for ckw, the same values
as a Hugging Face directory converted by CTranslate2's own converter (tools/bench/sizes.py); then, each
in a process of its own, one after another (one large model in memory at a time; each process's peak
RSS is that engine's): the probes (OpenBLAS sgemm at the encoder's MLP shape, memory-read bandwidth),
ckw, faster-whisper fp32, faster-whisper int8, the probes again. Every engine gets the same log-mel
window (ckw's frontend on --wav) and decodes exactly --decode_tokens tokens from the same prefix,
greedy, end of text suppressed; one warm-up run, then --runs, medians. whisper.cpp is left out: its
Python binding (pywhispercpp) exposes no way to force the decode length (no suppression of end of
text nor a minimum length), so its work could not be matched.

Printed per engine: encoder ms per 30 s window with its GFLOPS and share of the sgemm rate; decode ms
per token with the step's bandwidth floor (bytes a step must read / the read bandwidth) as a multiple;
the window end to end (encoder + prefill + N tokens) and ckw's ratio to it; peak RSS.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

from absl import app, flags

from ckw import runfiles
from ckw.checkpoints import layout
from tools.bench import floors, report, sgemm, sizes

FLAGS = flags.FLAGS
flags.DEFINE_list(
    "synthetic",
    ["small", "large-v3-turbo"],
    f"Published models to time on seeded weights of "
    f"their layout: {', '.join(sizes.SIZES)} (the issue's sizes) or any other of layout.py's STANDARD "
    "whose libraries this program carries (tiny: the test's).",
)
flags.DEFINE_integer(
    "decode_tokens", 64, "Tokens every engine decodes per window (end of text suppressed).", lower_bound=2
)
flags.DEFINE_integer("runs", 3, "Timed runs per engine after one warm-up run.", lower_bound=1)
flags.DEFINE_integer("threads", 2, "Threads of every engine and of the probes.", lower_bound=1)
flags.DEFINE_string(
    "layers",
    "",
    "ENCODER,DECODER layer counts for every size (default: each model's own; "
    "fewer to finish sooner, said in the table).",
)
flags.DEFINE_list("peers", ["fw-fp32", "fw-int8"], "faster-whisper compute types to time: fw-fp32, fw-int8.")
flags.DEFINE_string("wav", None, "Audio of the window, 16 kHz (default jfk.wav); relative to where you run it.")
flags.DEFINE_string("json", None, "Also write everything to this JSON file; relative to where you run it.")
flags.DEFINE_string("from_json", None, "Measure nothing: print the table of an earlier --json file.")
flags.DEFINE_string("scratch", None, "Folder for the weights (default: a temporary one; large-v3 needs ~13 GB).")
# One engine per process: the benchmark runs itself with these.
flags.DEFINE_string("worker", None, "Internal: run one part (tools/bench/sizes.py WORKERS) from a spec file.")
flags.DEFINE_string("worker_spec", None, "Internal: the worker's spec (JSON); its result goes to spec['out'].")

PEERS = {"fw-fp32": "float32", "fw-int8": "int8"}


def _worker(kind: str, spec: dict, scratch: str) -> dict:
    """Runs sizes.WORKERS[kind] in a new process of this program and returns its result."""
    spec = dict(spec, out=os.path.join(scratch, f"{kind}.result.json"))
    path = os.path.join(scratch, f"{kind}.spec.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    done = subprocess.run([sys.executable, sys.argv[0], f"--worker={kind}", f"--worker_spec={path}"], check=False)
    if done.returncode:
        raise SystemExit(f"benchmark_sizes: the {kind} process failed (exit {done.returncode}); its error is above")
    with open(spec["out"], encoding="utf-8") as f:
        return json.load(f)


def measure(model: str, wav: str, scratch_root: str) -> dict:
    scratch = os.path.join(scratch_root, model)
    os.makedirs(scratch, exist_ok=True)
    dirs = _worker("prepare", {"model": model, "layers": FLAGS.layers, "seed": 0, "dir": scratch}, scratch)
    common = {
        "threads": FLAGS.threads,
        "runs": FLAGS.runs,
        "decode_tokens": FLAGS.decode_tokens,
        "mel": os.path.join(scratch, "mel.npy"),
    }
    with open(os.path.join(dirs["ckw"], "model_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    probe_spec = {
        "threads": FLAGS.threads,
        "runs": FLAGS.runs,
        "d_model": config["n_audio_state"],
        "n_audio_ctx": config["n_audio_ctx"],
    }
    probes = [_worker("probes", probe_spec, scratch)]
    engines = {"ckw": _worker("ckw", dict(common, checkpoint=dirs["ckw"], wav=wav), scratch)}
    ckw = engines["ckw"]
    for peer in FLAGS.peers:
        engines[peer] = _worker(
            "faster-whisper",
            dict(
                common,
                model_dir=dirs[f"ct2-{PEERS[peer]}"],
                compute_type=PEERS[peer],
                prompt=ckw["prompt"],
                eot=ckw["eot"],
            ),
            scratch,
        )
    probes.append(_worker("probes", probe_spec, scratch))
    for d in dirs.values():  # large-v3's three copies are ~13 GB
        subprocess.run(["rm", "-rf", d], check=False)
    return summarise(model, config, ckw, engines, probes)


def summarise(model: str, config: dict, ckw: dict, engines: dict, probes: list) -> dict:
    rounds = [r for p in probes for r in p["rounds"]]
    sgemm_gflops = statistics.median(r["sgemm_gflops"] for r in rounds)
    read_gbps = statistics.median(r["read"]["gbps"] for r in rounds)
    flop = sgemm.encoder_flops(config)
    floor = floors.decode_bytes_per_step(
        ckw["manifest"], config, len(ckw["prompt"]), FLAGS.decode_tokens, floors.state_bytes(ckw["manifest"])
    )
    floor_ms = 1e3 * floor["total"] / (read_gbps * 1e9)
    out = {}
    for label, e in engines.items():
        med = {k: sizes.median(e["runs"], k) for k in ("encoder", "prefill", "decode_per_token", "total")}
        out[label] = {
            "median_ms": med,
            "tokens": [r["tokens"] for r in e["runs"]],
            "decode_calls": [r.get("decode_calls") for r in e["runs"]],
            "encoder_gflops": flop / med["encoder"] / 1e6,
            "encoder_share_of_sgemm": flop / med["encoder"] / 1e6 / sgemm_gflops,
            "decode_x_floor": med["decode_per_token"] / floor_ms,
            "peak_rss_mb": e["peak_rss_mb"],
            "runs": e["runs"],
        }
    ours = out["ckw"]["median_ms"]["total"]
    for label, e in out.items():
        e["ckw_total_ratio"] = ours / e["median_ms"]["total"]
    layers = f"{config['n_audio_layer']},{config['n_text_layer']}"
    return {
        "model": model,
        "layers": layers,
        "full_depth": not FLAGS.layers,
        "decode_tokens": FLAGS.decode_tokens,
        "prompt_tokens": len(ckw["prompt"]),
        "encoder_gflop": flop / 1e9,
        "sgemm_gflops": sgemm_gflops,
        "sgemm_shape": probes[0]["sgemm_shape"],
        "read_gbps": read_gbps,
        "decode_bytes_per_step": floor,
        "decode_floor_ms": floor_ms,
        "engines": out,
        "probe_rounds": rounds,
    }


def render(result: dict) -> str:
    lines = [
        report.cpu_line(result["machine"]),
        f"ckw ISA path: {result['ckw_isa']}; {result['threads']} threads for every engine and probe; "
        f"{result['decode_tokens']} tokens forced per window (end of text suppressed); medians of "
        f"{result['runs']} runs after a warm-up; whisper.cpp: not run (no forced-length decode in pywhispercpp)",
        "",
        "| model (enc,dec layers) | engine | encoder ms | GFLOPS (% of sgemm) | decode ms/token "
        "(x floor) | prefill ms | window ms | ckw / engine | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        for label, e in row["engines"].items():
            med = e["median_ms"]
            derived = "" if label == "ckw" else "~"
            lines.append(
                f"| {row['model']} ({row['layers']}) | {label} | {med['encoder']:.0f} | "
                f"{e['encoder_gflops']:.0f} ({100 * e['encoder_share_of_sgemm']:.0f}%) | "
                f"{derived}{med['decode_per_token']:.1f} ({e['decode_x_floor']:.2f}x) | "
                f"{derived}{med['prefill']:.0f} | {med['total']:.0f} | {e['ckw_total_ratio']:.2f} | "
                f"{e['peak_rss_mb']:.0f} |"
            )
    lines.append("")
    for row in result["rows"]:
        b = row["decode_bytes_per_step"]
        lines.append(
            f"{row['model']}: encoder {row['encoder_gflop']:.0f} GFLOP per window; sgemm "
            f"{row['sgemm_shape']} {row['sgemm_gflops']:.0f} GFLOPS; read bandwidth {row['read_gbps']:.1f} "
            f"GB/s; a decode step reads {b['total'] / 1e6:.0f} MB (weights {b['weights'] / 1e6:.0f}, "
            f"cross K/V {b['cross_kv'] / 1e6:.0f}, self K/V {b['self_kv'] / 1e6:.1f}): floor "
            f"{row['decode_floor_ms']:.1f} ms"
        )
    lines.append(
        "~: faster-whisper runs prefill and decoding in one call: prefill = generate of 1 token, "
        "decode/token = (generate of N - generate of 1) / (N - 1)"
    )
    return "\n".join(lines)


def _write_json(result: dict) -> None:
    if FLAGS.json:
        with open(runfiles.user_path(FLAGS.json), "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, default=float)
            f.write("\n")


def _run_worker() -> None:
    with open(FLAGS.worker_spec, encoding="utf-8") as f:
        spec = json.load(f)
    if FLAGS.worker == "prepare":
        result = sizes.write_peer_dirs(spec["model"], spec["layers"], spec["seed"], spec["dir"])
    elif FLAGS.worker in sizes.WORKERS:
        result = sizes.WORKERS[FLAGS.worker](spec)
    else:
        raise app.UsageError(f"--worker: unknown {FLAGS.worker}; one of {', '.join(sizes.WORKERS)}")
    with open(spec["out"], "w", encoding="utf-8") as f:
        json.dump(result, f, default=float)


def main(argv):
    del argv
    if FLAGS.worker:
        return _run_worker()
    if FLAGS.from_json:
        with open(runfiles.user_path(FLAGS.from_json), encoding="utf-8") as f:
            print(render(json.load(f)))
        return None
    unknown = [s for s in FLAGS.synthetic if s not in layout.STANDARD]
    if unknown:
        raise app.UsageError(f"--synthetic: unknown {', '.join(unknown)}; choose from {', '.join(layout.STANDARD)}")
    bad = [p for p in FLAGS.peers if p not in PEERS]
    if bad:
        raise app.UsageError(f"--peers: unknown {', '.join(bad)}; choose from {', '.join(PEERS)}")
    wav = runfiles.user_path(FLAGS.wav) if FLAGS.wav else runfiles.locate("test_audio", "jfk.wav")
    machine = sgemm.cpu_info()
    result = {
        "machine": machine,
        "ckw_isa": sgemm.ckw_isa(machine["flags"], os.environ.get("CKW_ISA")),
        "threads": FLAGS.threads,
        "runs": FLAGS.runs,
        "decode_tokens": FLAGS.decode_tokens,
        "blas": sgemm.blas_info(),
        "rows": [],
    }
    scratch_root = runfiles.user_path(FLAGS.scratch) if FLAGS.scratch else None
    with tempfile.TemporaryDirectory(dir=scratch_root) as scratch:
        for model in FLAGS.synthetic:
            result["rows"].append(measure(model, wav, scratch))
            print(f"benchmark_sizes: {model} measured", file=sys.stderr)  # progress
            _write_json(result)
    print(render(result))
    _write_json(result)
    return None


if __name__ == "__main__":
    app.run(main)
