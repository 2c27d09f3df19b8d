"""tools/bench/ggml_convert.py on the tiny checkpoint: the file follows whisper.cpp's loader rules, keeps
every weight bit (the packaged weights are float16), and whisper.cpp (pywhispercpp) transcribes
jfk.wav from it to the same text as ckw. The q8_0 and q5_1 files: the quantizers against a dequantizer
of this test's own (each value within its block's bound; the bit layout of hand-made blocks), bit for
bit against ggml's reference quantizers (pywhispercpp's libggml-base), the tensors whisper.cpp's
quantize would quantize, and whisper.cpp loading them and transcribing jfk.wav as from the f16 file."""

import ctypes
import glob
import os
import re
import struct

import numpy as np
import pytest

from ckw import runfiles
from ckw.checkpoints.packed import PackedCheckpoint, runfiles_checkpoint_dir
from ckw.runtime.engine import Engine
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
        words.append(data[pos : pos + length])
        pos += length
    tensors = {}
    while pos < len(data):
        n_dims, name_len, ttype = take("3i")
        ne = take(f"{n_dims}i")
        name = data[pos : pos + name_len].decode()
        pos += name_len
        count = int(np.prod(ne))
        if ttype in BLOCK:  # quantized: its raw blocks, dequantized by this test's own reading of them
            size = count // 32 * BLOCK[ttype]
            raw = data[pos : pos + size]
            tensors[name] = (ttype, ne, dequantize(ttype, raw).reshape(tuple(reversed(ne))), raw)
            pos += size
            continue
        dtype = {0: "<f4", 1: "<f2"}[ttype]
        tensors[name] = (ttype, ne, np.frombuffer(data, dtype, count, pos).reshape(tuple(reversed(ne))))
        pos += count * np.dtype(dtype).itemsize
    assert pos == len(data)
    return hparams, filters, words, tensors


BLOCK = {8: 34, 7: 24}  # ggml_type q8_0, q5_1 -> bytes per block of 32


def unpack(ttype, raw):
    """(q [blocks, 32] as integers, scale d, offset m) of ggml blocks, read byte by byte: q8_0 is f16 d
    and 32 int8; q5_1 is f16 d, f16 m, 4 bytes whose bit k (little-endian) is bit 4 of value k, then 16
    bytes whose low nibble is value j and high nibble value j + 16."""
    b = np.frombuffer(raw, np.uint8).reshape(-1, BLOCK[ttype])
    d = b[:, 0:2].copy().view("<f2").astype(np.float64)
    if ttype == 8:
        return b[:, 2:].view(np.int8).astype(np.int64), d, np.zeros_like(d)
    m = b[:, 2:4].copy().view("<f2").astype(np.float64)
    fifth = np.unpackbits(b[:, 4:8], axis=1, bitorder="little").astype(np.int64)
    low = np.concatenate([b[:, 8:24] & 0x0F, b[:, 8:24] >> 4], axis=1).astype(np.int64)
    return low + 16 * fifth, d, m


def dequantize(ttype, raw):
    q, d, m = unpack(ttype, raw)
    return (q * d + m).ravel()


def error_bound(ttype, x, raw):
    """Per value, the most a correct quantizer can be off: half a step (plus the float32 arithmetic's
    slack), plus the largest code times the f16 rounding of the step, plus (q5_1) the f16 rounding of the
    minimum; the exact step and minimum computed here from x's blocks."""
    blocks = np.asarray(x, np.float64).reshape(-1, 32)
    _, d16, m16 = unpack(ttype, raw)
    if ttype == 8:
        step, top, low = np.abs(blocks).max(axis=1, keepdims=True) / 127, 127, np.zeros_like(d16)
    else:
        low = blocks.min(axis=1, keepdims=True)
        step, top = (blocks.max(axis=1, keepdims=True) - low) / 31, 31
    return step * (0.5 + 1e-5) + top * np.abs(step - d16) + np.abs(low - m16) + 1e-12


@pytest.fixture(scope="module")
def checkpoint_dir():
    return runfiles_checkpoint_dir("tiny")


