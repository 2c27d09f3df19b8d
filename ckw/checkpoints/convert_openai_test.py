"""openai-whisper `.pt` checkpoints: written here by torch.save exactly as openai-whisper lays them
out, from tiny.en's packed weights, then converted and packed by our code (no torch involved) and
compared with @whisper_tiny tensor by tensor; and the bad files, each refused in one line."""

import dataclasses
import io
import json
import os
import pickle
import struct
import zipfile

import pytest
import torch

from ckw.checkpoints import sources, synthetic, tokenizer_kinds
from ckw.checkpoints.canonical import DIM_KEYS
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.fetch import fetch
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.checkpoints.pt_zip_reader import TorchZipCheckpoint
from models.whisper.reference.openai_whisper_ref import load_openai_whisper

TINY = runfiles_checkpoint_dir("tiny")


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def model():
    return load_openai_whisper(TINY)


def save_openai(model, path, half=False):
    state = model.half().state_dict() if half else model.state_dict()
    torch.save({"dims": model.dims.__dict__, "model_state_dict": state}, path)
    model.float()
    return path


def convert(src, out):
    return fetch("tiny", str(out), from_dir=str(src), log=lambda s: None)


@pytest.mark.parametrize("half", [False, True], ids=["float32", "float16"])
def test_pt_packs_to_whisper_tiny_bit_for_bit(model, tmp_path, half):
    pt = save_openai(model, tmp_path / "tiny.en.pt", half)
    summary = convert(pt, tmp_path / "out")
    ours, real = (read_json(os.path.join(d, "manifest.json")) for d in (tmp_path / "out", TINY))
    assert [(t["name"], t["dtype"], t["shape"], t["sha256"]) for t in ours["tensors"]] == [
        (t["name"], t["dtype"], t["shape"], t["sha256"]) for t in real["tensors"]
    ]
    assert summary["manifest_sha256"] == real["manifest_sha256"]
    cfg = read_json(tmp_path / "out" / "model_config.json")
    real_cfg = read_json(os.path.join(TINY, "model_config.json"))
    assert {k: cfg[k] for k in DIM_KEYS} == {k: real_cfg[k] for k in DIM_KEYS}
    for key in ("eot", "sot", "no_timestamps", "timestamp_begin", "begin_suppress_tokens", "is_multilingual"):
        assert cfg[key] == real_cfg[key], key
    # openai-whisper's default suppress set: the checkpoint's non-speech list plus the control tokens.
    controls = {real_cfg[k] for k in ("transcribe", "translate", "sot", "sot_prev", "sot_lm", "no_speech")}
    assert set(cfg["suppress_tokens"]) == set(real_cfg["suppress_tokens"]) | controls
    # A .pt has none: openai-whisper's own for these dimensions, as the real checkpoint lists them.
    assert cfg["alignment_heads"] == real_cfg["alignment_heads"]
    assert cfg["alignment_heads_source"] == "openai-whisper table: tiny.en"
    audit = read_json(tmp_path / "out" / "audit.json")
    assert audit["tokenizer"]["kind"] == "english"
    assert [os.path.basename(f["path"]) for f in audit["source_files"]] == ["tiny.en.pt"]
    assert audit["counts"]["used"] == audit["counts"]["source_entries"] == len(model.state_dict())
    assert {s["name"].rsplit(".", 2)[-2] for s in audit["synthesized"]} == {"k_proj"}
    with open(tmp_path / "out" / "tokenizer.json", "rb") as a, open(os.path.join(TINY, "tokenizer.json"), "rb") as b:
        assert a.read() != b.read()  # derived (<|nospeech|>, <|he|>), not copied from anywhere


def test_directory_with_one_pt(model, tmp_path):
    d = tmp_path / "ckpt"
    d.mkdir()
    save_openai(model, d / "model.pt", half=True)
    src = sources.from_path(str(d), "test")
    assert (src.layout, src.tokenizer_path) == ("openai", None)
    with sources.open_conversion(src) as conversion:
        assert src.tokenizer_kind == conversion.tokenizer_kind == "english"
        assert os.path.basename(src.tokenizer_path) == "tokenizer_english.json"
        assert conversion.dims.n_vocab == 51864
    (d / "other.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match=r"2 \.pt files"):
        sources.from_path(str(d), "test")


def one_line_error(path, match):
    with pytest.raises(CheckpointError, match=match) as e:  # converts and packs: every tensor is read
        convert(path, path.parent / "out")
    assert not (path.parent / "out" / "manifest.json").exists()
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    return msg


def write_zip(path, members: dict):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_not_a_zip(tmp_path):
    path = tmp_path / "legacy.pt"
    path.write_bytes(pickle.dumps({"dims": {}}))  # pre-1.6 torch.save files start with a pickle
    one_line_error(path, "not a zip archive")


def test_truncated_zip(model, tmp_path):
    full = save_openai(model, tmp_path / "full.pt", half=True).read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(full[: len(full) // 2])
    one_line_error(cut, "corrupt or truncated zip")


def test_corrupt_member(model, tmp_path):
    pt = save_openai(model, tmp_path / "bad.pt", half=True)
    with zipfile.ZipFile(pt) as z:
        info = z.getinfo(next(n for n in z.namelist() if n.endswith("/data/0")))
    data = bytearray(pt.read_bytes())
    name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)  # the local header's own
    start = info.header_offset + 30 + name_len + extra_len
    data[start : start + 8] = bytes(8 - i for i in range(8))  # the stored CRC no longer matches
    pt.write_bytes(bytes(data))
    one_line_error(pt, "corrupt or truncated")


class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + Evil.marker,))


