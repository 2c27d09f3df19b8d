"""Decoding one 30 s window with openai-whisper's semantics (its decoding.py is the reference):
the one owner of window decoding, for greedy decoding, best-of-N sampling and beam search alike.

Initial tokens as openai-whisper's `DecodingTask`: an optional `<|startofprev|>` + prompt (the
previous text, at most n_text_ctx // 2 - 1 tokens), the start of transcript, language and task
for multilingual checkpoints, `<|notimestamps|>` unless timestamps are on, then an optional
prefix. The prompt runs once (`prefill`) and its self-K/V are copied to every sequence of the
group (`reorder` with all zeros); each step is then one `decode_batch` of one token per
sequence, so every weight is read once per step whatever the group size (openai-whisper runs
the same prompt through all `n_group` rows; the rows are identical, so the first step's
candidates are too).

Every step: the logit filters (`LogitFilters`: blank suppression at the first sampled position,
the suppress list, the timestamp rules of ckw/runtime/timestamp_rules.py when timestamps are on),
then the group's token choice (ckw/runtime/token_choice.py): greedy is a group of one taking the
argmax, best_of N samples N rows at temperature > 0, beam search keeps beam_size beams and moves
the decoder's self-K/V with them. Stop when the group is done, at `sample_len` sampled tokens, or
at the text context. `rank` (openai-whisper's MaximumLikelihoodRanker) picks the result, which
carries what long-form transcription needs: average log-probability, the no-speech probability
(softmax of the logits at the start-of-transcript row, at `<|nospeech|>`), the gzip compression
ratio of the text.

One deliberate default differs from openai-whisper: `without_timestamps` is True here, so
`greedy_decode` keeps the text-only single-window behaviour; long-form transcription
(ckw/runtime/longform.py) turns timestamps on as openai-whisper's `transcribe` does.
"""

import dataclasses
import math
import zlib
from collections.abc import Sequence
from typing import Optional, Protocol

import numpy as np

from ckw.runtime import token_choice
from ckw.runtime.options import TokenSpec, check_search, parse_token_ids
from ckw.runtime.timestamp_rules import TimestampRules, max_initial_timestamp_index
from ckw.runtime.tokenizer import WhisperTokenizer


class TextDecoder(Protocol):
    """What window decoding needs from a decoder library handle (runtime.engine.Decoder)."""

    n_text_ctx: int
    max_beams: int  # sequences decode_batch runs side by side

    def set_encoder_memory(self, memory: np.ndarray) -> None: ...

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        """Starts a new sequence with the prompt `tokens`; returns the logits after the prompt
        positions `rows` (negative counts from the end; default: the last one only), float32
        [len(rows), n_vocab]. Row `tokens.index(sot)` gives the no-speech probability."""

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        """One token per sequence at the current position; logits [len(tokens), n_vocab]."""

    def reorder(self, source: Sequence[int]) -> None:
        """Sequence b continues from sequence source[b] (its self-K/V, in place)."""

    # Optional: top_log_probs(scores [n, n_vocab], k) -> (tokens [n, k], logprobs [n, k]), the
    # beam search's ranking of filtered logits in the library (the paged decoder's rank phase);
    # without it token_choice ranks them in numpy, with the same result.


def prompt_rows(rows: Sequence[int], n_tokens: int) -> np.ndarray:
    """TextDecoder.prefill's `rows` as int32 indices into the prompt (negative counts from the
    end); ValueError unless each names one of the n_tokens prompt positions."""
    picked = np.asarray(rows, dtype=np.int64)
    if picked.size == 0 or np.any((picked < -n_tokens) | (picked >= n_tokens)):
        raise ValueError(f"prefill rows {list(rows)}: each must index one of the {n_tokens} prompt tokens")
    return (picked % n_tokens).astype(np.int32)


