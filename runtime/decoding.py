"""Decoding one 30 s window with openai-whisper's semantics (its decoding.py is the reference).

Initial tokens as openai-whisper's `DecodingTask`: an optional `<|startofprev|>` + prompt (the
previous text, at most n_text_ctx // 2 - 1 tokens), the start of transcript, language and task
for multilingual checkpoints, `<|notimestamps|>` unless timestamps are on, then an optional
prefix. Logit filters at every step: blank suppression at the first sampled position, the
suppress list, and the timestamp rules (runtime/timestamp_rules.py) when timestamps are on.
Token choice: argmax at temperature 0, otherwise a sample of softmax(logits / T) drawn from a
numpy Generator (openai-whisper samples with torch's RNG; the two streams cannot be made
equal, so sampled text is reproducible for a seed but is not openai-whisper's sample). With
`best_of` N > 1 (temperature > 0 only) N samples are drawn one after another and ranked as
openai-whisper's MaximumLikelihoodRanker does. Stop at end of text, at `sample_len` sampled
tokens, or at the text context. The result carries what long-form transcription needs:
average log-probability, the no-speech probability (softmax of the logits at the
start-of-transcript row, at `<|nospeech|>`), the gzip compression ratio of the text.

One deliberate default differs from openai-whisper: `without_timestamps` is True here, so
`greedy_decode` keeps the text-only single-window behaviour; long-form transcription
(runtime/longform.py) turns timestamps on as openai-whisper's `transcribe` does.
"""

import dataclasses
import math
import zlib
from typing import Dict, List, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from runtime.timestamp_rules import TimestampRules, max_initial_timestamp_index
from runtime.tokenizer import WhisperTokenizer


class TextDecoder(Protocol):
    """What the decoding policy needs from a decoder library handle."""

    n_text_ctx: int

    def set_encoder_memory(self, memory: np.ndarray) -> None: ...

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        """Starts a new sequence with the prompt `tokens`; returns the logits after the prompt
        positions `rows` (negative counts from the end; default: the last one only), float32
        [len(rows), n_vocab]. Row `tokens.index(sot)` gives the no-speech probability."""

    def decode(self, token: int) -> np.ndarray:
        """Appends one token; returns the logits after it, float32 [n_vocab]."""


TokenSpec = Optional[Union[str, Sequence[int]]]


@dataclasses.dataclass(frozen=True)
class DecodingOptions:
    language: Optional[str] = "en"
    task: str = "transcribe"
    sample_len: Optional[int] = None  # default: n_text_ctx // 2, as openai-whisper
    suppress_blank: bool = True
    temperature: float = 0.0
    best_of: Optional[int] = None  # independent samples at temperature > 0; the likeliest wins
    beam_size: Optional[int] = None  # beam search at temperature 0 (runtime/beam_search.py)
    patience: Optional[float] = None  # beam search keeps round(beam_size * patience) finished candidates
    length_penalty: Optional[float] = None  # ranking of beams or best_of samples (None: divide by length)
    without_timestamps: bool = True  # openai-whisper's default is False (see the module notes)
    max_initial_timestamp: Optional[float] = 1.0
    prompt: TokenSpec = None  # previous text (str, encoded with a leading space) or token ids
    prefix: TokenSpec = None  # forced start of this window's text
    suppress_tokens: TokenSpec = "-1"  # "-1": the non-speech set; or ids / "1,2,3"


@dataclasses.dataclass
class DecodingResult:
    tokens: List[int]  # sampled tokens after the prefix (timestamps included), without end of text
    text: str
    prefix: List[int]  # the initial tokens the decoder was prefilled with
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


def _token_list(tokenizer: WhisperTokenizer, spec: TokenSpec) -> List[int]:
    if isinstance(spec, str):
        return tokenizer.encode(" " + spec.strip())
    return [int(t) for t in spec or []]


