"""The four cache facts, observed through the generated decoder's ABI, and several libraries
(tiny and base, encoder and decoder) interleaved in one process giving the tokens they give alone.
Facts 1-3 (K/V over 1500 memory rows, Q over the active tokens, pos + 1 cached rows) are also
checked in the call IR by //models/whisper:circuits_test."""

import numpy as np
import pytest

from runtime import abi, audio_input, runfiles
from runtime.decoding import DecodingOptions, greedy_decode, initial_tokens
from runtime.engine import N_FRAMES, Engine

JFK = "jfk.wav"


@pytest.fixture(scope="module")
def engines():
    return {v: Engine.from_runfiles(v) for v in ("tiny", "base")}


@pytest.fixture(scope="module")
def memories(engines):
    wav = audio_input.load_audio_bytes(runfiles.locate("test_audio", JFK))
    out = {}
    for v, e in engines.items():
        mel = e.frontend.log_mel(wav)
        out[v] = e.encoder.run(mel[:, :N_FRAMES]).copy()
    return out


def _status(handle, name, *args):
    return handle.lib.call(name, handle.h, *args)


def test_decode_before_prefill_fails_with_its_code(engines, memories):
    dec = engines["tiny"].decoder
    logits = np.empty((1, dec.n_vocab), np.float32)
    dec.set_encoder_memory(memories["tiny"])
    assert _status(dec.handle, "decode", np.array([50257], np.int32), 1, logits) == abi.E_CROSS_KV_INVALID


def test_new_encoder_memory_invalidates_and_projection_runs_once_per_memory(engines, memories):
    e = engines["tiny"]
    dec = e.decoder
    dec.set_encoder_memory(memories["tiny"])
    before = dec.cross_kv_projections
    result = greedy_decode(dec, e.tokenizer, memories["tiny"], DecodingOptions())
    assert len(result.tokens) > 10
    # greedy_decode set the memory once: one projection for the prefill and every decode step.
    assert dec.cross_kv_projections == before + 1
    # Starting again on the same memory reuses the cache.
    dec.prefill(initial_tokens(e.tokenizer, DecodingOptions()))
    assert dec.cross_kv_projections == before + 1
    # New memory: decode fails until the next prefill projects it again.
    dec.set_encoder_memory(memories["tiny"] * 0.5)
    logits = np.empty((1, dec.n_vocab), np.float32)
    assert _status(dec.handle, "decode", np.array([400], np.int32), 1, logits) == abi.E_CROSS_KV_INVALID
    dec.prefill(initial_tokens(e.tokenizer, DecodingOptions()))
    assert dec.cross_kv_projections == before + 2


def test_prefill_without_memory_is_missing_input(engines):
    lib = engines["tiny"].decoder.lib
    fresh = abi.Handle(lib, runfiles.locate("whisper_tiny", "weights.bin"))
    logits = np.empty((2, lib.dim("n_vocab")), np.float32)
    tokens = np.array([50257, 50362], np.int32)
    assert lib.call("prefill", fresh.h, tokens, 2, None, logits) == abi.E_MISSING_INPUT


def test_context_full_is_reported_at_n_text_ctx(engines, memories):
    dec = engines["tiny"].decoder
    dec.set_encoder_memory(memories["tiny"])
    dec.prefill([50257, 50362])
    logits = np.empty((1, dec.n_vocab), np.float32)
    for _ in range(dec.n_text_ctx - 2):
        assert _status(dec.handle, "decode", np.array([13], np.int32), 1, logits) == abi.OK
    assert dec.handle.query("position") == dec.n_text_ctx
    assert _status(dec.handle, "decode", np.array([13], np.int32), 1, logits) == abi.E_CONTEXT_FULL


def test_interleaved_variants_give_the_tokens_they_give_alone(engines, memories):
    alone = {v: greedy_decode(e.decoder, e.tokenizer, memories[v], DecodingOptions()).tokens
             for v, e in engines.items()}
    # Interleave step by step: both decoders live, alternating prefill and decode calls.
    state = {}
    for v, e in engines.items():
        e.decoder.set_encoder_memory(memories[v])
    for v, e in engines.items():
        state[v] = {"logits": e.decoder.prefill(initial_tokens(e.tokenizer, DecodingOptions()))[0], "tokens": []}
    suppress = {v: e.tokenizer.suppress_tokens() for v, e in engines.items()}
    blank = {v: e.tokenizer.blank_tokens() for v, e in engines.items()}
    active = set(engines)
    while active:
        for v in sorted(active):
            e, s = engines[v], state[v]
            scores = s["logits"].copy()
            if not s["tokens"]:
                scores[blank[v]] = -np.inf
            scores[suppress[v]] = -np.inf
            token = int(np.argmax(scores))
            if token == e.tokenizer.eot or len(s["tokens"]) >= 224:
                active.discard(v)
                continue
            s["tokens"].append(token)
            s["logits"] = e.decoder.decode(token)
    for v in engines:
        assert state[v]["tokens"] == alone[v], v
    assert alone["tiny"] and alone["base"]
