"""Medians, ratios and the text table of //tools:benchmark_e2e."""

import re
import statistics
from typing import Dict, List, Optional

STAGES = ("frontend", "encoder", "prefill", "decode_per_token", "total")
STAGE_LABELS = {
    "frontend": "frontend",
    "encoder": "encoder/window",
    "prefill": "prefill/window",
    "decode_per_token": "decode/token",
    "total": "total",
}


def normalise_text(text: str) -> str:
    """Lower case, punctuation dropped, single spaces: for comparing engines' transcripts."""
    return " ".join(re.sub(r"[^\w\s']|(?<!\w)'|'(?!\w)", " ", text.lower()).split())


def summarise(runs: List[Dict]) -> Dict:
    """Median of every stage over the timed runs of one engine (None where it exposes none)."""
    last = runs[-1]
    medians = {}
    for stage in STAGES:
        values = [r["stages"].get(stage) for r in runs]
        medians[stage] = statistics.median(values) if all(v is not None for v in values) else None
    return {
        "median_ms": medians,
        "text": last["text"],
        "tokens": last["tokens"],
        "windows": last.get("windows"),
        "derived": last.get("derived", []),
        "runs": runs,
    }


def ratio(ours: Optional[float], peer: Optional[float]) -> Optional[float]:
    return ours / peer if ours is not None and peer else None


# The exact fp32 build's targets against the same-run yardsticks (issue 27).
TARGET_ENCODER_SHARE = 0.90
TARGET_DECODE_SHARE = 0.85


def decode_floors(summaries: Dict, reads: List[Dict], threads: int) -> Dict:
    """The row's read bandwidth (median over the rounds) and, for each engine whose runs give the bytes
    of a decoder step (ckw's one-window runs), that step's floor (bytes / bandwidth) and the step's
    share of the bandwidth (floor / measured step)."""
    if not reads:
        return {}
    gbps = statistics.median(r["gbps"] for r in reads)
    floors = {}
    for label, s in summaries.items():
        step = s["runs"][-1].get("decode_bytes_per_step")
        measured = s["median_ms"]["decode_per_token"]
        if step is None or not measured:
            continue
        floor_ms = 1e3 * step["total"] / (gbps * 1e9)
        floors[label] = {"bytes": step, "floor_ms": floor_ms, "share_of_read": floor_ms / measured}
    return {"read": {"threads": threads, "gbps": gbps, "per_round": reads}, "decode_floors": floors}


def _num(value: Optional[float], width: int, digits: int = 1, mark: str = "") -> str:
    if value is None:
        return f"{'-':>{width}}"
    return f"{mark + format(value, f'.{digits}f'):>{width}}"


def _count(value: Optional[int], width: int) -> str:
    return f"{'-' if value is None else value:>{width}}"


def render_row(row: Dict) -> List[str]:
    """One table: a model on one clip, every engine's stage medians and ckw's ratio to each peer."""
    engines = row["engines"]
    labels = list(engines)
    ours, peers = labels[0], labels[1:]
    planned = row.get("runs_planned", row["runs"])
    stopped = "" if row["runs"] >= planned else f" (stopped: {planned} planned)"
    lines = [
        f"{row['model']} · {row['clip']} ({row['seconds']:.1f} s, {row['mode']}) · medians of {row['runs']} "
        f"runs{stopped} after a warm-up, engines interleaved (ms; ratio = {ours} / peer, < 1: {ours} faster)"
    ]
    head = f"{'stage':<15} {ours:>9}" + "".join(f" | {p:>16} {'ratio':>6}" for p in peers)
    lines += [head, "-" * len(head)]
    for stage in STAGES:
        mine = engines[ours]["median_ms"][stage]
        cells = [f"{STAGE_LABELS[stage]:<15} {_num(mine, 9)}"]
        for p in peers:
            theirs = engines[p]["median_ms"][stage]
            mark = "~" if stage in engines[p]["derived"] else ""
            cells.append(f" | {_num(theirs, 16, mark=mark)} {_num(ratio(mine, theirs), 6, 2)}")
        lines.append("".join(cells))
    for key, label in (("tokens", "text tokens"), ("windows", "windows")):
        cells = [engines[e][key] for e in labels]
        lines.append(f"{label:<15} {_count(cells[0], 9)}" + "".join(f" | {_count(c, 16)} {'':>6}" for c in cells[1:]))
    gf = row["encoder_gflops"]
    lines.append(
        f"{'encoder GFLOPS':<15} {_num(gf.get(ours), 9)}" + "".join(f" | {_num(gf.get(p), 16)} {'':>6}" for p in peers)
    )
    lines.append(
        f"encoder: {row['encoder_gflop']:.1f} GFLOP per 30 s window; OpenBLAS sgemm {row['sgemm']['shape']} "
        f"on {row['sgemm']['threads']} threads: {row['sgemm']['gflops']:.0f} GFLOPS (median over the rounds); "
        f"{ours}'s encoder reaches {100 * row['encoder_fraction_of_sgemm']:.0f}% of it"
        + (
            f" (target for the exact fp32 build: {100 * TARGET_ENCODER_SHARE:.0f}%)"
            if row.get("precision", "fp32") == "fp32"
            else ""
        )
    )
    if "read" in row:
        lines.append(
            f"memory read: {row['read']['gbps']:.1f} GB/s (tools/bench/bandwidth.py, best of 1..."
            f"{row['read']['threads']} threads, median over the rounds)"
        )
    for label, f in row.get("decode_floors", {}).items():
        b = f["bytes"]
        lines.append(
            f"decode {label}: a step reads {b['total'] / 1e6:.1f} MB (weights {b['weights'] / 1e6:.1f}, "
            f"cross K/V {b['cross_kv'] / 1e6:.1f}, self K/V {b['self_kv'] / 1e6:.2f}): floor "
            f"{f['floor_ms']:.2f} ms; the step reaches {100 * f['share_of_read']:.0f}% of the read bandwidth"
            + (f" (target for the exact fp32 build: {100 * TARGET_DECODE_SHARE:.0f}%)" if label == "ckw" else "")
        )
    base = normalise_text(engines[ours]["text"])
    for p in peers:
        same = normalise_text(engines[p]["text"]) == base
        lines.append(
            f"text {p}: {'= ' + ours if same else 'differs from ' + ours} ({len(engines[p]['text'].split())} words)"
        )
    return lines


