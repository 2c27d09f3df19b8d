"""//tools:benchmark_sizes' parts: seeded weights of a published model's layout given to ckw and,
through a Hugging Face directory and CTranslate2's own converter, to faster-whisper (float32 and
int8); one engine per subprocess (its peak RSS is its own), each decoding exactly `decode_tokens`
tokens (end of text suppressed: seeded weights never choose it, but nothing else may stop a run
short); the machine's yardsticks (sgemm, memory-read bandwidth) in a process of their own; the
decode step's bandwidth floor (tools/bench/floors.py); the table."""

import json
import os
import shutil
import statistics
import time
from typing import Dict, List

import numpy as np

SIZES = ("small", "medium", "large-v3", "large-v3-turbo")


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM: weights mapped from files included), MiB."""
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise OSError("/proc/self/status: no VmHWM line")


# --- the weights --------------------------------------------------------------------------------


def write_peer_dirs(model: str, layers: str, seed: int, out: str) -> Dict[str, str]:
    """Seeded weights of `model` as a Hugging Face directory (out/hf), then each engine's own converter
    on it: ckw's checkpoint store packs it (out/ckw: tokenizer ids and audit as for any fine-tune),
    CTranslate2's converter writes out/ct2-float32 and out/ct2-int8. The same values everywhere."""
    from ckw.checkpoints import sources, store, tokenizer_kinds
    from ckw.checkpoints.packed import PackedCheckpoint
    from ckw.checkpoints.seeded import write_seeded

    seeded, hf = os.path.join(out, "seeded"), os.path.join(out, "hf")
    write_seeded(model, seeded, seed, layers)
    ckpt = PackedCheckpoint(seeded, verify=False)
    # seeded.py writes a placeholder tokenizer; both converters need the real one of the model's kind.
    kind = tokenizer_kinds.kind_for_n_vocab(ckpt.config["n_vocab"], seeded)
    write_hf_directory(ckpt, hf, tokenizer_kinds.tokenizer_path(kind))
    del ckpt
    shutil.rmtree(seeded)
    dirs = {
        "ckw": store.convert_into(
            sources.from_path(hf, f"seeded {model}"), os.path.join(out, "ckw"), model, lambda _: None
        )
    }
    for quantization in ("float32", "int8"):
        dirs[f"ct2-{quantization}"] = convert_ct2(hf, os.path.join(out, f"ct2-{quantization}"), quantization)
    shutil.rmtree(hf)  # converted: no engine reads it
    return dirs


def write_hf_directory(ckpt, out: str, tokenizer: str) -> str:
    """`ckpt` (a PackedCheckpoint) as transformers' save_pretrained writes a Whisper model: config.json,
    model.safetensors (each tensor in its stored dtype, so large-v3 stays 3 GB), tokenizer.json,
    preprocessor_config.json (n_mels: faster-whisper's feature size)."""
    from safetensors.numpy import save_file
    from transformers import WhisperConfig

    from ckw.checkpoints.canonical import is_key_bias

    c = ckpt.config
    os.makedirs(out, exist_ok=True)
    WhisperConfig(
        vocab_size=c["n_vocab"],
        num_mel_bins=c["n_mels"],
        d_model=c["n_audio_state"],
        encoder_layers=c["n_audio_layer"],
        encoder_attention_heads=c["n_audio_head"],
        decoder_layers=c["n_text_layer"],
        decoder_attention_heads=c["n_text_head"],
        encoder_ffn_dim=4 * c["n_audio_state"],
        decoder_ffn_dim=4 * c["n_text_state"],
        max_source_positions=c["n_audio_ctx"],
        max_target_positions=c["n_text_ctx"],
    ).save_pretrained(out)
    dtypes = {t["name"]: t["dtype"] for t in ckpt.manifest["tensors"]}
    tensors = {
        n: np.ascontiguousarray(ckpt.tensor(n), np.float16 if dtypes[n] == "f16" else np.float32)
        for n in ckpt.names()
        if not is_key_bias(n)
    }  # Whisper's key projection has no bias
    save_file(tensors, os.path.join(out, "model.safetensors"))
    shutil.copy(tokenizer, os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "preprocessor_config.json"), "w", encoding="utf-8") as f:
        json.dump({"feature_size": c["n_mels"]}, f)
    return out


def convert_ct2(hf_dir: str, out: str, quantization: str) -> str:
    """CTranslate2's own TransformersConverter, with one change: transformers 5 loads models with
    use_kernels=True by default and then raises unless the optional `kernels` package is installed
    (it is not in .venv); the converter passes no such argument, so its load_model is overridden to
    pass use_kernels=False. The weights it converts are untouched."""
    import ctranslate2

    class Converter(ctranslate2.converters.TransformersConverter):
        def load_model(self, model_class, model_name_or_path, **kwargs):
            return model_class.from_pretrained(model_name_or_path, use_kernels=False, **kwargs)

    Converter(hf_dir, copy_files=["tokenizer.json", "preprocessor_config.json"]).convert(
        out, quantization=quantization, force=True
    )
    return out


# --- the engines, each in its own process -------------------------------------------------------


def _timed_runs(once, runs: int) -> List[Dict]:
    once()  # warm-up
    return [once() for _ in range(runs)]


