"""A `TextDecoder` (ckw/runtime/decoding.py) backed by openai-whisper's PyTorch model.

It runs the decoding policy on the reference model itself, so the policy can be proven
against `whisper.decode()` independently of the generated C engine, and it is the
reference backend the C decoder library is compared with.

Caching is openai-whisper's own: `Whisper.install_kv_cache_hooks` around every call, with the
cache dictionary kept between calls. The self-attention K/V grow by one row per decode step;
the cross-attention K/V are projected from the full encoder memory (all `n_audio_ctx` rows) on
the first forward pass after `prefill` starts a sequence and reused by every decode step.
As in `whisper.decode()`, each prefill starts from an empty cache (openai-whisper's decoder
takes its position offset from the first cache entry, so the self-attention entries must be
the oldest ones).

The hooks are installed only for the duration of a call, so the same model object can be
handed to `whisper.decode()` in between (its own hooks would otherwise be mixed with ours).
"""

from typing import Optional, Sequence

import numpy as np
import torch


class TorchTextDecoderError(RuntimeError):
    pass


class TorchTextDecoder:
    """`TextDecoder` over a `whisper.model.Whisper` (float32, eval mode), one sequence at a time
    (max_beams 1: greedy decoding, the group of one)."""

    max_beams = 1

    def __init__(self, model):
        self.model = model
        self.n_text_ctx: int = int(model.dims.n_text_ctx)
        self._n_audio_ctx = int(model.dims.n_audio_ctx)
        self._n_audio_state = int(model.dims.n_audio_state)
        self._n_vocab = int(model.dims.n_vocab)
        self._dtype = next(model.parameters()).dtype
        self._memory: Optional[torch.Tensor] = None
        self._cache: dict = {}
        self._position: Optional[int] = None  # tokens in the self-attention cache; None = no sequence

    @property
    def position(self) -> Optional[int]:
        """Tokens run since the last prefill, or None before a prefill for the current memory."""
        return self._position

    def set_encoder_memory(self, memory) -> None:
        """Encoder output [n_audio_ctx, n_audio_state] (numpy or torch, optionally [1, ...])."""
        m = torch.as_tensor(np.asarray(memory, dtype=np.float32)) if not isinstance(memory, torch.Tensor) else memory
        if m.dim() == 3 and m.shape[0] == 1:
            m = m[0]
        want = (self._n_audio_ctx, self._n_audio_state)
        if tuple(m.shape) != want:
            raise TorchTextDecoderError(
                f"encoder memory has shape {tuple(m.shape)}; this model needs {want} "
                "(n_audio_ctx, n_audio_state): pass the encoder output of one 30 s window"
            )
        self._memory = m.detach().to(self._dtype).contiguous()[None]
        self._cache = {}  # the cross-attention K/V belonged to the previous memory
        self._position = None

    def prefill(self, tokens: Sequence[int], rows: Sequence[int] = (-1,)) -> np.ndarray:
        """Logits after the prompt positions `rows`, float32 [len(rows), n_vocab]."""
        if self._memory is None:
            raise TorchTextDecoderError("prefill before set_encoder_memory: set the encoder memory first")
        tokens = [int(t) for t in tokens]
        if not 1 <= len(tokens) <= self.n_text_ctx:
            raise TorchTextDecoderError(f"prefill with {len(tokens)} tokens; needs 1..{self.n_text_ctx}")
        rows = [int(r) for r in rows]
        for r in rows:
            if not -len(tokens) <= r < len(tokens):
                raise TorchTextDecoderError(f"prefill row {r} is outside the {len(tokens)}-token prompt")
        self._cache = {}
        logits = self._forward(tokens, rows)
        self._position = len(tokens)
        return logits

    def decode(self, token: int) -> np.ndarray:
        if self._position is None:
            raise TorchTextDecoderError(
                "decode without a prefill for the current encoder memory: call prefill(prompt) first"
            )
        if self._position >= self.n_text_ctx:
            raise TorchTextDecoderError(
                f"decode at position {self._position}: the text context holds {self.n_text_ctx} tokens"
            )
        logits = self._forward([int(token)], [-1])[0]
        self._position += 1
        return logits

    def decode_batch(self, tokens: Sequence[int]) -> np.ndarray:
        """The one sequence's next token: logits [1, n_vocab]."""
        if len(tokens) != 1:
            raise TorchTextDecoderError(f"decode_batch of {len(tokens)} sequences; this decoder runs one")
        return self.decode(tokens[0])[None]

    def reorder(self, source: Sequence[int]) -> None:
        if list(source) != [0]:
            raise TorchTextDecoderError(f"reorder {list(source)}: this decoder runs one sequence")

    def _forward(self, tokens: Sequence[int], rows: Sequence[int]) -> np.ndarray:
        for t in tokens:
            if not 0 <= t < self._n_vocab:
                raise TorchTextDecoderError(f"token id {t} is outside the vocabulary [0, {self._n_vocab})")
        x = torch.tensor([tokens], dtype=torch.long)
        cache, hooks = self.model.install_kv_cache_hooks(self._cache)
        try:
            with torch.no_grad():
                logits = self.model.decoder(x, self._memory, kv_cache=cache)
        finally:
            for h in hooks:
                h.remove()
        self._cache = cache
        return logits[0, list(rows)].float().numpy().copy()