@dataclasses.dataclass(frozen=True)
class DecodingOptions:
    language: Optional[str] = "en"
    task: str = "transcribe"
    sample_len: Optional[int] = None  # default: n_text_ctx // 2, as openai-whisper
    suppress_blank: bool = True
    temperature: float = 0.0
    best_of: Optional[int] = None  # independent samples at temperature > 0; the likeliest wins
    beam_size: Optional[int] = None  # beam search at temperature 0
    patience: Optional[float] = None  # beam search keeps round(beam_size * patience) finished candidates
    length_penalty: Optional[float] = None  # ranking of beams or best_of samples (None: divide by length)
    without_timestamps: bool = True  # openai-whisper's default is False (see the module notes)
    max_initial_timestamp: Optional[float] = 1.0
    prompt: TokenSpec = None  # previous text (str, encoded with a leading space) or token ids
    prefix: TokenSpec = None  # forced start of this window's text
    suppress_tokens: TokenSpec = "-1"  # "-1": the non-speech set; or ids / "1,2,3"

    def __post_init__(self):
        check_search(self.temperature, self.best_of, self.beam_size, self.patience, self.length_penalty)
        if self.temperature == 0 and self.best_of is not None:
            raise ValueError("best_of needs temperature > 0 (greedy decoding has one candidate)")
        if self.beam_size is not None and self.temperature > 0:
            raise ValueError("beam_size needs temperature 0 (sampling at temperature > 0 uses best_of)")


@dataclasses.dataclass
class DecodingResult:
    tokens: list[int]  # sampled tokens after the prefix (timestamps included), without end of text
    text: str
    prefix: list[int]  # the initial tokens the decoder was prefilled with
    sum_logprob: float
    avg_logprob: float
    ended_with_eot: bool
    language: Optional[str] = None
    no_speech_prob: float = math.nan
    temperature: float = 0.0
    compression_ratio: float = math.nan


