"""TorchTextDecoder: openai-whisper's PyTorch decoder behind the TextDecoder protocol.

Its cached, incremental logits equal a full uncached forward pass; the cross-attention K/V
cover all encoder rows, are computed once per prefill and reused by every decode step; a new
encoder memory invalidates the sequence; misuse fails with a message."""

import functools

import numpy as np
import pytest
import torch
import whisper

from ckw import runfiles
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime.tokenizer import WhisperTokenizer
from models.whisper.reference import openai_reference
from models.whisper.reference.torch_text_decoder import TorchTextDecoder, TorchTextDecoderError


@functools.lru_cache(maxsize=None)
def setup():
    model = openai_reference.model("tiny")
    directory = runfiles_checkpoint_dir("tiny")
    tok = WhisperTokenizer.from_checkpoint(directory)
    audio = openai_reference.read_audio_16k(runfiles.locate("test_audio", "jfk.wav"))
    mel = openai_reference.log_mel(model, audio)
    with torch.no_grad():
        memory = model.encoder(mel[None])[0].numpy()
    return model, tok, memory, mel


def full_logits(model, tokens, memory):
    with torch.no_grad():
        return model.decoder(torch.tensor([tokens]), torch.from_numpy(memory)[None])[0].numpy()


def test_incremental_logits_equal_a_full_forward_pass():
    model, tok, memory, _ = setup()
    prefix = [tok.sot, tok.no_timestamps]
    text = tok.encode(" And so my fellow Americans, ask not")
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    steps = [dec.prefill(prefix)[0]] + [dec.decode(t) for t in text]
    assert dec.position == len(prefix) + len(text)
    reference = full_logits(model, prefix + text, memory)[len(prefix) - 1 :]
    got = np.stack(steps)
    assert got.dtype == np.float32 and got.shape == (len(text) + 1, model.dims.n_vocab)
    scale = np.abs(reference).max()
    np.testing.assert_allclose(got, reference, rtol=0, atol=2e-5 * scale)
    np.testing.assert_array_equal(got.argmax(axis=1), reference.argmax(axis=1))


def test_cross_kv_cover_all_encoder_rows_and_are_reused():
    model, tok, memory, _ = setup()
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    dec.prefill([tok.sot, tok.no_timestamps])
    cross = {b.cross_attn.key: b for b in model.decoder.blocks}
    cross.update({b.cross_attn.value: b for b in model.decoder.blocks})
    after_prefill = {m: t for m, t in dec._cache.items() if m in cross}
    assert len(after_prefill) == 2 * len(model.decoder.blocks)
    for t in after_prefill.values():
        assert tuple(t.shape) == (1, model.dims.n_audio_ctx, model.dims.n_text_state)
    selfkv = [t for m, t in dec._cache.items() if m not in cross]
    assert all(t.shape[1] == 2 for t in selfkv)
    dec.decode(tok.encode(" And")[0])
    dec.decode(tok.encode(" so")[0])
    for m, t in after_prefill.items():
        assert dec._cache[m] is t  # the same tensor: never recomputed by a decode step
    assert all(t.shape[1] == 4 for m, t in dec._cache.items() if m not in cross)


def test_prefill_restarts_the_sequence():
    model, tok, memory, _ = setup()
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    first = dec.prefill([tok.sot, tok.no_timestamps])
    dec.decode(tok.encode(" And")[0])
    again = dec.prefill([tok.sot, tok.no_timestamps])
    np.testing.assert_array_equal(first, again)
    assert first.shape == (1, model.dims.n_vocab)
    assert dec.position == 2


def test_prefill_returns_the_requested_rows():
    model, tok, memory, _ = setup()
    prefix = [tok.sot, tok.no_timestamps] + tok.encode(" And so")
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    rows = dec.prefill(prefix, rows=(0, -1, 2))
    reference = full_logits(model, prefix, memory)
    assert rows.dtype == np.float32 and rows.shape == (3, model.dims.n_vocab)
    scale = np.abs(reference).max()
    np.testing.assert_allclose(rows, reference[[0, -1, 2]], rtol=0, atol=2e-5 * scale)
    with pytest.raises(TorchTextDecoderError, match="row 4"):
        dec.prefill(prefix, rows=(4,))


def test_new_memory_invalidates_the_sequence():
    model, tok, memory, _ = setup()
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    dec.prefill([tok.sot, tok.no_timestamps])
    dec.set_encoder_memory(memory * 0.5)
    with pytest.raises(TorchTextDecoderError, match="prefill"):
        dec.decode(tok.eot)
    changed = dec.prefill([tok.sot, tok.no_timestamps])[0]
    np.testing.assert_allclose(
        changed, full_logits(model, [tok.sot, tok.no_timestamps], memory * 0.5)[-1], rtol=0, atol=1e-4
    )


def test_misuse_fails_with_a_message():
    model, tok, memory, _ = setup()
    dec = TorchTextDecoder(model)
    with pytest.raises(TorchTextDecoderError, match="set_encoder_memory"):
        dec.prefill([tok.sot])
    with pytest.raises(TorchTextDecoderError, match="prefill"):
        dec.decode(tok.sot)
    with pytest.raises(TorchTextDecoderError, match="shape"):
        dec.set_encoder_memory(memory[:100])
    dec.set_encoder_memory(memory)
    with pytest.raises(TorchTextDecoderError, match="1..448"):
        dec.prefill([])
    with pytest.raises(TorchTextDecoderError, match="vocabulary"):
        dec.prefill([model.dims.n_vocab])
    dec.prefill([tok.sot] * model.dims.n_text_ctx)
    with pytest.raises(TorchTextDecoderError, match="text context"):
        dec.decode(tok.sot)


def test_hooks_do_not_outlive_a_call():
    model, tok, memory, mel = setup()
    options = whisper.DecodingOptions(fp16=False, temperature=0.0, without_timestamps=True, language="en", sample_len=8)
    before = whisper.decode(model, mel, options).tokens
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    dec.prefill([tok.sot, tok.no_timestamps])
    dec.decode(tok.encode(" And")[0])  # mid-sequence: our cache holds entries for every K/V module
    for block in model.decoder.blocks:
        for attn in (block.attn, block.cross_attn):
            assert not attn.key._forward_hooks and not attn.value._forward_hooks
    # So openai-whisper's own decode() on the same model object is unaffected.
    assert whisper.decode(model, mel, options).tokens == before
    assert len(before) == 8
