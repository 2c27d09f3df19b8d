"""Greedy decoding with openai-whisper's semantics (its decoding.py is the reference).

Forced prefix (start of transcript, language and task for multilingual checkpoints,
<|notimestamps|>), blank suppression at the first sampled position, the checkpoint's suppress
list at every step, stop at end of text, at `sample_len` sampled tokens, or at the text context.
"""

import dataclasses
from typing import List, Optional, Protocol, Sequence

import numpy as np

from runtime.tokenizer import WhisperTokenizer


class TextDecoder(Protocol):
    """What the decoding policy needs from a decoder library handle."""

    n_text_ctx: int

    def set_encoder_memory(self, memory: np.ndarray) -> None: ...

    def prefill(self, tokens: Sequence[int]) -> np.ndarray:
        """Runs the prompt; returns the logits after its last token, float32 [n_vocab]."""

    def decode(self, token: int) -> np.ndarray:
        """Appends one token; returns the logits after it."""


@dataclasses.dataclass(frozen=True)
class DecodingOptions:
    language: Optional[str] = "en"
    task: str = "transcribe"
    sample_len: Optional[int] = None  # default: n_text_ctx // 2, as openai-whisper
    suppress_blank: bool = True


@dataclasses.dataclass
class DecodingResult:
    tokens: List[int]  # sampled tokens after the prefix, without end of text
    text: str
    prefix: List[int]
    sum_logprob: float
    avg_logprob: float
    ended_with_eot: bool


def initial_tokens(tokenizer: WhisperTokenizer, options: DecodingOptions) -> List[int]:
    return tokenizer.sot_sequence(options.language, options.task) + [tokenizer.no_timestamps]


def _log_softmax_at(logits: np.ndarray, index: int) -> float:
    finite = logits[np.isfinite(logits)]
    m = finite.max()
    return float(logits[index] - m - np.log(np.exp(finite - m).sum()))


def greedy_decode(
    decoder: TextDecoder,
    tokenizer: WhisperTokenizer,
    memory: np.ndarray,
    options: DecodingOptions = DecodingOptions(),
) -> DecodingResult:
    prefix = initial_tokens(tokenizer, options)
    sample_len = options.sample_len or decoder.n_text_ctx // 2
    suppress = np.asarray(tokenizer.suppress_tokens(), dtype=np.int64)
    blank = np.asarray(tokenizer.blank_tokens(), dtype=np.int64)

    decoder.set_encoder_memory(memory)
    logits = decoder.prefill(prefix)
    sampled: List[int] = []
    sum_logprob = 0.0
    ended = False
    for i in range(sample_len):
        scores = np.array(logits, dtype=np.float32, copy=True)
        if options.suppress_blank and i == 0:
            scores[blank] = -np.inf
        scores[suppress] = -np.inf
        token = int(np.argmax(scores))
        sum_logprob += _log_softmax_at(scores, token)
        if token == tokenizer.eot:
            ended = True
            break
        sampled.append(token)
        if len(prefix) + len(sampled) > decoder.n_text_ctx or i + 1 == sample_len:
            break
        logits = decoder.decode(token)
    return DecodingResult(
        tokens=sampled,
        text=tokenizer.decode(sampled).strip(),
        prefix=prefix,
        sum_logprob=sum_logprob,
        avg_logprob=sum_logprob / (len(sampled) + 1),
        ended_with_eot=ended,
    )
