"""The X-ray oracle is self-consistent and speaks the circuits' language.

1. Its edge names are exactly the circuits' op output edges (plus the documented
   reference-only `before_residual` edges), so the parity test can compare name by name.
2. The edges are the model's own tensors: the encoder's last edge is `model.encoder(mel)` and
   the logits are `model.decoder(tokens, memory)`, bit for bit; block i's output is block i+1's
   input (caught by an independent hook).
3. Interpreting each circuit op (its kind, its declared input edges and weight tensors from the
   packed checkpoint) on the oracle's own input edges reproduces the oracle's output edge, op by
   op, within float32 rounding: the names sit on the right tensors.
4. `first_row` gives a decode step's rows (the last row equals a kv-cached decode step).

One Bazel target per variant selects its cases with `-k`.
"""

import functools
import json
from typing import Dict

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ckw import runfiles
from ckw.checkpoints.packed import PackedCheckpoint, runfiles_checkpoint_dir
from ckw.runtime.tokenizer import WhisperTokenizer
from models.whisper.reference import openai_reference
from models.whisper.reference import xray_reference as xr
from models.whisper.reference.torch_text_decoder import TorchTextDecoder

VARIANTS = ["tiny", "base"]
# The phase whose ops a forward pass of openai-whisper covers, per part.
FORWARD = {"encoder": "run", "decoder": "prefill"}


@functools.lru_cache(maxsize=None)
def circuit(part: str) -> dict:
    with open(runfiles.locate("ckw", f"circuits/audio_transformer_{part}.json"), encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=1)
def setup(variant: str):
    model = openai_reference.model(variant)
    audio = openai_reference.read_audio_16k(runfiles.locate("test_audio", "jfk.wav"))
    mel = openai_reference.log_mel(model, audio).numpy()
    tok = WhisperTokenizer.from_checkpoint(runfiles_checkpoint_dir(variant))
    tokens = tok.sot_sequence("en", "transcribe") + [tok.no_timestamps] + tok.encode(" And so my fellow Americans")
    return model, mel, tokens


@functools.lru_cache(maxsize=1)
def encoder_edges(variant: str) -> Dict[str, np.ndarray]:
    model, mel, _ = setup(variant)
    return xr.encoder_edges(model, mel)


@functools.lru_cache(maxsize=1)
def decoder_edges(variant: str) -> Dict[str, np.ndarray]:
    model, _, tokens = setup(variant)
    return xr.decoder_edges(model, tokens, encoder_edges(variant)["ln_post.y"])


def n_layers(model, part: str) -> int:
    return model.dims.n_audio_layer if part == "encoder" else model.dims.n_text_layer


def edges_of(variant: str, part: str):
    return encoder_edges(variant) if part == "encoder" else decoder_edges(variant)


# --- 1. names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_edge_names_are_the_circuit_edges(variant, part):
    model, _, _ = setup(variant)
    names, _ = xr.circuit_edges(circuit(part), n_layers(model, part), FORWARD[part])
    got = edges_of(variant, part)
    circuit_only = sorted(set(names) - set(got))
    assert not circuit_only, f"circuit edges the oracle does not produce (update xray_reference.py): {circuit_only}"
    extra = sorted(n for n in got if n not in set(names))
    assert all(xr.is_reference_only(n) for n in extra), f"oracle edges the circuit does not have: {extra}"
    per_layer = {n.split(".", 2)[2] for n in extra}
    expected = {"out_proj.before_residual", "fc2.before_residual"}
    if part == "decoder":
        expected.add("cross_out_proj.before_residual")
    assert per_layer == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_shapes_and_dtypes(variant):
    model, _, tokens = setup(variant)
    d = model.dims
    enc, dec = encoder_edges(variant), decoder_edges(variant)
    for edges in (enc, dec):
        for name, a in edges.items():
            # token rows [rows, width]; the cross-attention logits [heads, T, n_audio_ctx]
            assert a.dtype == np.float32 and a.ndim == (3 if name.endswith(".cross_qk.s") else 2), name
            assert a.flags.c_contiguous, name
            assert np.isfinite(a).all(), name
    assert enc["conv1.y"].shape == (2 * d.n_audio_ctx, d.n_audio_state)
    assert enc["ln_post.y"].shape == (d.n_audio_ctx, d.n_audio_state)
    assert enc["blocks.0.fc1.y"].shape == (d.n_audio_ctx, 4 * d.n_audio_state)
    T = len(tokens)
    assert dec["embed.y"].shape == (T, d.n_text_state)
    assert dec["blocks.0.cross_q_proj.y"].shape == (T, d.n_text_state)
    for i in range(d.n_text_layer):
        # Fact 1: cross K/V are projected over all encoder rows, not the decoder token count.
        assert dec[f"blocks.{i}.cross_k_proj.y"].shape == (d.n_audio_ctx, d.n_text_state)
        assert dec[f"blocks.{i}.cross_v_proj.y"].shape == (d.n_audio_ctx, d.n_text_state)
        assert dec[f"blocks.{i}.cross_attn.o"].shape == (T, d.n_text_state)
        assert dec[f"blocks.{i}.cross_qk.s"].shape == (d.n_text_head, T, d.n_audio_ctx)
    assert dec["prompt_logits.y"].shape == (T, d.n_vocab)
    assert dec["logit_rows.dst"].shape == (T, d.n_text_state)