def test_forbidden_global_is_refused_without_running(tmp_path):
    Evil.marker = str(tmp_path / "pwned")
    path = write_zip(tmp_path / "evil.pt", {"archive/data.pkl": pickle.dumps({"dims": Evil()}), "archive/version": "3"})
    msg = one_line_error(path, r"refuses to unpickle global '(posix|os)\.system'")
    assert "could run code" in msg
    assert not os.path.exists(Evil.marker)


def test_missing_dims(tmp_path):
    buf = io.BytesIO()
    torch.save({"model_state_dict": {"x": torch.zeros(2, dtype=torch.float16)}}, buf)
    path = tmp_path / "nodims.pt"
    path.write_bytes(buf.getvalue())
    one_line_error(path, "no 'dims' entry")


def test_missing_tensor_and_unknown_tensor(model, tmp_path):
    state = model.state_dict()
    del state["decoder.ln.bias"]
    torch.save({"dims": model.dims.__dict__, "model_state_dict": state}, tmp_path / "partial.pt")
    one_line_error(tmp_path / "partial.pt", r"missing tensor 'decoder\.ln\.bias'")
    state = model.state_dict()
    state["encoder.blocks.0.attn.key.bias"] = torch.zeros(model.dims.n_audio_state)
    torch.save({"dims": model.dims.__dict__, "model_state_dict": state}, tmp_path / "extra.pt")
    one_line_error(tmp_path / "extra.pt", r"unknown tensor 'encoder\.blocks\.0\.attn\.key\.bias'")


def test_unknown_vocabulary_size(model, tmp_path):
    dims = dict(model.dims.__dict__, n_vocab=1000)
    state = {k: v for k, v in model.state_dict().items()}
    state["decoder.token_embedding.weight"] = state["decoder.token_embedding.weight"][:1000].clone()
    torch.save({"dims": dims, "model_state_dict": state}, tmp_path / "v.pt")
    one_line_error(tmp_path / "v.pt", "vocabulary size 1000 is none of Whisper's")


def test_reader_strided_views(tmp_path):
    # Transposed and offset views share one storage; the reader must honour stride and offset.
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    torch.save({"t": base.t(), "s": base[1:, 2:5], "b": base.to(torch.bfloat16)}, tmp_path / "v.pt")
    with TorchZipCheckpoint(str(tmp_path / "v.pt")) as ckpt:
        got = ckpt.load()
        assert (ckpt.read_array(got["t"], "t") == base.t().numpy()).all()
        assert (ckpt.read_array(got["s"], "s") == base[1:, 2:5].numpy()).all()
        bits = ckpt.read_array(got["b"], "b")
        assert bits.dtype.str == "<u2" and (bits == base.to(torch.bfloat16).view(torch.int16).numpy().view("<u2")).all()


def test_hf_directory_without_tokenizer_gets_its_kind(tmp_path):
    dims = dataclasses.replace(synthetic.SMALL, n_vocab=51865)
    d = synthetic.write_hf_dir(str(tmp_path / "hf"), synthetic.hf_tensors(dims, seed=1), dims)
    os.remove(os.path.join(d, "tokenizer.json"))
    out = tmp_path / "out"
    fetch("tiny", str(out), from_dir=d, log=lambda s: None, check_size=False)
    audit = read_json(out / "audit.json")
    assert audit["tokenizer"]["kind"] == "multilingual"
    assert any("no tokenizer.json" in n for n in audit["notes"])
    with open(tokenizer_kinds.tokenizer_path("multilingual"), "rb") as f:
        assert (out / "tokenizer.json").read_bytes() == f.read()
    assert read_json(out / "model_config.json")["is_multilingual"] is True
    # A vocabulary of no Whisper kind has no tokenizer to derive.
    d = synthetic.write_hf_dir(str(tmp_path / "odd"), synthetic.hf_tensors())
    os.remove(os.path.join(d, "tokenizer.json"))
    with pytest.raises(CheckpointError, match=r"vocabulary size 1514 is none of Whisper's"):
        fetch("tiny", str(tmp_path / "out2"), from_dir=d, log=lambda s: None, check_size=False)
