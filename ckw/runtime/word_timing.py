"""Word-level timestamps with openai-whisper's semantics (its timing.py is the reference).

For the segments of one 30 s window, the text tokens are run through the decoder once more,
teacher-forced after the start-of-transcript sequence and `<|notimestamps|>`, with the decoder's
optional `cross_qk` output on: the cross-attention logits of every layer and head. The
checkpoint's alignment heads (model_config.json `alignment_heads`, openai-whisper's set per
variant) are kept; over the window's audio frames (num_frames // 2 encoder rows) each is a
softmax, normalised per frame across the tokens, median-filtered (width 7) along time and
averaged over the heads. Dynamic time warping over minus that matrix aligns tokens with 20 ms
steps; tokens are merged into words (spaces, or unicode characters for languages written
without them), a word starts where its first token's path enters and ends where the next
word's does, and its probability is the mean of its tokens'. Then openai-whisper's
adjustments: long words at sentence ends are cut to twice the median word length,
punctuation is merged into neighbouring words, and segment boundaries and words move toward
each other where a first or last word is implausibly long.

Numbers: the logits come from the generated C decoder (within float32 rounding of
openai-whisper's); the rest is float32 as in torch, the DTW costs float32 over a float64
matrix as openai-whisper's numba kernel keeps them.
"""

import dataclasses
import itertools
import string
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ckw.runtime.options import APPEND_PUNCTUATIONS, PREPEND_PUNCTUATIONS  # openai-whisper's defaults
from ckw.runtime.tokenizer import WhisperTokenizer

TOKENS_PER_SECOND = 50  # encoder rows per second: 16000 / 160 / 2
UNSPACED_LANGUAGES = {"zh", "ja", "th", "lo", "my", "yue"}


class AligningDecoder(Protocol):
    def set_encoder_memory(self, memory: np.ndarray) -> None: ...

    def align(self, tokens: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """A teacher-forced run of `tokens`: logits [T, n_vocab] and the cross-attention logits
        [n_layers, n_heads, T, n_audio_ctx]."""


@dataclasses.dataclass
class WordTiming:
    word: str
    tokens: list[int]
    start: float
    end: float
    probability: float


def median_filter(x: np.ndarray, width: int) -> np.ndarray:
    """Median of `width` (odd) values along the last axis, reflect-padded (torch F.pad's reflect,
    which does not repeat the edge); unchanged when the axis is not longer than width // 2."""
    pad = width // 2
    if x.shape[-1] <= pad:
        return x
    padded = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)], mode="reflect")
    windows = np.lib.stride_tricks.sliding_window_view(padded, width, axis=-1)
    return np.sort(windows, axis=-1)[..., pad]