def initial_tokens(tokenizer: WhisperTokenizer, options: DecodingOptions, n_text_ctx: int = 448) -> List[int]:
    """openai-whisper's `DecodingTask._get_initial_tokens`."""
    tokens = tokenizer.sot_sequence(options.language, options.task)
    if options.without_timestamps:
        tokens = tokens + [tokenizer.no_timestamps]
    if options.prefix:
        prefix = _token_list(tokenizer, options.prefix)
        sample_len = options.sample_len or n_text_ctx // 2
        # openai-whisper keeps prefix[-(n_text_ctx // 2 - sample_len):]; with the default
        # sample_len that is prefix[-0:], the whole prefix. Kept as is.
        tokens = tokens + prefix[-(n_text_ctx // 2 - sample_len):]
    if options.prompt:
        prompt = _token_list(tokenizer, options.prompt)
        tokens = [tokenizer.sot_prev] + prompt[-(n_text_ctx // 2 - 1):] + tokens
    return tokens


def suppress_tokens(tokenizer: WhisperTokenizer, spec: TokenSpec) -> List[int]:
    """openai-whisper's `DecodingTask._get_suppress_tokens`."""
    if isinstance(spec, str):
        ids = [int(t) for t in spec.split(",")] if spec.strip() else []
    else:
        ids = [int(t) for t in spec or []]
    if -1 in ids:
        ids = [t for t in ids if t >= 0] + tokenizer.non_speech_tokens()
    ids += [tokenizer.transcribe, tokenizer.translate, tokenizer.sot, tokenizer.sot_prev, tokenizer.sot_lm]
    if tokenizer.no_speech is not None:
        ids.append(tokenizer.no_speech)
    return sorted(set(ids))


def _log_softmax_at(logits: np.ndarray, index: int) -> float:
    finite = logits[np.isfinite(logits)]
    m = finite.max()
    return float(logits[index] - m - np.log(np.exp(finite - m).sum()))


def _softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    x = np.exp(x - x.max())
    return x / x.sum()


def _sample(scores: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """One draw from softmax(scores / temperature) (openai-whisper: torch Categorical)."""
    cdf = np.cumsum(_softmax(scores / np.float32(temperature)))
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), scores.size - 1))


def detect_language(decoder: TextDecoder, tokenizer: WhisperTokenizer,
                    memory: np.ndarray) -> Tuple[str, Dict[str, float]]:
    """openai-whisper's `detect_language`: the logits after <|startoftranscript|> alone, kept only
    at the language tokens; the argmax and the softmax over the languages."""
    if not tokenizer.is_multilingual or not tokenizer.language_ids:
        raise ValueError("language detection needs a multilingual checkpoint; this one is English-only")
    decoder.set_encoder_memory(memory)
    logits = decoder.prefill([tokenizer.sot])[0]
    codes = sorted(tokenizer.language_ids, key=tokenizer.language_ids.get)
    ids = np.array([tokenizer.language_ids[c] for c in codes])
    probs = _softmax(logits[ids])
    return codes[int(np.argmax(logits[ids]))], {c: float(p) for c, p in zip(codes, probs)}


def decode(
    decoder: TextDecoder,
    tokenizer: WhisperTokenizer,
    memory: np.ndarray,
    options: DecodingOptions = DecodingOptions(),
    rng: Optional[np.random.Generator] = None,
) -> DecodingResult:
    """One window: openai-whisper's `DecodingTask.run` for greedy decoding and sampling."""
    if options.temperature < 0:
        raise ValueError(f"temperature {options.temperature} is negative; use 0 (greedy) or more")
    if options.temperature == 0 and options.best_of is not None:
        raise ValueError("best_of needs temperature > 0 (greedy decoding has one candidate)")
    if options.length_penalty is not None and not 0 <= options.length_penalty <= 1:
        raise ValueError(f"length_penalty {options.length_penalty} must be between 0 and 1")
    if options.beam_size is not None and options.best_of is not None:
        raise ValueError("beam_size and best_of cannot be given together (beams at temperature 0, best_of above)")
    if options.patience is not None and options.beam_size is None:
        raise ValueError("patience needs beam_size")
    if options.language is None:  # openai-whisper detects the language of every such window
        language = detect_language(decoder, tokenizer, memory)[0] if tokenizer.is_multilingual else "en"
        options = dataclasses.replace(options, language=language)
    if options.beam_size is not None or (options.best_of or 1) > 1 and hasattr(decoder, "decode_batch"):
        from runtime import beam_search  # the whole group in one decoder call per step

        if options.beam_size is not None:
            return beam_search.beam_search(decoder, tokenizer, memory, options)
        return beam_search.sample_best_of(decoder, tokenizer, memory, options, rng or np.random.default_rng(0))
    n_ctx = decoder.n_text_ctx
    prefix = initial_tokens(tokenizer, options, n_ctx)
    sot_index = prefix.index(tokenizer.sot)
    sample_len = options.sample_len or n_ctx // 2
    suppress = np.asarray(suppress_tokens(tokenizer, options.suppress_tokens), dtype=np.int64)
    blank = np.asarray(tokenizer.blank_tokens(), dtype=np.int64)
    rules = None
    if not options.without_timestamps:
        rules = TimestampRules.for_tokenizer(tokenizer, max_initial_timestamp_index(options.max_initial_timestamp))
    if options.temperature > 0 and rng is None:
        rng = np.random.default_rng(0)

    decoder.set_encoder_memory(memory)
    candidates = []
    no_speech_prob = math.nan
    for n in range((options.best_of or 1) if options.temperature > 0 else 1):
        first, logits = decoder.prefill(prefix, rows=(sot_index, -1))
        if n == 0 and tokenizer.no_speech is not None:
            no_speech_prob = float(_softmax(first)[tokenizer.no_speech])
        sampled: List[int] = []
        sum_logprob = 0.0
        ended = False
        for i in range(sample_len):
            scores = np.array(logits, dtype=np.float32, copy=True)
            if options.suppress_blank and i == 0:
                scores[blank] = -np.inf
            if suppress.size:
                scores[suppress] = -np.inf
            if rules is not None:
                rules.apply(scores, sampled)
            if options.temperature == 0:
                token = int(np.argmax(scores))
            else:
                token = _sample(scores, options.temperature, rng)
            sum_logprob += _log_softmax_at(scores, token)
            if token == tokenizer.eot:
                ended = True
                break
            sampled.append(token)
            if len(prefix) + len(sampled) > n_ctx or i + 1 == sample_len:
                break
            logits = decoder.decode(token)
        candidates.append((sampled, sum_logprob, ended))

    def score(candidate) -> float:  # openai-whisper's MaximumLikelihoodRanker
        tokens, logprob, _ = candidate
        length = len(tokens)
        penalty = length if options.length_penalty is None else ((5 + length) / 6) ** options.length_penalty
        return logprob / penalty if penalty else logprob  # openai-whisper divides by zero here

    sampled, sum_logprob, ended = candidates[int(np.argmax([score(c) for c in candidates]))]
    text = tokenizer.decode(sampled).strip()
    return DecodingResult(
        tokens=sampled,
        text=text,
        prefix=prefix,
        sum_logprob=sum_logprob,
        avg_logprob=sum_logprob / (len(sampled) + 1),
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
    """Temperature 0, one window: `decode` with the given options at temperature 0."""
    return decode(decoder, tokenizer, memory, dataclasses.replace(options, temperature=0.0, best_of=None))
