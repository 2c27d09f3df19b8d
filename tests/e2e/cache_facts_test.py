"""The four cache facts, observed through the generated decoder's ABI, and several libraries
(tiny and base, encoder and decoder) interleaved in one process giving the tokens they give alone.
Facts 1-3 (K/V over 1500 memory rows, Q over the active tokens, pos + 1 cached rows) are also
checked in the call IR by //models/whisper:circuits_test."""

import numpy as np
import pytest

from ckw import runfiles
from ckw.runtime import abi, audio_input
from ckw.runtime.decoding import DecodingOptions, greedy_decode, initial_tokens
from ckw.runtime.engine import N_FRAMES, Engine

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
    rows = np.array([0, 1], np.int32)
    assert lib.call("prefill", fresh.h, tokens, rows, 2, 2, None, logits) == abi.E_MISSING_INPUT


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
    alone = {
        v: greedy_decode(e.decoder, e.tokenizer, memories[v], DecodingOptions()).tokens for v, e in engines.items()
    }
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


@pytest.mark.parametrize("n_beams", [1, 2, 5, 8])
def test_one_cross_kv_projection_per_memory_for_any_beam_count(engines, memories, n_beams):
    dec = engines["tiny"].decoder
    dec.set_encoder_memory(memories["tiny"])
    before = dec.cross_kv_projections
    prompt = initial_tokens(engines["tiny"].tokenizer, DecodingOptions())
    dec.prefill(prompt)
    dec.reorder([0] * n_beams)
    for step in range(4):
        logits = dec.decode_batch([220 + b + step for b in range(n_beams)])
        assert logits.shape == (n_beams, dec.n_vocab) and np.isfinite(logits).all()
        dec.reorder([(b + 1) % n_beams for b in range(n_beams)])
    assert dec.cross_kv_projections == before + 1
    assert dec.handle.query("position") == len(prompt) + 4


def test_beams_keep_their_own_self_kv_through_a_reorder(engines, memories):
    """Three beams, then a reorder [2, 2, 0]: beam 0 continues as old beam 2 did, so its next
    logits are those of a single sequence that took beam 2's tokens, bit for bit (a row's result
    never depends on the other rows: every output keeps its own FMA chain)."""
    e = engines["tiny"]
    dec = e.decoder
    dec.set_encoder_memory(memories["tiny"])
    prompt = initial_tokens(e.tokenizer, DecodingOptions())
    dec.prefill(prompt)
    dec.reorder([0, 0, 0])
    dec.decode_batch([400, 500, 600])
    dec.reorder([2, 2, 0])
    beams = dec.decode_batch([700, 800, 900]).copy()
    for b, (first, second) in enumerate([(600, 700), (600, 800), (400, 900)]):
        dec.prefill(prompt)
        dec.decode(first)
        alone = dec.decode(second)
        assert beams[b].tobytes() == alone.tobytes(), f"beam {b}: max |diff| {np.abs(beams[b] - alone).max()}"


def test_reorder_with_an_out_of_range_index_is_refused_and_changes_nothing(engines, memories):
    dec = engines["tiny"].decoder
    prompt = initial_tokens(engines["tiny"].tokenizer, DecodingOptions())

    def step_after(refused):
        dec.set_encoder_memory(memories["tiny"])
        dec.prefill(prompt)
        dec.reorder([0, 0, 0])
        dec.decode_batch([400, 500, 600])
        position = dec.handle.query("position")
        for bad in refused:
            assert _status(dec.handle, "reorder", np.array(bad, np.int32), len(bad)) in (abi.E_KERNEL, abi.E_ARGUMENT)
        assert dec.handle.query("position") == position
        return dec.decode_batch([1, 2, 3]).copy()

    # 3 is a slot of the cache but not one of the 3 live sequences; 9 sequences pass max_beams.
    assert _status(dec.handle, "reorder", np.array([0, 3, 1], np.int32), 3) == abi.E_KERNEL
    assert "index" in dec.lib.message(abi.E_KERNEL, dec.handle.h)
    assert _status(dec.handle, "reorder", np.array([-1, 0, 0], np.int32), 3) == abi.E_KERNEL
    assert _status(dec.handle, "reorder", np.zeros(9, np.int32), 9) == abi.E_ARGUMENT
    # Nothing moved: the next step gives the bits it gives without the refused calls.
    np.testing.assert_array_equal(step_after([[0, 3, 1], [-1, 0, 0], [0] * 9]), step_after([]))