def dtw(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """openai-whisper's dtw_cpu + backtrace: the cheapest monotone path through x [N, M]
    (float64) as (token indices, time indices). Costs are kept in float32 as there; ties prefer
    the horizontal step. Cells are filled one anti-diagonal at a time (each depends only on the
    two before it), which is the same arithmetic as the column-by-column loop."""
    n, m = x.shape
    cost = np.full((n + 1, m + 1), np.inf, dtype=np.float32)
    trace = np.full((n + 1, m + 1), -1.0, dtype=np.float32)
    cost[0, 0] = 0
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        j = d - i
        c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
        take0 = (c0 < c1) & (c0 < c2)
        take1 = ~take0 & (c1 < c0) & (c1 < c2)
        c = np.where(take0, c0, np.where(take1, c1, c2))
        cost[i, j] = (x[i - 1, j - 1] + c.astype(np.float64)).astype(np.float32)
        trace[i, j] = np.where(take0, 0, np.where(take1, 1, 2))
    trace[0, :] = 2
    trace[:, 0] = 1
    i, j, path = n, m, []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        t = trace[i, j]
        if t == 0:
            i, j = i - 1, j - 1
        elif t == 1:
            i -= 1
        elif t == 2:
            j -= 1
        else:
            raise ValueError(f"dtw: unexpected trace value {t} at ({i}, {j})")
    path = np.array(path)[::-1]
    return path[:, 0], path[:, 1]


def split_to_word_tokens(tokenizer: WhisperTokenizer, tokens: list[int], language: str):
    """openai-whisper's Tokenizer.split_to_word_tokens: (words, tokens of each word)."""
    subwords, subword_tokens = _split_on_unicode(tokenizer, tokens)
    if language in UNSPACED_LANGUAGES:
        return subwords, subword_tokens
    words, word_tokens = [], []
    for subword, ids in zip(subwords, subword_tokens):
        special = ids[0] >= tokenizer.eot
        with_space = subword.startswith(" ")
        punctuation = subword.strip() in string.punctuation
        if special or with_space or punctuation or len(words) == 0:
            words.append(subword)
            word_tokens.append(list(ids))
        else:
            words[-1] = words[-1] + subword
            word_tokens[-1].extend(ids)
    return words, word_tokens


def _split_on_unicode(tokenizer: WhisperTokenizer, tokens: list[int]):
    decoded_full = tokenizer.decode(tokens)
    replacement = "\ufffd"
    words, word_tokens, current, offset = [], [], [], 0
    for token in tokens:
        current.append(token)
        decoded = tokenizer.decode(current)
        if replacement not in decoded or decoded_full[offset + decoded.index(replacement)] == replacement:
            words.append(decoded)
            word_tokens.append(current)
            current = []
            offset += len(decoded)
    return words, word_tokens


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp((x - x.max(axis=-1, keepdims=True)).astype(np.float32))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def find_alignment(
    decoder: AligningDecoder,
    tokenizer: WhisperTokenizer,
    text_tokens: list[int],
    memory: np.ndarray,
    num_frames: int,
    alignment_heads: Sequence[Sequence[int]],
    language: str,
    task: str = "transcribe",
    medfilt_width: int = 7,
    qk_scale: float = 1.0,
) -> list[WordTiming]:
    """openai-whisper's find_alignment for one window's text tokens."""
    if len(text_tokens) == 0:
        return []
    if not alignment_heads:
        raise ValueError(
            "word timestamps need the checkpoint's alignment heads (model_config.json "
            "alignment_heads is empty: packed by an older packer); convert the checkpoint again (the packer now "
            "fills them from openai-whisper's table)"
        )
    sot_sequence = tokenizer.sot_sequence(language, task)
    tokens = [*sot_sequence, tokenizer.no_timestamps, *text_tokens, tokenizer.eot]
    decoder.set_encoder_memory(memory)
    logits, qk = decoder.align(tokens)
    token_probs = _softmax(logits[len(sot_sequence) :, : tokenizer.eot])
    text_token_probs = token_probs[np.arange(len(text_tokens)), text_tokens].astype(np.float64)

    weights = np.stack([qk[layer, head] for layer, head in sorted(map(tuple, alignment_heads))])
    weights = _softmax(weights[:, :, : num_frames // 2] * np.float32(qk_scale))
    mean = weights.mean(axis=-2, keepdims=True, dtype=np.float32)
    std = weights.std(axis=-2, keepdims=True, dtype=np.float32)
    weights = median_filter((weights - mean) / std, medfilt_width)
    matrix = weights.mean(axis=0, dtype=np.float32)[len(sot_sequence) : -1]
    text_indices, time_indices = dtw(-matrix.astype(np.float64))

    words, word_tokens = split_to_word_tokens(tokenizer, list(text_tokens) + [tokenizer.eot], language)
    if len(word_tokens) <= 1:
        return []
    boundaries = np.pad(np.cumsum([len(t) for t in word_tokens[:-1]]), (1, 0))
    jumps = np.pad(np.diff(text_indices), (1, 0), constant_values=1).astype(bool)
    jump_times = time_indices[jumps] / TOKENS_PER_SECOND
    starts, ends = jump_times[boundaries[:-1]], jump_times[boundaries[1:]]
    probabilities = [float(np.mean(text_token_probs[i:j])) for i, j in itertools.pairwise(boundaries)]
    return [
        WordTiming(w, t, float(s), float(e), p)
        for w, t, s, e, p in zip(words, word_tokens, starts, ends, probabilities)
    ]


def merge_punctuations(alignment: list[WordTiming], prepended: str, appended: str) -> None:
    """openai-whisper's merge_punctuations (in place): leading marks join the next word,
    trailing marks the previous one; the emptied entries stay with no word and no tokens."""
    i, j = len(alignment) - 2, len(alignment) - 1
    while i >= 0:
        previous, following = alignment[i], alignment[j]
        if previous.word.startswith(" ") and previous.word.strip() in prepended:
            following.word = previous.word + following.word
            following.tokens = previous.tokens + following.tokens
            previous.word, previous.tokens = "", []
        else:
            j = i
        i -= 1
    i, j = 0, 1
    while j < len(alignment):
        previous, following = alignment[i], alignment[j]
        if not previous.word.endswith(" ") and following.word in appended:
            previous.word = previous.word + following.word
            previous.tokens = previous.tokens + following.tokens
            following.word, following.tokens = "", []
        else:
            i = j
        j += 1


def add_word_timestamps(
    segments: list[dict],
    decoder: AligningDecoder,
    tokenizer: WhisperTokenizer,
    memory: np.ndarray,
    num_frames: int,
    alignment_heads: Sequence[Sequence[int]],
    language: str,
    task: str,
    last_speech_timestamp: float,
    prepend_punctuations: str = PREPEND_PUNCTUATIONS,
    append_punctuations: str = APPEND_PUNCTUATIONS,
) -> None:
    """openai-whisper's add_word_timestamps: sets `words` (word, start, end, probability) on
    each of one window's segments and adjusts the segments' start and end."""
    if len(segments) == 0:
        return
    per_segment = [[t for t in s["tokens"] if t < tokenizer.eot] for s in segments]
    text_tokens = list(itertools.chain.from_iterable(per_segment))
    alignment = find_alignment(decoder, tokenizer, text_tokens, memory, num_frames, alignment_heads, language, task)
    durations = np.array([t.end - t.start for t in alignment])
    durations = durations[durations.nonzero()]
    median_duration = min(0.7, float(np.median(durations) if len(durations) > 0 else 0.0))
    max_duration = median_duration * 2

    # Long words at sentence boundaries are cut to twice the median word duration.
    if len(durations) > 0:
        sentence_end_marks = ".。!！?？"
        for i in range(1, len(alignment)):
            if alignment[i].end - alignment[i].start > max_duration:
                if alignment[i].word in sentence_end_marks:
                    alignment[i].end = alignment[i].start + max_duration
                elif alignment[i - 1].word in sentence_end_marks:
                    alignment[i].start = alignment[i].end - max_duration

    merge_punctuations(alignment, prepend_punctuations, append_punctuations)

    time_offset = segments[0]["seek"] * 160 / 16000
    word_index = 0
    for segment, tokens in zip(segments, per_segment):
        saved_tokens, words = 0, []
        while word_index < len(alignment) and saved_tokens < len(tokens):
            timing = alignment[word_index]
            if timing.word:
                words.append(
                    {
                        "word": timing.word,
                        "start": round(time_offset + timing.start, 2),
                        "end": round(time_offset + timing.end, 2),
                        "probability": timing.probability,
                    }
                )
            saved_tokens += len(timing.tokens)
            word_index += 1
        if len(words) > 0:
            _adjust_segment(segment, words, last_speech_timestamp, median_duration, max_duration)
            last_speech_timestamp = segment["end"]
        segment["words"] = words


def _adjust_segment(
    segment: dict, words: list[dict], last_speech_timestamp: float, median_duration: float, max_duration: float
) -> None:
    # After a pause, the first and second word may not be longer than twice the median.
    if words[0]["end"] - last_speech_timestamp > median_duration * 4 and (
        words[0]["end"] - words[0]["start"] > max_duration
        or (len(words) > 1 and words[1]["end"] - words[0]["start"] > max_duration * 2)
    ):
        if len(words) > 1 and words[1]["end"] - words[1]["start"] > max_duration:
            boundary = max(words[1]["end"] / 2, words[1]["end"] - max_duration)
            words[0]["end"] = words[1]["start"] = boundary
        words[0]["start"] = max(0, words[0]["end"] - max_duration)
    # The segment's own start wins over a first word that is too long, else the word's.
    if segment["start"] < words[0]["end"] and segment["start"] - 0.5 > words[0]["start"]:
        words[0]["start"] = max(0, min(words[0]["end"] - median_duration, segment["start"]))
    else:
        segment["start"] = words[0]["start"]
    # Likewise at the end.
    if segment["end"] > words[-1]["start"] and segment["end"] + 0.5 < words[-1]["end"]:
        words[-1]["end"] = max(words[-1]["start"] + median_duration, segment["end"])
    else:
        segment["end"] = words[-1]["end"]


def last_word_end(segments: list[dict]):
    """openai-whisper's get_end: the last word's end, else the last segment's end (None: no segments)."""
    return next(
        (w["end"] for s in reversed(segments) for w in reversed(s.get("words", []))),
        segments[-1]["end"] if segments else None,
    )