# --- 2. the model's own tensors -----------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_ends_are_the_model_outputs(variant):
    model, mel, tokens = setup(variant)
    with torch.no_grad():
        memory = model.encoder(torch.from_numpy(mel)[None])
        logits = model.decoder(torch.tensor([tokens]), memory)
    np.testing.assert_array_equal(encoder_edges(variant)["ln_post.y"], memory[0].numpy())
    np.testing.assert_array_equal(decoder_edges(variant)["prompt_logits.y"], logits[0].numpy())


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_block_output_is_the_next_block_input(variant, part):
    model, mel, tokens = setup(variant)
    stack = model.encoder if part == "encoder" else model.decoder
    inputs = {}

    def keep(key):
        return lambda _module, args: inputs.__setitem__(key, args[0][0].numpy().copy())

    handles = [b.register_forward_pre_hook(keep(i)) for i, b in enumerate(stack.blocks)]
    handles.append((stack.ln_post if part == "encoder" else stack.ln).register_forward_pre_hook(keep("ln")))
    try:
        with torch.no_grad():
            memory = model.encoder(torch.from_numpy(mel)[None])
            if part == "decoder":
                model.decoder(torch.tensor([tokens]), memory)
    finally:
        for h in handles:
            h.remove()
    edges = edges_of(variant, part)
    first = "positions.y" if part == "encoder" else "embed.y"
    np.testing.assert_array_equal(edges[first], inputs[0])
    n = len(stack.blocks)
    for i in range(n - 1):
        np.testing.assert_array_equal(edges[f"blocks.{i}.fc2.y"], inputs[i + 1])
    np.testing.assert_array_equal(edges[f"blocks.{n - 1}.fc2.y"], inputs["ln"])


# --- 3. the circuit, interpreted on the oracle's edges -------------------------------------------


def _t(a) -> torch.Tensor:
    return torch.from_numpy(np.array(a, dtype=np.float64))


def _attention(q, k, v, n_heads: int, causal: bool, q_pos: int = 0) -> torch.Tensor:
    tq, width = q.shape
    dh = width // n_heads
    qh = q.reshape(tq, n_heads, dh).transpose(0, 1)
    kh = k.reshape(k.shape[0], n_heads, dh).transpose(0, 1)
    vh = v.reshape(v.shape[0], n_heads, dh).transpose(0, 1)
    scores = qh @ kh.transpose(1, 2) / np.sqrt(dh)
    if causal:
        rows = torch.arange(tq)[:, None] + q_pos
        scores = scores.masked_fill(torch.arange(k.shape[0])[None, :] > rows, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ vh).transpose(0, 1).reshape(tq, width)


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / np.sqrt(2.0)))


