"""Teacher-forced comparison of two builds of one model on the engine's own libraries.

The reference build (fp32) decodes each clip's first 30 s window greedily, in English, with
timestamps (as openai-whisper's decode() does). Each build then runs its own encoder on the same
log-mel and reads that one token sequence in one decoder prefill (the `align` entry point: every
position's logits), so both builds predict every next token from the same history. Per position:
do the two builds' top-1 tokens agree, and KL(reference || other) of their softmax over the whole
vocabulary, summed in float64. Chance does not enter: no sampled token depends on the other build.
"""

import dataclasses

import numpy as np

from ckw.runtime import audio_stream, longform
from ckw.runtime.decoding import DecodingOptions, greedy_decode


@dataclasses.dataclass
class Agreement:
    """Teacher-forced agreement of a build with the reference over `tokens` predicted positions."""

    tokens: int = 0
    disagreements: int = 0
    kl_sum: float = 0.0

    @property
    def top1(self) -> float:
        """Percent of positions where both builds' likeliest token is the same."""
        return 100.0 * (self.tokens - self.disagreements) / max(1, self.tokens)

    @property
    def kl(self) -> float:
        """Mean KL(reference || build) per predicted token, nats."""
        return self.kl_sum / max(1, self.tokens)

    def add(self, reference: np.ndarray, other: np.ndarray) -> None:
        """Adds the positions of two builds' logits [T, n_vocab] (same token history)."""
        lp, lq = log_softmax(reference), log_softmax(other)
        self.tokens += lp.shape[0]
        self.disagreements += int((lp.argmax(-1) != lq.argmax(-1)).sum())
        self.kl_sum += float((np.exp(lp) * (lp - lq)).sum())


def log_softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    x -= x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def first_window(engine, path: str) -> np.ndarray:
    """The clip's first 30 s window of log-mel [n_mels, 3000] as transcribe() decodes it: its
    content frames, zero-padded."""
    frontend = engine.frontend.handle
    mel = audio_stream.MelStream(frontend, audio_stream.open_source(frontend, path))
    try:
        content = mel.n_frames - longform.N_FRAMES  # the stream holds 30 s of padding after the audio
        return longform.pad_or_trim(mel.window(0, min(longform.N_FRAMES, content)))
    finally:
        mel.close()


def reference_sequence(engine, mel: np.ndarray) -> tuple[list[int], int]:
    """(prompt + greedy tokens + end of text, index of the first predicted position): the tokens
    `engine` decodes for the window, as every build reads them."""
    options = DecodingOptions(language="en", without_timestamps=False)
    result = greedy_decode(engine.decoder, engine.tokenizer, engine.encoder.run(mel), options)
    return result.prefix + result.tokens + [engine.tokenizer.eot], len(result.prefix) - 1


def forced_logits(engine, mel: np.ndarray, sequence: list[int], start: int) -> np.ndarray:
    """`engine`'s logits [len(sequence) - 1 - start, n_vocab] predicting sequence[start + 1:],
    its own encoder run on `mel`."""
    engine.decoder.set_encoder_memory(engine.encoder.run(mel))
    logits, _ = engine.decoder.align(sequence)
    return logits[start:-1]
