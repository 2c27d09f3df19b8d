"""X-ray parity (issue 6): every named edge of the generated Whisper engine against openai-whisper.

On jfk.wav, for tiny and base (one Bazel target each, selected with `-k <variant>`):

- frontend: the generated frontend's log-mel of the whole recording against
  `whisper.log_mel_spectrogram(audio, padding=N_SAMPLES)` (what the frontend promises);
- encoder: our first 30 s window through the generated encoder with an edge tap
  (`P_set_tap`, tools/codegen/README.md), against `xray_reference.encoder_edges` on the same window:
  conv stem, per layer attention norm, q, k, v, attention output, out-projection (+ residual),
  MLP norm, fc1, fc2 (+ residual), final norm, and the layout copies the compiler inserted;
- decoder prefill: our encoder memory, a forced prefix plus text tokens, against
  `xray_reference.decoder_edges` on the same memory: per layer self- and cross-attention edges,
  the cross-K/V projections of all encoder rows, the KV caches, final norm and logits;
- decoder decode: one more token at position p through the incremental path (self-KV cache,
  cached cross-K/V) against rows p.. of the reference run over the whole sequence.

Each part gets the same input on both sides, so an edge's error is that part's own arithmetic,
and the first edge over its bound names the op that is wrong. The whole table is printed, and
written to the test's undeclared outputs as xray_<variant>.tsv and xray_<variant>.json; the IR
explorer (`./bazelw run //tools/codegen:explore -- --model <variant> --part <part>`) reads the
JSON and draws each edge's error on the graph.

Edge names are the circuits' (`<op>.<port>`, repeat groups unrolled) on both sides. Where the
taps and the oracle differ, MAPPED (layout copies and cache views, reported by the taps only)
and the derived residual-free projections (reference only) say how they are compared.
"""

import functools
import json
import os
import re
import sys
from typing import Dict, List, Tuple

import numpy as np
import pytest
import torch
import whisper

from ckw import runfiles
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime import abi
from ckw.runtime.tokenizer import WhisperTokenizer
from models.whisper.reference import openai_reference
from models.whisper.reference import xray_reference as xr
from tools.codegen.explorer import xray as explorer_xray

VARIANTS = ["tiny", "base"]

# Bounds at every edge, relative to the reference's own magnitude at that edge:
#     max|ours - ref| <= MAX_ABS_REL * max|ref|     and     rmse(ours - ref) <= RMSE_REL * rms(ref)
# Both sides are float32 with different summation orders. Each of our ops is within about 1e-6
# (relative) of float64 on its own inputs, as torch's are; the differences then compound
# through the layers, and base's encoder amplifies them: its residual stream carries outlier
# channels (|x| up to ~540 against a row std of ~1.4), so the next layer norm turns an
# absolute error of the sum into a larger relative one (torch float32 itself is 5e-5 from float64
# at base's ln_post.y). Measured on this machine, worst edge per stage (max-abs rel, rmse rel):
#   tiny  frontend log_mel.y 1.8e-5, 3.8e-7
#         encoder  blocks.3.self_attn.o 4.7e-5; blocks.2.fc1.y 8.1e-6
#         prefill  blocks.2.fc2 before residual (derived) 1.3e-5; blocks.1.self_attn.o 4.2e-6
#         decode   blocks.2.v_proj.y 3.9e-6; blocks.1.self_attn.o 4.0e-6
#   base  frontend log_mel.y 1.8e-5, 3.8e-7
#         encoder  ln_post.y 2.3e-4; blocks.5.fc1.y 4.0e-5
#         prefill  blocks.4.fc2 before residual (derived: y - r cancels) 1.4e-4, 3.0e-5
#         decode   state:self_v[4,0] (cache view) 7.1e-6, 4.8e-6
# The bounds leave 4-5x headroom over base's worst; a wrong op (a transposed or missing weight,
# a wrong mask, scale or position) is off by 1e-2 and more.
MAX_ABS_REL = 1e-3
RMSE_REL = 2e-4

TEXT = " And so my fellow Americans"  # jfk.wav's first words, after the forced prefix

# Stage -> (library part, phase): where the IR explorer draws a stage's rows.
STAGES = {
    "frontend": ("frontend", "run"),
    "encoder": ("encoder", "run"),
    "prefill": ("decoder", "prefill"),
    "decode": ("decoder", "decode"),
}
# The generated library of each part (its compiler outputs are in models/whisper/<name>_c/).
LIBRARIES = {"frontend": "frontend", "encoder": "{variant}_encoder", "decoder": "{variant}_decoder"}