def interpret(doc: dict, edges, externals, weights, layers: int, n_heads: int, phase: str):
    """Yields (edge name, expected float64 tensor) for every op output edge of `doc` in `phase`."""
    names, _ = xr.circuit_edges(doc, layers, phase)
    out_port = {}
    for n in names:
        op, _, port = n.rpartition(".")
        out_port[op] = port

    def resolve(ref: str, local: set, prefix: str, carry: dict, states: dict):
        kind, _, rest = ref.partition(":")
        if kind == "external":
            return externals[rest]
        if kind == "carry":
            return carry[rest]
        if kind == "state":
            return _t(edges[states[rest]])
        name, _, port = rest.partition(".")
        if name in results:
            return results[name][port]
        return _t(edges[f"{prefix if name in local else ''}{name}.{port}"])

    def run(op: dict, local: set, prefix: str, index, carry: dict, states: dict):
        ins = {p: resolve(r, local, prefix, carry, states) for p, r in op["inputs"].items()}
        w = {p: _t(weights(spec["tensor"].replace("{i}", str(index)))) for p, spec in op.get("weights", {}).items()}
        kind, attrs = op["kind"], op.get("attrs", {})
        if kind == "layer_norm":
            x = ins["x"]
            y = F.layer_norm(x, (x.shape[-1],), w["gamma"], w["beta"], attrs["eps"])
        elif kind in ("linear", "linear_gelu", "linear_residual"):
            y = ins["x"] @ w["w"].T + w["b"]
            y = _gelu(y) if kind == "linear_gelu" else y + ins["r"] if kind == "linear_residual" else y
        elif kind in ("attention", "attention_batched"):  # one sequence: the batch is sequence 0
            y = _attention(ins["q"], ins["k"], ins["v"], n_heads, attrs["causal"])
        elif kind == "attention_scores":
            q, k = ins["q"], ins["k"]
            dh = q.shape[1] // n_heads
            y = q.reshape(q.shape[0], n_heads, dh).transpose(0, 1) @ k.reshape(k.shape[0], n_heads, dh).permute(1, 2, 0)
            y = y / np.sqrt(dh)
        elif kind == "token_major_to_batch_head_major":  # a cache append: the token rows themselves
            y = ins["src"]
        elif kind == "conv1d_gelu":
            x = ins["x"].T[None]  # token-major edge -> [1, channels, time]
            y = _gelu(F.conv1d(x, w["w"], w["b"], stride=attrs["stride"], padding=attrs["padding"]))[0].T
        elif kind == "add":
            y = ins["a"] + w["b"]
        elif kind == "embedding_positions":
            tokens = ins["tokens"]
            y = w["table"][tokens] + w["positions"][: len(tokens)]
        elif kind == "logits":
            y = ins["x"] @ w["w"].T
        elif kind == "gather_rows":
            y = ins["src"][ins["index"]]
        else:
            raise AssertionError(f"op kind {kind!r} ({prefix}{op['name']}) has no reference semantics here; add it")
        name = f"{prefix}{op['name']}"
        for state in op.get("stores", {}).values():
            states[state.partition(":")[2]] = f"{name}.{out_port[name]}"
        return f"{name}.{out_port[name]}", y

    def runs(op: dict, repeat: dict = None) -> bool:
        return phase in op.get("phases", (repeat or {}).get("phases", [phase]))

    results: Dict[str, Dict[str, torch.Tensor]] = {}
    for item in doc["ops"]:
        if "repeat" not in item:
            if runs(item):
                yield run(item, set(), "", None, {}, {})
            continue
        if not runs(item):
            continue
        local = {op["name"] for op in item["ops"]}
        carry = {c: resolve(spec["init"], set(), "", {}, {}) for c, spec in item["carry"].items()}
        for i in range(layers):
            prefix = f"{item['repeat']}.{i}."
            states: Dict[str, str] = {}
            for op in item["ops"]:
                if runs(op, item):
                    yield run(op, local, prefix, i, carry, states)
            carry = {c: resolve(spec["next"], local, prefix, carry, states) for c, spec in item["carry"].items()}
        results[item["repeat"]] = carry


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_each_op_of_the_circuit_reproduces_its_edge(variant, part):
    model, mel, tokens = setup(variant)
    ckpt = PackedCheckpoint(runfiles_checkpoint_dir(variant), verify=False)
    edges = edges_of(variant, part)
    externals = {
        "mel": _t(mel).T,  # channel-major [n_mels, frames] -> token-major
        "encoder_memory": _t(encoder_edges(variant)["ln_post.y"]),
        "tokens": torch.tensor(tokens),
        "logit_rows": torch.arange(len(tokens)),  # as the X-ray asks: every prompt row
    }
    heads = model.dims.n_audio_head if part == "encoder" else model.dims.n_text_head
    checked = []
    for name, expected in interpret(
        circuit(part), edges, externals, ckpt.tensor, n_layers(model, part), heads, FORWARD[part]
    ):
        got = _t(edges[name])
        assert tuple(got.shape) == tuple(expected.shape), name
        scale = max(float(expected.abs().max()), 1.0)
        err = float((got - expected).abs().max())
        # float32 rounding of one op, recomputed in float64 from the same float32 inputs
        assert err <= 2e-5 * scale, f"{name}: max |oracle - circuit op| = {err:.3g} (scale {scale:.3g})"
        checked.append(name)
    names, _ = xr.circuit_edges(circuit(part), n_layers(model, part), FORWARD[part])
    assert sorted(checked) == sorted(names)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_residual_splits_are_exact(variant, part):
    model, _, _ = setup(variant)
    e = edges_of(variant, part)
    for i in range(n_layers(model, part)):
        b = f"blocks.{i}."
        carry_in = e[f"blocks.{i - 1}.fc2.y"] if i else e["positions.y" if part == "encoder" else "embed.y"]
        np.testing.assert_array_equal(e[b + "out_proj.y"], carry_in + e[b + "out_proj.before_residual"])
        mid = e[b + "out_proj.y"]
        if part == "decoder":
            np.testing.assert_array_equal(e[b + "cross_out_proj.y"], mid + e[b + "cross_out_proj.before_residual"])
            mid = e[b + "cross_out_proj.y"]
        np.testing.assert_array_equal(e[b + "fc2.y"], mid + e[b + "fc2.before_residual"])


