"""tools/bench/ggml_convert.py on the tiny checkpoint: the file follows whisper.cpp's loader rules, keeps
every weight bit (the packaged weights are float16), and whisper.cpp (pywhispercpp) transcribes
jfk.wav from it to the same text as ckw."""

import struct

import numpy as np
import pytest

from models.whisper.checkpoint.packed import PackedCheckpoint, runfiles_checkpoint_dir
from runtime import runfiles
from runtime.engine import Engine
from tools.bench import clips, ggml_convert, report
from tools.bench.whispercpp_peer import WhisperCppPeer


def read_ggml(path):
    """(hparams, filters, words, {name: (type, ne, array)}) of a ggml whisper file."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return values

    assert take("I")[0] == ggml_convert.MAGIC
    hparams = dict(zip(ggml_convert.HPARAMS + ("ftype",), take("11i")))
    n_mel, n_fft = take("2i")
    filters = np.frombuffer(data, "<f4", n_mel * n_fft, pos).reshape(n_mel, n_fft)
    pos += 4 * n_mel * n_fft
    words = []
    for _ in range(take("i")[0]):
        (length,) = take("I")
        words.append(data[pos:pos + length])
        pos += length
    tensors = {}
    while pos < len(data):
        n_dims, name_len, ttype = take("3i")
        ne = take(f"{n_dims}i")
        name = data[pos:pos + name_len].decode()
        pos += name_len
        dtype = {0: "<f4", 1: "<f2"}[ttype]
        count = int(np.prod(ne))
        tensors[name] = (ttype, ne, np.frombuffer(data, dtype, count, pos).reshape(tuple(reversed(ne))))
        pos += count * np.dtype(dtype).itemsize
    return hparams, filters, words, tensors


@pytest.fixture(scope="module")
def checkpoint_dir():
    return runfiles_checkpoint_dir("tiny")


@pytest.fixture(scope="module")
def ggml_f16(tmp_path_factory, checkpoint_dir):
    out = str(tmp_path_factory.mktemp("ggml") / "ggml-tiny-f16.bin")
    summary = ggml_convert.convert(checkpoint_dir, out, "f16")
    return out, summary


def expected_names(layers_audio, layers_text):
    """The tensors whisper.cpp's loader creates (and requires, each once)."""
    names = ["encoder.positional_embedding", "encoder.conv1.weight", "encoder.conv1.bias", "encoder.conv2.weight",
             "encoder.conv2.bias", "encoder.ln_post.weight", "encoder.ln_post.bias", "decoder.positional_embedding",
             "decoder.token_embedding.weight", "decoder.ln.weight", "decoder.ln.bias"]
    block = ["mlp_ln.weight", "mlp_ln.bias", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias",
             "attn_ln.weight", "attn_ln.bias", "attn.query.weight", "attn.query.bias", "attn.key.weight",
             "attn.value.weight", "attn.value.bias", "attn.out.weight", "attn.out.bias"]
    cross = [p.replace("attn", "cross_attn", 1) for p in block if "attn" in p]
    for i in range(layers_audio):
        names += [f"encoder.blocks.{i}.{p}" for p in block]
    for i in range(layers_text):
        names += [f"decoder.blocks.{i}.{p}" for p in block + cross]
    return names


def test_names_types_and_shapes_follow_the_loader(ggml_f16, checkpoint_dir):
    path, summary = ggml_f16
    ckpt = PackedCheckpoint(checkpoint_dir, verify=False)
    c = ckpt.config
    hparams, filters, words, tensors = read_ggml(path)
    assert hparams == {**{k: c[k] for k in ggml_convert.HPARAMS}, "ftype": 1}
    assert filters.shape == (80, 201)
    assert sorted(tensors) == sorted(expected_names(c["n_audio_layer"], c["n_text_layer"]))
    assert summary["tensors"] == len(tensors) == 7 + 15 * 4 + 4 + 24 * 4
    d = c["n_audio_state"]
    assert tensors["encoder.conv1.weight"][:2] == (1, (3, c["n_mels"], d))
    assert tensors["encoder.conv1.bias"][:2] == (0, (1, d))
    assert tensors["encoder.positional_embedding"][:2] == (0, (d, c["n_audio_ctx"]))
    assert tensors["decoder.token_embedding.weight"][:2] == (1, (d, c["n_vocab"]))
    assert tensors["decoder.blocks.3.cross_attn.query.weight"][:2] == (1, (d, d))
    assert tensors["decoder.blocks.3.cross_attn_ln.bias"][:2] == (0, (d,))
    for name, (ttype, ne, _) in tensors.items():
        f32_always = len(ne) == 1 or name.endswith("positional_embedding") or name.endswith("conv1.bias") \
            or name.endswith("conv2.bias")
        assert ttype == (0 if f32_always else 1), name


def test_every_weight_bit_survives(ggml_f16, checkpoint_dir):
    """The packaged weights are float16 up-cast to float32, so f16 is exact."""
    ckpt = PackedCheckpoint(checkpoint_dir, verify=False)
    _, _, _, tensors = read_ggml(ggml_f16[0])
    for hf in ckpt.names():
        name = ggml_convert.openai_name(hf)
        if name.endswith("key.bias"):
            assert not np.any(ckpt.tensor(hf))
            continue
        ours = tensors[name][2].astype(np.float32).reshape(ckpt.tensor(hf).shape)
        assert np.array_equal(ours, ckpt.tensor(hf)), name


def test_vocabulary_is_the_tokenizers_bytes(ggml_f16, checkpoint_dir):
    _, _, words, _ = read_ggml(ggml_f16[0])
    ckpt = PackedCheckpoint(checkpoint_dir, verify=False)
    assert len(words) == ckpt.config["eot"]
    assert words[0] == b"!" and words[262] == b" the" and words[198] == b"\n"
    assert len(set(words)) == len(words)


def test_openai_names():
    assert ggml_convert.openai_name("model.decoder.layers.3.encoder_attn.q_proj.bias") == \
        "decoder.blocks.3.cross_attn.query.bias"
    assert ggml_convert.openai_name("model.encoder.layers.0.fc2.weight") == "encoder.blocks.0.mlp.2.weight"
    assert ggml_convert.openai_name("model.encoder.layer_norm.bias") == "encoder.ln_post.bias"
    with pytest.raises(ValueError, match="no whisper.cpp name"):
        ggml_convert.openai_name("model.decoder.proj_out.weight")


def test_whisper_cpp_transcribes_jfk_as_ckw(ggml_f16):
    clip = clips.from_file(runfiles.locate("test_audio", "jfk.wav"))
    with Engine.from_runfiles("tiny") as engine:
        ours = engine.transcribe_window(clip.wav)["text"]
    peer = WhisperCppPeer(ggml_f16[0], threads=2)
    try:
        theirs = peer.run(clip)
    finally:
        peer.close()
    print(f"ckw: {ours}\nwhisper.cpp: {theirs['text']}")
    assert report.normalise_text(theirs["text"]) == report.normalise_text(ours)
    assert report.normalise_text(ours) == ("and so my fellow americans ask not what your country can do for you "
                                           "ask what you can do for your country")
    assert theirs["windows"] == 1 and theirs["tokens"] > 20
    assert all(v > 0 for k, v in theirs["stages"].items() if k != "prefill")