def compression_ratio(text: str) -> float:
    """gzip compression ratio, as openai-whisper: bytes of UTF-8 over bytes of zlib.compress."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data))


def _token_list(tokenizer: WhisperTokenizer, spec: TokenSpec) -> list[int]:
    if isinstance(spec, str):
        return tokenizer.encode(" " + spec.strip())
    return [int(t) for t in spec or []]


def initial_tokens(tokenizer: WhisperTokenizer, options: DecodingOptions, n_text_ctx: int = 448) -> list[int]:
    """openai-whisper's `DecodingTask._get_initial_tokens`."""
    tokens = tokenizer.sot_sequence(options.language, options.task)
    if options.without_timestamps:
        tokens = tokens + [tokenizer.no_timestamps]
    if options.prefix:
        prefix = _token_list(tokenizer, options.prefix)
        sample_len = options.sample_len or n_text_ctx // 2
        # openai-whisper keeps prefix[-(n_text_ctx // 2 - sample_len):]; with the default
        # sample_len that is prefix[-0:], the whole prefix. Kept as is.
        tokens = tokens + prefix[-(n_text_ctx // 2 - sample_len) :]
    if options.prompt:
        prompt = _token_list(tokenizer, options.prompt)
        tokens = [tokenizer.sot_prev] + prompt[-(n_text_ctx // 2 - 1) :] + tokens
    return tokens


def suppress_tokens(tokenizer: WhisperTokenizer, spec: TokenSpec) -> list[int]:
    """openai-whisper's `DecodingTask._get_suppress_tokens`."""
    ids = parse_token_ids("suppress_tokens", spec)
    if -1 in ids:
        ids = [t for t in ids if t >= 0] + tokenizer.non_speech_tokens()
    ids += [tokenizer.transcribe, tokenizer.translate, tokenizer.sot, tokenizer.sot_prev, tokenizer.sot_lm]
    if tokenizer.no_speech is not None:
        ids.append(tokenizer.no_speech)
    return sorted(set(ids))


class LogitFilters:
    """openai-whisper's logit filters for one window, applied to each sequence's row."""

    def __init__(self, tokenizer: WhisperTokenizer, options: DecodingOptions):
        self.blank = np.asarray(tokenizer.blank_tokens(), dtype=np.int64) if options.suppress_blank else None
        self.suppress = np.asarray(suppress_tokens(tokenizer, options.suppress_tokens), dtype=np.int64)
        self.rules = None
        if not options.without_timestamps:
            index = max_initial_timestamp_index(options.max_initial_timestamp)
            self.rules = TimestampRules.for_tokenizer(tokenizer, index)

    def apply(self, logits: np.ndarray, sampled: Sequence[Sequence[int]]) -> np.ndarray:
        """A masked copy of `logits` [n, n_vocab]; sampled[j]: row j's tokens after the prompt."""
        scores = np.array(logits, dtype=np.float32, copy=True)
        for row, tokens in zip(scores, sampled):
            if self.blank is not None and not tokens:
                row[self.blank] = -np.inf
            if self.suppress.size:
                row[self.suppress] = -np.inf
            if self.rules is not None:
                self.rules.apply(row, tokens)
        return scores


def rank(candidates: Sequence[tuple[list[int], float]], length_penalty: float | None) -> int:
    """openai-whisper's MaximumLikelihoodRanker: the index of the best (tokens, sum_logprob)."""
    scores = []
    for tokens, logprob in candidates:
        length = len(tokens)
        penalty = length if length_penalty is None else ((5 + length) / 6) ** length_penalty
        scores.append(logprob / penalty if penalty else logprob)  # openai-whisper divides by zero here
    return int(np.argmax(scores))


def detect_language(
    decoder: TextDecoder, tokenizer: WhisperTokenizer, memory: np.ndarray
) -> tuple[str, dict[str, float]]:
    """openai-whisper's `detect_language`: the logits after <|startoftranscript|> alone, kept only
    at the language tokens; the argmax and the softmax over the languages."""
    if not tokenizer.is_multilingual or not tokenizer.language_ids:
        raise ValueError("language detection needs a multilingual checkpoint; this one is English-only")
    decoder.set_encoder_memory(memory)
    logits = decoder.prefill([tokenizer.sot])[0]
    codes = sorted(tokenizer.language_ids, key=tokenizer.language_ids.get)
    ids = np.array([tokenizer.language_ids[c] for c in codes])
    probs = token_choice.softmax(logits[ids])
    return codes[int(np.argmax(logits[ids]))], {c: float(p) for c, p in zip(codes, probs)}


def decode(
    decoder: TextDecoder,
    tokenizer: WhisperTokenizer,
    memory: np.ndarray,
    options: DecodingOptions = DecodingOptions(),
    rng: Optional[np.random.Generator] = None,
) -> DecodingResult:
    """One window: openai-whisper's `DecodingTask.run` (greedy, best_of sampling or beam search)."""
    if options.language is None:  # openai-whisper detects the language of every such window
        language = detect_language(decoder, tokenizer, memory)[0] if tokenizer.is_multilingual else "en"
        options = dataclasses.replace(options, language=language)
    group = token_choice.chooser(
        options,
        tokenizer.eot,
        decoder.max_beams,
        rng,
        getattr(decoder, "top_log_probs", token_choice.top_log_probs_rows),
    )
    n_ctx = decoder.n_text_ctx
    prefix = initial_tokens(tokenizer, options, n_ctx)
    sample_len = options.sample_len or n_ctx // 2
    filters = LogitFilters(tokenizer, options)

    decoder.set_encoder_memory(memory)
    first, last = decoder.prefill(prefix, rows=(prefix.index(tokenizer.sot), -1))
    if group.n > 1:
        decoder.reorder([0] * group.n)  # every sequence starts from the prompt's self-K/V
    logits = np.repeat(last[None], group.n, axis=0)
    no_speech_prob = math.nan
    if tokenizer.no_speech is not None:
        no_speech_prob = float(token_choice.softmax(first)[tokenizer.no_speech])
    for i in range(sample_len):
        source = group.update(filters.apply(logits, group.histories()))
        if group.done or len(prefix) + i + 1 > n_ctx or i + 1 == sample_len:
            break
        if source is not None:
            decoder.reorder(source)
        logits = decoder.decode_batch(group.next_tokens())

    candidates = group.finish()
    tokens, sum_logprob, ended = candidates[rank([c[:2] for c in candidates], options.length_penalty)]
    text = tokenizer.decode(tokens).strip()
    return DecodingResult(
        tokens=tokens,
        text=text,
        prefix=prefix,
        sum_logprob=sum_logprob,
        avg_logprob=sum_logprob / (len(tokens) + 1),
        ended_with_eot=ended,
        language=options.language,
        no_speech_prob=no_speech_prob,
        temperature=float(options.temperature),
        compression_ratio=compression_ratio(text),
    )


def greedy_decode(
    decoder: TextDecoder,
    tokenizer: WhisperTokenizer,
    memory: np.ndarray,
    options: DecodingOptions = DecodingOptions(),
) -> DecodingResult:
    """Temperature 0, one window: `decode` with the given options at temperature 0 (greedy, or
    beams with options.beam_size)."""
    return decode(decoder, tokenizer, memory, dataclasses.replace(options, temperature=0.0, best_of=None))