BUSY_LOAD = 2.5


def loadavg_summary(start: float, per_round: List[float], end: float, threads: int) -> Dict:
    """Before the run the load is other work; during it the run's own threads add about `threads`."""
    most = max(per_round + [end])
    return {
        "start": start,
        "end": end,
        "max_seen": most,
        "per_round": per_round,
        "busy": start > BUSY_LOAD or most > BUSY_LOAD + threads,
    }


def render_saved(saved: Dict) -> str:
    """The table of a --json file, also of a stopped run (its unfinished row last, marked stopped)."""
    rows = list(saved["rows"]) + ([saved["unfinished_row"]] if saved.get("unfinished_row") else [])
    load = saved.get("loadavg", {})
    if "max_seen" not in load:
        seen = load.get("per_round") or [load.get("start", 0.0)]
        load = loadavg_summary(load.get("start", 0.0), seen, seen[-1], saved["threads"])
    return render(dict(saved, rows=rows, loadavg=load))


def cpu_line(m: Dict) -> str:
    """The CPU model and its ISA flags (sgemm.cpu_info), as every benchmark table states them."""
    flags = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in m["flags"].items())
    return f"CPU: {m['model']} ({m['logical_cpus']} logical CPUs); {flags}"


def render(report: Dict) -> str:
    lines = [
        cpu_line(report["machine"]),
        f"ckw ISA path: {report['ckw_isa']} (kernels/common/cpu.h's rule on these flags"
        f"{''.join(f', {k}={v}' for k, v in report.get('isa_env', {}).items())}); "
        f"{report['threads']} threads for every engine and for sgemm",
        f"load average (1 min): {report['loadavg']['start']:.2f} before the run, at most "
        f"{report['loadavg']['max_seen']:.2f} during it (its own {report['threads']} threads included), "
        f"{report['loadavg']['end']:.2f} at the end",
    ]
    if report["loadavg"]["busy"]:
        lines.append(
            "WARNING: the machine was busy (load over 2.5 before the run, or over 2.5 + the run's own "
            "threads during it): the times are noisy; the ratios, measured interleaved, less so"
        )
    blas = report.get("blas") or []
    if blas:
        b = blas[0]
        lines.append(
            f"BLAS: {b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, {b.get('threading_layer')})"
        )
    lines.append(
        f"ggml files: {report['ggml_type']}, converted from the packed checkpoints by tools/bench/ggml_convert.py"
    )
    lines.append(
        "~: derived, not measured (faster-whisper runs prefill and decoding in one call: (total - frontend "
        "- encoder x windows) / decoder steps); whisper.cpp's encoder includes the cross-attention K/V "
        "projections, which ckw counts in prefill"
    )
    for row in report["rows"]:
        lines.append("")
        lines += render_row(row)
    return "\n".join(lines)