# Edges the taps report that the oracle has under another name or in another layout, as
# (tap edge pattern, reference edge template, view of our tensor in the reference's layout).
# They are copies the layout pass inserted, so they must match their source edge's reference.
MAPPED: List[Tuple[str, str, str]] = [
    # conv2 reads conv1.y channel-major: [d_model, 2 * n_ctx], transposed to token-major.
    (r"conv2:x<-channel_major\.dst", "conv1.y", "transpose"),
    # Encoder attention reads K/V head-major: [H, n_ctx, Dh] -> token rows [n_ctx, H * Dh].
    (r"(blocks\.\d+)\.self_attn:([kv])<-head_major\.dst", "{0}.{1}_proj.y", "head_major"),
    # Decoder self-KV caches, reported as the layer's whole cache [max_beams, H, n_text_ctx, Dh]
    # (a window write): sequence 0's rows 0 .. pos + n_tokens - 1 must hold every token so far.
    (r"(blocks\.\d+)\.([kv])_cache\.dst", "{0}.{1}_proj.y", "batch_head_major"),
    # Cross-K/V cache [H, n_audio_ctx, Dh]: all encoder rows, projected once per memory.
    (r"state:cross_([kv])\[(\d+)\]<-head_major\.dst", "blocks.{1}.cross_{0}_proj.y", "head_major"),
]


def view(kind: str, ours: np.ndarray, rows: int) -> np.ndarray:
    if kind == "transpose":
        return ours.T
    if kind == "head_major":  # [H, capacity, Dh] -> rows 0..rows-1 as [rows, H * Dh]
        return ours[:, :rows].transpose(1, 0, 2).reshape(rows, -1)
    if kind == "batch_head_major":  # [sequences, H, capacity, Dh]: sequence 0's rows
        return view("head_major", ours[0], rows)
    raise ValueError(kind)


def mapped(edge: str):
    for pattern, template, kind in MAPPED:
        m = re.fullmatch(pattern, edge)
        if m:
            return template.format(*m.groups()), kind
    return None


@functools.lru_cache(maxsize=None)
def circuit(part: str) -> dict:
    with open(runfiles.locate("ckw", f"circuits/audio_transformer_{part}.json"), encoding="utf-8") as f:
        return json.load(f)


def residual_inputs(part: str, n_layers: int) -> Dict[str, str]:
    """{unrolled op: the edge its residual port `r` reads}, for the ops whose residual add the
    circuit fuses (openai-whisper's `<op>.before_residual` is then ours `<op>.y - r`)."""
    group = next(item for item in circuit(part)["ops"] if "repeat" in item)
    carry = group.get("carry", {})

    def edge(ref: str, i: int) -> str:
        kind, _, rest = ref.partition(":")
        if kind == "carry":
            spec = carry[rest]
            return edge(spec["init"], None) if i == 0 else edge(spec["next"], i - 1)
        assert kind == "op", ref
        return rest if i is None else f"{group['repeat']}.{i}.{rest}"

    result = {}
    for i in range(n_layers):
        for op in group["ops"]:
            if "r" in op["inputs"]:
                result[f"{group['repeat']}.{i}.{op['name']}"] = edge(op["inputs"]["r"], i)
    return result