@pytest.fixture(scope="module")
def ggml_f16(tmp_path_factory, checkpoint_dir):
    out = str(tmp_path_factory.mktemp("ggml") / "ggml-tiny-f16.bin")
    summary = ggml_convert.convert(checkpoint_dir, out, "f16")
    return out, summary


@pytest.fixture(scope="module", params=["q8_0", "q5_1"])
def ggml_quantized(request, tmp_path_factory, checkpoint_dir):
    out = str(tmp_path_factory.mktemp("ggml") / f"ggml-tiny-{request.param}.bin")
    return request.param, out, ggml_convert.convert(checkpoint_dir, out, request.param)


def expected_names(layers_audio, layers_text):
    """The tensors whisper.cpp's loader creates (and requires, each once)."""
    names = [
        "encoder.positional_embedding",
        "encoder.conv1.weight",
        "encoder.conv1.bias",
        "encoder.conv2.weight",
        "encoder.conv2.bias",
        "encoder.ln_post.weight",
        "encoder.ln_post.bias",
        "decoder.positional_embedding",
        "decoder.token_embedding.weight",
        "decoder.ln.weight",
        "decoder.ln.bias",
    ]
    block = [
        "mlp_ln.weight",
        "mlp_ln.bias",
        "mlp.0.weight",
        "mlp.0.bias",
        "mlp.2.weight",
        "mlp.2.bias",
        "attn_ln.weight",
        "attn_ln.bias",
        "attn.query.weight",
        "attn.query.bias",
        "attn.key.weight",
        "attn.value.weight",
        "attn.value.bias",
        "attn.out.weight",
        "attn.out.bias",
    ]
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
        f32_always = (
            len(ne) == 1
            or name.endswith("positional_embedding")
            or name.endswith("conv1.bias")
            or name.endswith("conv2.bias")
        )
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
    assert (
        ggml_convert.openai_name("model.decoder.layers.3.encoder_attn.q_proj.bias")
        == "decoder.blocks.3.cross_attn.query.bias"
    )
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
    assert report.normalise_text(ours) == (
        "and so my fellow americans ask not what your country can do for you ask what you can do for your country"
    )
    assert theirs["windows"] == 1 and theirs["tokens"] > 20
    assert all(v > 0 for k, v in theirs["stages"].items() if k != "prefill")


# ---- q8_0 and q5_1 ----

TYPE = {"q8_0": 8, "q5_1": 7}
HEADER_FTYPE = {"q8_0": 2007, "q5_1": 2009}  # GGML_QNT_VERSION 2 * 1000 + GGML_FTYPE_MOSTLY_Q8_0 7 / _Q5_1 9


def test_q8_0_hand_made_block():
    x = np.array([127, -127, 0.5, -0.5, 1.5, -1.5, 2.4999, -2.5, 0, 1, -1, 100.25] + list(range(-4, 16)), np.float32)
    q = [127, -127, 1, -1, 2, -2, 2, -3, 0, 1, -1, 100] + list(range(-4, 16))  # halves away from zero
    assert ggml_convert.quantize_q8_0(x) == b"\x00\x3c" + np.array(q, np.int8).tobytes()  # d = 1.0 (f16 0x3c00)
    assert ggml_convert.quantize_q8_0(-2 * x)[:2] == b"\x00\x40"  # d = 2.0: the scale of |x|
    assert ggml_convert.quantize_q8_0(np.zeros(32)) == bytes(34)


