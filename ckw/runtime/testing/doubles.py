"""Test doubles for the runtime's decoding: a scripted decoder (runtime.decoding.TextDecoder) and
openai-whisper's DecodingTask over the same script, so a test runs both policies on identical
logits and compares what they chose.

A script is `next_logits(prompt, history) -> float32 [n_vocab]`: the logits after the tokens
`history` sampled after `prompt` (a function of them alone, so beams and reorders need no
bookkeeping); optionally `sot_logits(prompt)`, the row at the start-of-transcript position (the
no-speech probability). `step_script(fn)` adapts scripts written as fn(step, previous token).
"""

import functools
import types
from collections.abc import Callable, Sequence

import numpy as np
import torch
from whisper.decoding import DecodingTask

from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime.tokenizer import WhisperTokenizer


@functools.cache
def checkpoint_tokenizer(variant: str) -> WhisperTokenizer:
    """The tokenizer of @whisper_<variant> (in the test's data), made once per process."""
    return WhisperTokenizer.from_checkpoint(runfiles_checkpoint_dir(variant))


NextLogits = Callable[[tuple, tuple], np.ndarray]
SotLogits = Callable[[tuple], np.ndarray]


def step_script(fn: Callable[[int, int], np.ndarray]) -> NextLogits:
    """A script of (sampled position, previous token) as next_logits(prompt, history)."""
    return lambda prompt, history: fn(len(history), int((history or prompt)[-1]))


class ScriptedDecoder:
    """TextDecoder over a script, one history per sequence; records what the policy asked for:
    `prefills` (each prompt), `fed` (the tokens of each decode_batch call), `reorders`."""

    def __init__(
        self,
        next_logits: NextLogits,
        n_vocab: int,
        n_text_ctx: int = 448,
        max_beams: int = 8,
        sot: int | None = None,
        sot_logits: SotLogits | None = None,
    ):
        self.next_logits, self.sot_logits, self.sot = next_logits, sot_logits, sot
        self.n_vocab, self.n_text_ctx, self.max_beams = n_vocab, n_text_ctx, max_beams
        self.memory = None
        self.prompt: tuple = ()
        self.histories: list[list[int]] = []
        self.prefills: list[list[int]] = []
        self.fed: list[list[int]] = []
        self.reorders = 0

    @property
    def decoded(self) -> list[int]:
        """The tokens fed to the first sequence, in order (a group of one: all of them)."""
        return [tokens[0] for tokens in self.fed]

    def set_encoder_memory(self, memory) -> None:
        self.memory = memory

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        assert self.memory is not None, "prefill before set_encoder_memory"
        self.prompt = tuple(int(t) for t in tokens)
        self.prefills.append(list(self.prompt))
        self.histories, self.fed = [[]], []
        out = np.zeros((len(self.prompt), self.n_vocab), np.float32)
        if self.sot_logits is not None and self.sot in self.prompt:
            out[self.prompt.index(self.sot)] = self.sot_logits(self.prompt)
        out[-1] = self.next_logits(self.prompt, ())  # when sot is last, its row is the first step's
        return out[list(rows)]

    def reorder(self, source: Sequence[int]) -> None:
        assert all(0 <= s < len(self.histories) for s in source), (source, len(self.histories))
        self.histories = [list(self.histories[s]) for s in source]
        self.reorders += 1

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        assert len(tokens) == len(self.histories), (len(tokens), len(self.histories))
        assert len(self.prompt) + len(self.histories[0]) < self.n_text_ctx, "decoded past the text context"
        self.fed.append([int(t) for t in tokens])
        for history, token in zip(self.histories, tokens):
            history.append(int(token))
        return np.stack([self.next_logits(self.prompt, tuple(h)) for h in self.histories])


class ScriptedInference:
    """openai-whisper's Inference interface over the same script."""

    def __init__(
        self, next_logits: NextLogits, n_vocab: int, n_prefix: int, sot_index: int, sot_logits: SotLogits | None = None
    ):
        self.next_logits, self.sot_logits = next_logits, sot_logits
        self.n_vocab, self.n_prefix, self.sot_index = n_vocab, n_prefix, sot_index

    def logits(self, tokens: torch.Tensor, audio_features: torch.Tensor) -> torch.Tensor:
        first = tokens.shape[-1] == self.n_prefix
        out = torch.zeros(tokens.shape[0], self.n_prefix if first else 1, self.n_vocab)
        for i, row in enumerate(tokens.tolist()):
            prompt = tuple(row[: self.n_prefix])
            if first and self.sot_logits is not None:
                out[i, self.sot_index] = torch.from_numpy(self.sot_logits(prompt))
            out[i, -1] = torch.from_numpy(self.next_logits(prompt, tuple(row[self.n_prefix :])))
        return out

    def rearrange_kv_cache(self, source_indices) -> None:
        pass  # the logits are a function of each row's tokens

    def cleanup_caching(self) -> None:
        pass


def openai_decode(
    tokenizer, options, next_logits: NextLogits, n_text_ctx: int = 448, sot_logits: SotLogits | None = None
):
    """openai-whisper's DecodingTask.run with `options` (its DecodingOptions) over the script on a
    stub model of the tokenizer's vocabulary: (task, result), result None where openai-whisper's
    ranker divides by zero (end of text at the first sampled position)."""
    dims = types.SimpleNamespace(n_text_ctx=n_text_ctx, n_audio_ctx=1500, n_vocab=tokenizer.n_vocab)
    stub = types.SimpleNamespace(
        dims=dims,
        is_multilingual=tokenizer.is_multilingual,
        num_languages=tokenizer.n_vocab - 51765 - int(tokenizer.is_multilingual),
        decoder=types.SimpleNamespace(blocks=[]),
    )
    task = DecodingTask(stub, options)
    task.inference = ScriptedInference(
        next_logits, tokenizer.n_vocab, len(task.initial_tokens), task.sot_index, sot_logits
    )
    if hasattr(task.decoder, "inference"):  # BeamSearchDecoder keeps its own reference
        task.decoder.inference = task.inference
    task._get_audio_features = lambda mel: torch.zeros(1, 1, 1)
    try:
        (result,) = task.run(torch.zeros(1, 1, 1))
    except ZeroDivisionError:
        return task, None
    return task, result


def scripted_decoder_for(
    tokenizer, next_logits: NextLogits, n_text_ctx: int = 448, sot_logits: SotLogits | None = None, max_beams: int = 8
) -> ScriptedDecoder:
    """A ScriptedDecoder of the tokenizer's vocabulary and start-of-transcript token."""
    return ScriptedDecoder(next_logits, tokenizer.n_vocab, n_text_ctx, max_beams, tokenizer.sot, sot_logits)