class Run:
    """One variant through the generated libraries with taps on, and the oracle."""

    def __init__(self, variant: str):
        self.variant = variant
        self.model = openai_reference.model(variant)
        checkpoint = runfiles_checkpoint_dir(variant)
        weights = os.path.join(checkpoint, "weights.bin")

        def lib(name):
            return runfiles.locate("ckw", f"models/whisper/libckw_{name}.so")

        wav_path = runfiles.locate("test_audio", "jfk.wav")
        with open(wav_path, "rb") as f:
            wav = np.frombuffer(f.read(), np.uint8)

        # Frontend: log-mel of the whole recording plus 30 s of padding.
        frontend = abi.Handle(abi.Library(lib("whisper_frontend"), "ckw_whisper_frontend", "frontend"))
        shape = (abi.ctypes.c_int64 * 2)()
        frontend("run_shape", wav, wav.size, shape)
        self.mel = np.empty((shape[0], shape[1]), np.float32)
        frontend("run", wav, wav.size, self.mel, self.mel.size)
        audio = openai_reference.read_audio_16k(wav_path)
        self.ref_mel = whisper.log_mel_spectrogram(
            torch.from_numpy(audio), n_mels=self.model.dims.n_mels, padding=whisper.audio.N_SAMPLES
        ).numpy()
        window = np.ascontiguousarray(self.mel[:, : whisper.audio.N_FRAMES])

        # Encoder, tapped.
        encoder = abi.Handle(abi.Library.for_model(lib(f"{variant}_encoder"), variant, "encoder"), weights)
        self.memory = np.empty((encoder.lib.dim("n_ctx"), encoder.lib.dim("d_model")), np.float32)
        self.encoder = self.tapped(encoder, "run", window, self.memory)
        self.ref_encoder = xr.encoder_edges(self.model, window)

        # Decoder: prefill the prefix and all text tokens but the last, then decode the last.
        tok = WhisperTokenizer.from_checkpoint(checkpoint)
        self.tokens = tok.sot_sequence("en", "transcribe") + [tok.no_timestamps] + tok.encode(TEXT)
        decoder = abi.Handle(abi.Library.for_model(lib(f"{variant}_decoder"), variant, "decoder"), weights)
        decoder("set_encoder_memory", self.memory)
        n_vocab = decoder.lib.dim("n_vocab")
        prompt = np.array(self.tokens[:-1], np.int32)
        self.p = len(prompt)
        d = decoder.lib
        cross_qk = np.empty((d.dim("n_layers"), d.dim("n_heads"), prompt.size, d.dim("n_audio")), np.float32)
        every = np.arange(prompt.size, dtype=np.int32)  # the logits of every prompt row, compared
        self.prefill = self.tapped(
            decoder,
            "prefill",
            prompt,
            every,
            every.size,
            prompt.size,
            cross_qk,
            np.empty((prompt.size, n_vocab), np.float32),
        )
        self.decode = self.tapped(
            decoder, "decode", np.array(self.tokens[-1:], np.int32), 1, np.empty((1, n_vocab), np.float32)
        )
        assert decoder.query("cross_kv_projections") == 1
        self.ref_prefill = xr.decoder_edges(self.model, self.tokens[:-1], self.memory)
        self.ref_full = xr.decoder_edges(self.model, self.tokens, self.memory, phase="decode")

    @staticmethod
    def tapped(handle: abi.Handle, entry: str, *args) -> List[Tuple[str, np.ndarray]]:
        """Runs `entry` with a tap on; the reported edges in call order (copies)."""
        edges: List[Tuple[str, np.ndarray]] = []
        handle.set_tap(lambda edge, data: edges.append((edge, data.copy())))
        try:
            handle(entry, *args)
        finally:
            handle.set_tap()
        return edges


@functools.lru_cache(maxsize=1)
def run(variant: str) -> Run:
    return Run(variant)


def metrics(ours: np.ndarray, ref: np.ndarray) -> Dict[str, float]:
    d = ours.astype(np.float64) - ref.astype(np.float64)
    ref64 = ref.astype(np.float64)
    max_abs, rmse = float(np.abs(d).max()), float(np.sqrt((d * d).mean()))
    ref_max, ref_rms = float(np.abs(ref64).max()), float(np.sqrt((ref64 * ref64).mean()))
    return {
        "max_abs": max_abs,
        "max_rel": max_abs / max(ref_max, 1e-30),
        "rmse": rmse,
        "rmse_rel": rmse / max(ref_rms, 1e-30),
    }


def row(stage: str, edge: str, ref_edge: str, ours: np.ndarray, ref: np.ndarray) -> dict:
    r = {"stage": stage, "edge": edge, "ref": ref_edge, "shape": tuple(ref.shape)}
    if ours.shape != ref.shape:
        return dict(r, error=f"shape {tuple(ours.shape)} != reference {tuple(ref.shape)}")
    if not np.isfinite(ours).all():
        return dict(r, error="not finite")
    m = metrics(ours, ref)
    bad = [
        f"{k} {m[k]:.2e} > {bound:.0e}"
        for k, bound in (("max_rel", MAX_ABS_REL), ("rmse_rel", RMSE_REL))
        if m[k] > bound
    ]
    return dict(r, **m, error="; ".join(bad))