# --- 4. decode-step rows ------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_first_row_is_a_decode_step(variant):
    model, _, tokens = setup(variant)
    memory = encoder_edges(variant)["ln_post.y"]
    full = xr.decoder_edges(model, tokens, memory, phase="decode")
    p = len(tokens) - 1
    step = xr.decoder_edges(model, tokens, memory, first_row=p, phase="decode")
    assert set(step) == set(full)
    for name, a in step.items():
        if name.endswith(".cross_k_proj.y") or name.endswith(".cross_v_proj.y"):
            np.testing.assert_array_equal(a, full[name])
        elif name.endswith(".cross_qk.s"):  # [heads, rows, n_audio_ctx]: the query rows are axis 1
            assert a.shape[1] == 1, name
            np.testing.assert_array_equal(a, full[name][:, p:])
        else:
            assert a.shape[0] == 1, name
            np.testing.assert_array_equal(a, full[name][p:])
    dec = TorchTextDecoder(model)
    dec.set_encoder_memory(memory)
    dec.prefill(tokens[:-1])
    cached = dec.decode(tokens[-1])
    scale = float(np.abs(cached).max())
    np.testing.assert_allclose(step["logits.y"][0], cached, rtol=0, atol=2e-5 * scale)


@pytest.mark.parametrize("variant", VARIANTS)
def test_only_selects_edges(variant):
    model, mel, tokens = setup(variant)
    got = xr.encoder_edges(model, mel, only=["conv1.y", "ln_post.y"])
    assert sorted(got) == ["conv1.y", "ln_post.y"]
    np.testing.assert_array_equal(got["ln_post.y"], encoder_edges(variant)["ln_post.y"])
    memory = got["ln_post.y"]
    got = xr.decoder_edges(model, tokens, memory, only=["logits.y"], phase="decode")
    assert list(got) == ["logits.y"]
    got = xr.decoder_edges(model, tokens, memory, only=["prompt_logits.y"])
    assert list(got) == ["prompt_logits.y"]


@pytest.mark.parametrize("variant", ["tiny"])
def test_bad_inputs_fail_with_a_message(variant):
    model, mel, tokens = setup(variant)
    with pytest.raises(ValueError, match="mel has shape"):
        xr.encoder_edges(model, mel[:, :100])
    memory = encoder_edges(variant)["ln_post.y"]
    with pytest.raises(ValueError, match="encoder memory has shape"):
        xr.decoder_edges(model, tokens, memory[:10])
    with pytest.raises(ValueError, match="first_row"):
        xr.decoder_edges(model, tokens, memory, first_row=len(tokens))
    with pytest.raises(ValueError, match="tokens"):
        xr.decoder_edges(model, [], memory)
