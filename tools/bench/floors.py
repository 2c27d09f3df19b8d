"""The yardsticks a build is held to, shared by //tools:benchmark_e2e and //tools:benchmark_sizes:
the bytes one decoder step must read (its floor is those bytes at the machine's read bandwidth,
tools/bench/bandwidth.py) and the width of the decoder's K/V state; for //tools:benchmark_streams,
the bytes and FLOPs of a multi-sequence decode step (paged_step)."""

import json
import math
import statistics
from typing import Dict

from ckw import runfiles

DECODER_CIRCUIT = "circuits/audio_transformer_decoder.json"
_WIDTHS = {"f32": 4, "f16": 2, "bf16": 2}


def state_bytes(manifest: Dict) -> Dict[str, int]:
    """Bytes per value of the decoder's self- and cross-attention K/V caches ({"self": 4, "cross": 2}):
    the circuit's state dtype unless the build stores a state narrower (the manifest's
    state_dtypes); the circuit must be in the program's runfiles."""
    with open(runfiles.locate("ckw", DECODER_CIRCUIT), encoding="utf-8") as f:
        state = json.load(f)["state"]
    narrow = manifest.get("state_dtypes", {})
    widths = {}
    for kind in ("self", "cross"):
        dtypes = {narrow.get(k, state[k]["dtype"]) for k in (f"{kind}_k", f"{kind}_v")}
        if len(dtypes) != 1 or dtypes - set(_WIDTHS):
            raise ValueError(
                f"{DECODER_CIRCUIT}: {kind}-attention K/V dtypes {sorted(dtypes)}; expected one of {sorted(_WIDTHS)}"
            )
        widths[kind] = _WIDTHS[dtypes.pop()]
    return widths


def decode_bytes_per_step(
    manifest: Dict, config: Dict, prompt_len: int, tokens: int, state_bytes: Dict[str, int], rows: int = 1
) -> Dict:
    """Bytes one decoder step must read, averaged over a decode of `tokens` tokens after a prompt of
    `prompt_len`: every decoder tensor as stored (the manifest's nbytes: f16 or bf16 weights, f32
    norms and biases) except the cross-attention K/V projections (run once per window, at prefill)
    and the position table (one row), the token embedding once (the logits' GEMM; the lookup reads
    one row); plus per layer the cross-attention K and V over the encoder's n_audio_ctx rows (once:
    the `rows` sequences of a beam search share one cross-K/V entry, so every beam after the first
    reads it from cache) and, for each sequence, the self-attention K and V of the positions
    attended (prompt_len + i at step i), at `state_bytes` per value (state_bytes(): the build's)."""
    weights = 0
    for t in manifest["tensors"]:
        name = t["name"]
        if not name.startswith("model.decoder.") or name.startswith("model.decoder.embed_positions"):
            continue
        if ".encoder_attn.k_proj." in name or ".encoder_attn.v_proj." in name:
            continue
        weights += t["nbytes"]
    d, layers = config["n_text_state"], config["n_text_layer"]
    cross = layers * 2 * config["n_audio_ctx"] * d * state_bytes["cross"]
    steps = range(1, tokens)  # the decode calls after prefill; call i attends prompt_len + i rows
    self_kv = (
        rows * layers * 2 * d * state_bytes["self"] * statistics.mean(prompt_len + i for i in steps)
        if tokens > 1
        else 0
    )
    return {"weights": weights, "cross_kv": cross, "self_kv": int(self_kv), "total": int(weights + cross + self_kv)}


def decoder_matmul_params(manifest: Dict) -> int:
    """Parameters of the matrices a decoder step multiplies every row by (its FLOPs are twice
    these): each 2-D decoder weight except the position table (one row looked up) and the
    cross-attention K/V projections (run once per window, at prefill); the token embedding counts
    (the logits' projection, n_vocab x d_model)."""
    params = 0
    for t in manifest["tensors"]:
        name = t["name"]
        if not name.startswith("model.decoder.") or name.startswith("model.decoder.embed_positions"):
            continue
        if ".encoder_attn.k_proj." in name or ".encoder_attn.v_proj." in name or len(t["shape"]) != 2:
            continue
        params += math.prod(t["shape"])
    return params


def paged_step(
    manifest: Dict, config: Dict, rows: int, requests: float, position: float, state_bytes: Dict[str, int]
) -> Dict:
    """Bytes and FLOPs of one step of the multi-sequence decoder (ckw/runtime/streams.py) over `rows`
    sequences of `requests` requests, each row attending `position` earlier tokens. Bytes: the
    decoder weights once (decode_bytes_per_step's share: the step's rows share them), each
    request's cross-K/V once (its beams share the entry), each row's self-K/V. FLOPs per row: the
    matmuls (decoder_matmul_params) and per layer 4 * d per attended key (QK^T and the weighted
    sum), over the encoder's n_audio_ctx keys and `position` self keys."""
    d, layers, n_audio = config["n_text_state"], config["n_text_layer"], config["n_audio_ctx"]
    weights = decode_bytes_per_step(manifest, config, 0, 1, state_bytes)["weights"]
    cross = requests * layers * 2 * n_audio * d * state_bytes["cross"]
    self_kv = rows * layers * 2 * position * d * state_bytes["self"]
    flops = rows * (2 * decoder_matmul_params(manifest) + layers * 4 * d * (n_audio + position))
    return {"bytes": weights + cross + self_kv, "flops": flops}