def compare(
    stage: str,
    taps: List[Tuple[str, np.ndarray]],
    ref: Dict[str, np.ndarray],
    ref_full: Dict[str, np.ndarray],
    residuals: Dict[str, str],
    skip_ref=(),
) -> List[dict]:
    """Every tapped edge against its reference (same name, or MAPPED), then every reference-only
    edge against ours derived, and every reference edge must have been compared."""
    rows, seen = [], set()
    names = [e for e, _ in taps]
    dupes = sorted({e for e in names if names.count(e) > 1})
    if dupes:
        rows.append({"stage": stage, "edge": ",".join(dupes), "ref": "", "shape": (), "error": "reported twice"})
    ours = dict(taps)
    for edge, data in taps:
        if mapped(edge):
            ref_edge, kind = mapped(edge)
            full = ref_full[ref_edge]  # a cache view holds every row so far, not only this call's
            rows.append(row(stage, edge, f"{ref_edge} ({kind})", view(kind, data, full.shape[0]), full))
            seen.add(edge)  # the oracle may name the cache edge too (its token rows)
        elif edge in ref:
            rows.append(row(stage, edge, edge, data, ref[edge]))
            seen.add(edge)
        else:
            rows.append(
                {
                    "stage": stage,
                    "edge": edge,
                    "ref": "",
                    "shape": data.shape,
                    "error": "no reference edge: add it to models/whisper/reference/xray_reference.py or MAPPED",
                }
            )
    for ref_edge in ref:
        if ref_edge in seen or ref_edge in skip_ref:
            continue
        op = ref_edge.rpartition(".")[0]
        if xr.is_reference_only(ref_edge) and op in residuals and f"{op}.y" in ours and residuals[op] in ours:
            derived = ours[f"{op}.y"] - ours[residuals[op]]
            rows.append(row(stage, f"{op}.y - {residuals[op]}", ref_edge, derived, ref[ref_edge]))
        else:
            rows.append(
                {
                    "stage": stage,
                    "edge": "",
                    "ref": ref_edge,
                    "shape": ref[ref_edge].shape,
                    "error": "reference edge not reported by the taps",
                }
            )
    return rows


def print_table(variant: str, rows: List[dict]) -> None:
    out = [
        f"\nX-ray parity, {variant}: {len(rows)} edges; bounds max-abs <= {MAX_ABS_REL:.0e} * max|ref|, "
        f"rmse <= {RMSE_REL:.0e} * rms(ref)",
        f"{'stage':8} {'edge':44} {'shape':>14} {'max_abs':>9} {'max_rel':>9} {'rmse':>9} {'rmse_rel':>9}  reference",
    ]
    for r in rows:
        shape = "x".join(map(str, r["shape"]))
        if "max_abs" in r:
            nums = f"{r['max_abs']:9.2e} {r['max_rel']:9.2e} {r['rmse']:9.2e} {r['rmse_rel']:9.2e}"
        else:
            nums = " " * 39
        ref = "" if r["ref"] == r["edge"] else r["ref"]
        flag = f"  FAIL {r['error']}" if r.get("error") else ""
        out.append(f"{r['stage']:8} {r['edge'][:44]:44} {shape:>14} {nums}  {ref}{flag}")
    for stage in dict.fromkeys(r["stage"] for r in rows):
        measured = [r for r in rows if r["stage"] == stage and "max_abs" in r]
        if measured:
            a = max(measured, key=lambda r: r["max_rel"])
            b = max(measured, key=lambda r: r["rmse_rel"])
            out.append(
                f"worst {stage}: max_rel {a['max_rel']:.2e} at {a['edge'] or a['ref']}; "
                f"rmse_rel {b['rmse_rel']:.2e} at {b['edge'] or b['ref']}"
            )
    print("\n".join(out), file=sys.stderr)
    tsv = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if tsv:
        with open(os.path.join(tsv, f"xray_{variant}.json"), "w", encoding="utf-8") as f:
            json.dump(json_rows(variant, rows), f, indent=1, sort_keys=True)
        with open(os.path.join(tsv, f"xray_{variant}.tsv"), "w", encoding="utf-8") as f:
            f.write("stage\tedge\treference\tshape\tmax_abs\tmax_rel\trmse\trmse_rel\terror\n")
            for r in rows:
                f.write(
                    "\t".join(
                        [r["stage"], r["edge"], r["ref"], "x".join(map(str, r["shape"]))]
                        + [f"{r[k]:.3e}" if k in r else "" for k in ("max_abs", "max_rel", "rmse", "rmse_rel")]
                        + [r.get("error", "")]
                    )
                    + "\n"
                )


