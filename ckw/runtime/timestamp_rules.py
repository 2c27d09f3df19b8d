"""Timestamp decoding rules: openai-whisper's `ApplyTimestampRules` logit filter, in numpy.

With timestamps on, the model writes `<|t0|> text <|t1|><|t1'|> text <|t2|> ... <|endoftext|>`.
Before each sampled token the logits are masked so that:

1. `<|notimestamps|>` is never sampled;
2. timestamps come in pairs (a segment's end, then the next one's start), except directly
   before end of text: after a pair only text may follow, after a lone timestamp no text may;
3. timestamps never decrease, and a segment is never empty: after a text token the next
   timestamp is strictly later than the last one, right after a segment's end timestamp the
   next start may repeat it;
4. the first sampled token is a timestamp no later than `max_initial_timestamp` (1.0 s);
5. when the total probability of all timestamps exceeds that of the most likely other token,
   a timestamp is forced (text and end of text masked).

Rule 5 compares logsumexp(timestamp logits) with the largest other logit, which is the same as
openai-whisper's comparison of log-probabilities (the softmax normaliser cancels), computed in
float64 here rather than float32.
"""

from typing import Optional, Sequence

import numpy as np

CHUNK_LENGTH = 30  # seconds per window
DEFAULT_MAX_INITIAL_TIMESTAMP = 1.0


def max_initial_timestamp_index(max_initial_timestamp: Optional[float], n_audio_ctx: int = 1500) -> Optional[int]:
    """Timestamp index of `max_initial_timestamp` seconds; None (or 0) disables the limit, as openai."""
    if not max_initial_timestamp:
        return None
    precision = CHUNK_LENGTH / n_audio_ctx  # 0.02 s
    return round(max_initial_timestamp / precision)


class TimestampRules:
    """Masks logits in place for the next token after `sampled` (tokens after the prompt)."""

    def __init__(
        self,
        eot: int,
        no_timestamps: Optional[int],
        timestamp_begin: int,
        max_initial_index: Optional[int] = max_initial_timestamp_index(DEFAULT_MAX_INITIAL_TIMESTAMP),
    ):
        self.eot = eot
        self.no_timestamps = no_timestamps
        self.timestamp_begin = timestamp_begin
        self.max_initial_index = max_initial_index

    @classmethod
    def for_tokenizer(cls, tokenizer, max_initial_index: Optional[int]) -> "TimestampRules":
        return cls(tokenizer.eot, tokenizer.no_timestamps, tokenizer.timestamp_begin, max_initial_index)

    def apply(self, logits: np.ndarray, sampled: Sequence[int]) -> None:
        tb = self.timestamp_begin
        if self.no_timestamps is not None:
            logits[self.no_timestamps] = -np.inf

        last_was_timestamp = len(sampled) >= 1 and sampled[-1] >= tb
        penultimate_was_timestamp = len(sampled) < 2 or sampled[-2] >= tb
        if last_was_timestamp:
            if penultimate_was_timestamp:  # a pair just closed (or the very first token): text next
                logits[tb:] = -np.inf
            else:  # a segment just ended: another timestamp or end of text, no text
                logits[: self.eot] = -np.inf

        last_timestamp = next((int(t) for t in reversed(sampled) if t >= tb), None)
        if last_timestamp is not None:
            # Non-decreasing; strictly increasing unless this is the second of a pair.
            stop = last_timestamp if (last_was_timestamp and not penultimate_was_timestamp) else last_timestamp + 1
            logits[tb:stop] = -np.inf

        if len(sampled) == 0:
            logits[:tb] = -np.inf  # the first token is a timestamp
            if self.max_initial_index is not None:
                logits[tb + self.max_initial_index + 1 :] = -np.inf

        # Sample a timestamp when all of them together are likelier than any single other token.
        timestamps = logits[tb:].astype(np.float64)
        ts_max = timestamps.max(initial=-np.inf)
        if ts_max == -np.inf:
            return
        timestamp_logsumexp = ts_max + np.log(np.exp(timestamps - ts_max).sum())
        # The largest other logit, exact in float32 (no float64 copy of the ~50k text logits).
        if timestamp_logsumexp > float(logits[:tb].max(initial=-np.inf)):
            logits[:tb] = -np.inf
