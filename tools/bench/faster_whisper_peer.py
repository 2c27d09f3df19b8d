"""faster-whisper (CTranslate2) as a peer of //tools:benchmark_e2e, at compute_type float32 or int8,
on the same weight packages the checkpoint rule converts (benchmark_e2e.ctranslate2_model_dir).

Stages: faster-whisper exposes its feature extractor and encoder, which are timed in their own
calls right before the end-to-end one (the same 30 s window ckw encodes); its prefill and decode
run inside one CTranslate2 generate call, so decode per token is derived: (total - frontend -
encoder x windows) / (decoder steps), prefill and Python included (marked `~` in the table); in
long-form runs the windows are counted from the segments' seek positions."""

import time
from typing import Dict

N_SAMPLES = 480000  # 30 s at 16 kHz


class FasterWhisperPeer:

    def __init__(self, model_dir: str, compute_type: str, threads: int):
        from faster_whisper import WhisperModel

        self.label = f"fw-{'fp32' if compute_type == 'float32' else compute_type}"
        self.compute_type = compute_type
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
            options = dict(beam_size=1, temperature=0.0, without_timestamps=True, condition_on_previous_text=False)
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