def json_rows(variant: str, rows: List[dict]) -> dict:
    """The table as the IR explorer reads it (tools/codegen/explorer/xray.py)."""
    out = []
    for r in rows:
        part, phase = STAGES[r["stage"]]
        out.append(
            {
                "part": part,
                "phase": phase,
                "stage": r["stage"],
                "edge": r["edge"],
                "reference": r["ref"],
                "shape": [int(d) for d in r["shape"]],
                "error": r.get("error", ""),
                **{k: r[k] for k in ("max_abs", "max_rel", "rmse", "rmse_rel") if k in r},
            }
        )
    return {"variant": variant, "bounds": {"max_rel": MAX_ABS_REL, "rmse_rel": RMSE_REL}, "rows": out}


@functools.lru_cache(maxsize=None)
def table(variant: str) -> Tuple[dict, ...]:
    r = run(variant)
    d = r.model.dims
    enc_res = residual_inputs("encoder", d.n_audio_layer)
    dec_res = residual_inputs("decoder", d.n_text_layer)
    rows = [row("frontend", "log_mel.y", "log_mel_spectrogram", r.mel, r.ref_mel)]
    rows += compare("encoder", r.encoder, r.ref_encoder, r.ref_encoder, enc_res)
    rows += compare("prefill", r.prefill, r.ref_prefill, r.ref_prefill, dec_res)
    # The decode step's rows are rows p.. of the run over the whole sequence; cross-K/V are
    # not projected again (cached at prefill), so the step reports none, nor cross_qk (asked
    # for at prefill only).
    cross = {e for e in r.ref_full if re.fullmatch(r"blocks\.\d+\.(cross_[kv]_proj\.y|cross_qk\.s)", e)}
    step = {e: (a if e in cross else np.ascontiguousarray(a[r.p :])) for e, a in r.ref_full.items()}
    rows += compare("decode", r.decode, step, r.ref_full, dec_res, skip_ref=cross)
    print_table(variant, rows)
    return tuple(rows)


def failures(variant: str, stage: str) -> List[str]:
    rows = [r for r in table(variant) if r["stage"] == stage]
    assert rows, f"no {stage} edges"
    return [f"{r['edge'] or r['ref']}: {r['error']}" for r in rows if r.get("error")]


@pytest.mark.parametrize("variant", VARIANTS)
def test_frontend_log_mel(variant):
    assert not failures(variant, "frontend")


@pytest.mark.parametrize("variant", VARIANTS)
def test_encoder_edges(variant):
    bad = failures(variant, "encoder")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("variant", VARIANTS)
def test_decoder_prefill_edges(variant):
    bad = failures(variant, "prefill")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("variant", VARIANTS)
def test_decoder_decode_edges(variant):
    bad = failures(variant, "decode")
    assert not bad, "\n".join(bad)
    taps = [e for e, _ in run(variant).decode]
    assert not any("cross_k_proj" in e or "cross_v_proj" in e or "state:cross_" in e for e in taps), (
        "a decode step must reuse the cross-K/V cache, not project the memory again"
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_circuit_edge_is_compared(variant):
    """Each circuit op output edge (xray_reference.circuit_edges) was tapped and compared."""
    d = run(variant).model.dims
    for part, stage, n in (("encoder", "encoder", d.n_audio_layer), ("decoder", "prefill", d.n_text_layer)):
        names, _ = xr.circuit_edges(circuit(part), n, "run" if part == "encoder" else "prefill")
        compared = {r["edge"] for r in table(variant) if r["stage"] == stage and "max_abs" in r}
        missing = [e for e in names if e not in compared]
        assert not missing, f"{part} edges never compared: {missing}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_rows_land_on_the_explorer_graph(variant):
    """Every tapped edge's row reaches the value it measures on the IR explorer's graph (through the
    library's call IR), and that value is drawn on an edge of explain.json's phase."""
    data = json_rows(variant, list(table(variant)))
    for part, name in LIBRARIES.items():
        outputs = runfiles.locate("ckw", f"models/whisper/{name.format(variant=variant)}_c")
        with open(os.path.join(outputs, "ir.json"), encoding="utf-8") as f:
            ir = json.load(f)
        with open(os.path.join(outputs, "explain.json"), encoding="utf-8") as f:
            drawn = {p["phase"]: {e["value"] for e in p["edges"]} for p in json.load(f)["phases"]}
        placed = explorer_xray.place(data, part, ir)["rows"]
        tapped = [r for r in placed if "max_abs" in r and " - " not in r["edge"]]
        assert tapped, f"no {part} rows"
        lost = [
            f"{r['phase']} {r['edge']}" for r in tapped if r["value"] is None or r["value"] not in drawn[r["phase"]]
        ]
        assert not lost, f"{part} rows the explorer cannot place: {lost}"