def test_q5_1_hand_made_block():
    q = [
        0,
        31,
        20,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        15,
        16,
        17,
        18,
        19,
        20,
        21,
        22,
        23,
        24,
        25,
        26,
        27,
        28,
        29,
        30,
        3,
    ]
    x = np.array(q, np.float32) - 1  # min -1, max 30: d = 1.0, m = -1.0
    x[3:] += np.float32(0.25) * np.array([1, -1] * 14 + [1], np.float32)  # within half a step: same codes
    expected = bytes(
        [
            0x00,
            0x3C,
            0x00,
            0xBC,  # d 1.0, m -1.0 (f16)
            0x06,
            0x00,
            0xFF,
            0x7F,  # fifth bits: values 1, 2 and 16..30 are >= 16
            0x00,
            0x1F,
            0x24,
            0x33,
            0x44,
            0x55,
            0x66,
            0x77,  # value j | value j + 16 << 4
            0x88,
            0x99,
            0xAA,
            0xBB,
            0xCC,
            0xDD,
            0xEE,
            0x3F,
        ]
    )
    assert ggml_convert.quantize_q5_1(x) == expected
    assert list(unpack(7, expected)[0][0]) == q
    assert ggml_convert.quantize_q5_1(np.full(32, 0.5)) == b"\x00\x00\x00\x38" + bytes(20)  # d 0, m 0.5


@pytest.mark.parametrize("ftype", ["q8_0", "q5_1"])
def test_round_trip_within_each_blocks_bound(ftype):
    rng = np.random.default_rng(27)
    x = np.concatenate(
        [
            rng.standard_normal((64, 256)) * 0.05,
            rng.standard_normal((64, 256)) * 3e-6,
            rng.uniform(-1, 1, (64, 256)) + 0.5,
            np.zeros((1, 256)),
        ]
    ).astype(np.float32)
    raw = ggml_convert.QUANTIZERS[ftype](x)
    assert len(raw) == x.size // 32 * ggml_convert.BLOCK_BYTES[ftype]
    back = dequantize(TYPE[ftype], raw).reshape(-1, 32)
    err = np.abs(back - x.reshape(-1, 32))
    bound = error_bound(TYPE[ftype], x, raw)
    assert np.all(err <= bound), float((err / bound).max())
    q, _, _ = unpack(TYPE[ftype], raw)
    live = np.ptp(x.reshape(-1, 32), axis=1) > 0
    if ftype == "q8_0":  # every block's largest magnitude takes the extreme code
        assert np.all(np.abs(q[live]).max(axis=1) == 127)
    else:  # min and max take 0 and 31
        assert np.all(q[live].min(axis=1) == 0) and np.all(q[live].max(axis=1) == 31)
    assert (err[: 64 * 8] / bound[: 64 * 8]).max() > 0.5  # really quantized: lossy, about half a step at worst


def test_rows_that_are_not_whole_blocks_are_refused():
    for ftype, quantize in ggml_convert.QUANTIZERS.items():
        with pytest.raises(
            ValueError,
            match=rf"cannot quantize encoder.odd \(4, 40\) to {ftype}: its rows hold 40 "
            "values, not a multiple of ggml's block of 32",
        ):
            quantize(np.ones((4, 40), np.float32), "encoder.odd")
        with pytest.raises(ValueError, match="NaN or infinite"):
            quantize(np.full((1, 32), np.nan, np.float32), "encoder.nan")
    with pytest.raises(ValueError, match="ftype 'q4_0'; use one of f32, f16, q8_0, q5_1"):
        ggml_convert.convert("unused", "unused", "q4_0")


def ggml_base():
    """pywhispercpp's own ggml (libggml-base), whose reference quantizers whisper.cpp's quantize calls."""
    import _pywhispercpp

    found = glob.glob(os.path.join(os.path.dirname(_pywhispercpp.__file__), "pywhispercpp.libs", "libggml-base*.so*"))
    assert len(found) == 1, f"libggml-base next to {_pywhispercpp.__file__}: {found}"
    lib = ctypes.CDLL(found[0])
    for fn in (lib.quantize_row_q8_0_ref, lib.quantize_row_q5_1_ref):
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64], None
    return lib