def run_ckw(spec: Dict) -> Dict:
    """ckw on the packed checkpoint: the log-mel of the clip (saved for the peers: every engine gets
    the same window), then per run the encoder, prefill of the forced prefix and decode_tokens - 1
    decoder calls, each token the argmax with end of text suppressed."""
    from ckw.runtime.engine import Engine

    engine = Engine.from_checkpoint(spec["checkpoint"], threads=spec["threads"])
    tok = engine.tokenizer
    prompt = tok.sot_sequence("en" if tok.is_multilingual else None, "transcribe") + [tok.no_timestamps]
    with open(spec["wav"], "rb") as f:
        mel = np.ascontiguousarray(engine.frontend.log_mel(f.read())[:, :3000])
    np.save(spec["mel"], mel)
    n, eot = spec["decode_tokens"], tok.eot
    enc, dec = engine.encoder, engine.decoder
    calls = {"decode": 0}

    def pick(logits: np.ndarray) -> int:
        logits[eot] = -np.inf
        return int(np.argmax(logits))

    def once() -> Dict:
        calls["decode"] = 0
        t0 = time.perf_counter()
        memory = enc.run(mel)
        t1 = time.perf_counter()
        dec.set_encoder_memory(memory)
        tokens = [pick(dec.prefill(prompt)[0])]
        t2 = time.perf_counter()
        while len(tokens) < n:
            tokens.append(pick(dec.decode(tokens[-1])))
            calls["decode"] += 1
        t3 = time.perf_counter()
        return {
            "encoder": 1e3 * (t1 - t0),
            "prefill": 1e3 * (t2 - t1),
            "decode_per_token": 1e3 * (t3 - t2) / max(calls["decode"], 1),
            "total": 1e3 * (t3 - t0),
            "tokens": len(tokens),
            "decode_calls": calls["decode"],
        }

    runs = _timed_runs(once, spec["runs"])
    engine.close()
    return {
        "runs": runs,
        "prompt": prompt,
        "eot": eot,
        "peak_rss_mb": peak_rss_mb(),
        "config": engine.config,
        "manifest": engine_manifest(spec["checkpoint"]),
    }


def engine_manifest(directory: str) -> Dict:
    with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def run_faster_whisper(spec: Dict) -> Dict:
    """faster-whisper's model (its WhisperModel: CTranslate2's Whisper with faster-whisper's thread
    settings) on the same log-mel window: encode, then generate from the same prefix, greedy, end of
    text suppressed, asking for decode_tokens tokens (CTranslate2's Whisper returns about max_length // 2
    new tokens, not max_length: the warm-up finds the max_length that gives exactly N, and every run
    checks the count). It runs prefill and decoding in one call,
    so decode/token is derived: (generate of N tokens - generate of 1) / (N - 1)."""
    import ctranslate2
    from faster_whisper import WhisperModel

    model = WhisperModel(
        spec["model_dir"], device="cpu", compute_type=spec["compute_type"], cpu_threads=spec["threads"]
    )
    features = ctranslate2.StorageView.from_array(np.load(spec["mel"])[None])
    n, prompt, eot = spec["decode_tokens"], spec["prompt"], spec["eot"]

    lengths: Dict[int, int] = {}  # tokens wanted -> the max_length that gives exactly that many

    def generate(encoded, count: int) -> List[int]:
        if count not in lengths:  # found on the warm-up run (CTranslate2's max_length is not a token count)
            # Nearest to 2N first (each try decodes up to N tokens); below the prefix: "must be > 0".
            tries = sorted(range(len(prompt), 4 * count + len(prompt) + 8), key=lambda m: abs(m - 2 * count))
            for max_length in tries:
                if len(_generate(encoded, max_length)) == count:
                    lengths[count] = max_length
                    break
            else:
                raise RuntimeError(
                    f"faster-whisper: no max_length gives exactly {count} tokens; --decode_tokens cannot be matched"
                )
        ids = _generate(encoded, lengths[count])
        if len(ids) != count:
            raise RuntimeError(f"faster-whisper generated {len(ids)} tokens where {count} were forced")
        return ids

    def _generate(encoded, max_length: int) -> List[int]:
        result = model.model.generate(
            encoded, [prompt], beam_size=1, max_length=max_length, suppress_blank=False, suppress_tokens=[eot]
        )
        return result[0].sequences_ids[0]

    def once() -> Dict:
        t0 = time.perf_counter()
        encoded = model.model.encode(features, to_cpu=False)
        t1 = time.perf_counter()
        ids = generate(encoded, n)
        t2 = time.perf_counter()
        generate(encoded, 1)
        t3 = time.perf_counter()
        return {
            "encoder": 1e3 * (t1 - t0),
            "prefill": 1e3 * (t3 - t2),
            "decode_per_token": 1e3 * ((t2 - t1) - (t3 - t2)) / max(n - 1, 1),
            "total": 1e3 * (t2 - t0),
            "tokens": len(ids),
        }

    runs = _timed_runs(once, spec["runs"])
    return {"runs": runs, "peak_rss_mb": peak_rss_mb()}


def run_probes(spec: Dict) -> Dict:
    """`runs` rounds of the sgemm probe at the encoder's MLP shape and the read-bandwidth probe."""
    from tools.bench import bandwidth, sgemm

    d = spec["d_model"]
    gemm = sgemm.Sgemm(spec["n_audio_ctx"], d, 4 * d, spec["threads"])
    rounds = [{"sgemm_gflops": gemm.run(), "read": bandwidth.best_of(spec["threads"])} for _ in range(spec["runs"])]
    return {"rounds": rounds, "sgemm_shape": "x".join(map(str, gemm.shape))}


WORKERS = {"prepare": None, "ckw": run_ckw, "faster-whisper": run_faster_whisper, "probes": run_probes}


def median(runs: List[Dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)