def ggml_quantize(lib, ftype, x):
    x = np.ascontiguousarray(x, np.float32)
    out = ctypes.create_string_buffer(x.size // 32 * ggml_convert.BLOCK_BYTES[ftype])
    getattr(lib, f"quantize_row_{ftype}_ref")(x.ctypes.data, out, x.size)
    return out.raw


def test_random_blocks_equal_ggmls_bit_for_bit():
    lib = ggml_base()
    rng = np.random.default_rng(4)
    x = np.concatenate(
        [
            rng.standard_normal(1 << 16) * 0.02,
            rng.standard_normal(1 << 12) * 1e-7,
            np.round(rng.standard_normal(1 << 12) * 127) / 2,
        ]
    ).astype(np.float32)  # halves: ties
    for ftype, quantize in ggml_convert.QUANTIZERS.items():
        assert quantize(x) == ggml_quantize(lib, ftype, x), ftype


def test_quantized_file_is_what_whisper_cpp_quantize_makes(ggml_quantized, ggml_f16, checkpoint_dir):
    """whisper.cpp's quantize on the f16 file: every 2-D tensor but the positional embeddings and conv
    biases through ggml's reference quantizer, the rest copied; the header's ftype 2000 + ggml_ftype."""
    ftype, path, summary = ggml_quantized
    lib = ggml_base()
    hparams, filters, words, tensors = read_ggml(path)
    f16_hparams, f16_filters, f16_words, f16_tensors = read_ggml(ggml_f16[0])
    assert hparams == dict(f16_hparams, ftype=HEADER_FTYPE[ftype]) and summary["header_ftype"] == HEADER_FTYPE[ftype]
    assert np.array_equal(filters, f16_filters) and words == f16_words
    assert list(tensors) == list(f16_tensors)
    quantized, saved = 0, 0
    for name, (ttype, ne, values, *raw) in tensors.items():
        f16_type, f16_ne, f16_values = f16_tensors[name]
        assert ne == f16_ne, name
        if len(ne) == 2 and f16_type == 1:
            assert ttype == TYPE[ftype], name
            source = f16_values.astype(np.float32)
            assert raw[0] == ggml_quantize(lib, ftype, source), name
            assert np.all(
                np.abs(values.reshape(-1, 32) - source.reshape(-1, 32)) <= error_bound(ttype, source, raw[0])
            ), name
            quantized += 1
            saved += 2 * values.size - len(raw[0])
        else:
            assert ttype == f16_type and np.array_equal(values, f16_values), name
    c = PackedCheckpoint(checkpoint_dir, verify=False).config
    # Each block's q, k, v, out and two MLP matrices, the decoder's cross-attention q, k, v, out, the token embedding.
    assert quantized == 6 * c["n_audio_layer"] + 10 * c["n_text_layer"] + 1 == summary["tensor_types"][ftype] == 65
    assert tensors["encoder.conv1.weight"][0] == tensors["encoder.conv2.weight"][0] == 1  # f16
    assert tensors["decoder.token_embedding.weight"][0] == TYPE[ftype]
    assert summary["bytes"] == os.path.getsize(ggml_f16[0]) - saved


@pytest.fixture(scope="module")
def f16_jfk(ggml_f16):
    return transcribe_jfk(ggml_f16[0])[0]


def transcribe_jfk(path):
    clip = clips.from_file(runfiles.locate("test_audio", "jfk.wav"))
    peer = WhisperCppPeer(path, threads=2)
    try:
        return peer.run(clip), peer.load_log
    finally:
        peer.close()


def test_whisper_cpp_runs_the_quantized_files_as_the_f16_one(ggml_quantized, f16_jfk):
    ftype, path, _ = ggml_quantized
    f16 = f16_jfk
    theirs, log = transcribe_jfk(path)
    # whisper.cpp read the header as quantized (ftype % 1000, qntvr = ftype / 1000) and loaded every tensor.
    assert re.search(rf"ftype\s+= {HEADER_FTYPE[ftype] % 1000}\n", log) and re.search(r"qntvr\s+= 2\n", log), log
    print(
        f"whisper.cpp f16: {f16['text']}\nwhisper.cpp {ftype}: {theirs['text']}\n"
        f"total ms f16 {f16['stages']['total']:.0f}, {ftype} {theirs['stages']['total']:.0f}"
    )
    assert report.normalise_text(theirs["text"]) == report.normalise_text(f16["text"])
    assert theirs["windows"] == 1 and theirs["tokens"] > 20
