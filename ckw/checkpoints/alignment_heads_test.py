"""Alignment heads for checkpoints without their own: the built table against openai-whisper's own
model, the choice between table entry and default, and what packing writes."""

import json
import os

import pytest
import whisper

from ckw.checkpoints import alignment_heads, layout, pack, sources, synthetic
from ckw.checkpoints.canonical import ModelDims
from ckw.checkpoints.errors import CheckpointError

TINY_EN = layout.STANDARD["tiny.en"]


def openai_whisper_heads(dims: ModelDims, name: str | None) -> list[list[int]]:
    """The heads openai-whisper's Whisper model sets: `name`'s from its table, its default if None.
    The mask depends only on the decoder's layers x heads, so the widths are shrunk: large models'
    real weights would take gigabytes to allocate."""
    small = whisper.model.ModelDimensions(
        n_mels=4,
        n_audio_ctx=4,
        n_audio_state=dims.n_text_head,
        n_audio_head=1,
        n_audio_layer=1,
        n_vocab=8,
        n_text_ctx=4,
        n_text_state=dims.n_text_head,
        n_text_head=dims.n_text_head,
        n_text_layer=dims.n_text_layer,
    )
    model = whisper.model.Whisper(small)
    if name is not None:
        model.set_alignment_heads(whisper._ALIGNMENT_HEADS[name])
    return model.alignment_heads.to_dense().nonzero().tolist()


def built_table() -> dict:
    path = alignment_heads._table_path()
    assert path is not None, "alignment_heads.json is not in the runfiles: :checkpoint must carry it as data"
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_the_built_table_is_openai_whispers_for_every_model():
    table = built_table()
    assert sorted(table) == sorted(whisper._ALIGNMENT_HEADS)
    for name in whisper._ALIGNMENT_HEADS:
        assert table[name] == openai_whisper_heads(alignment_heads.model_dims(name), name), name
    assert alignment_heads.load_table() == table


@pytest.mark.parametrize("name", ["tiny.en", "base", "medium", "large-v3-turbo", "distil-large-v3"])
def test_the_default_is_openai_whispers(name):
    dims = layout.STANDARD[name]
    assert alignment_heads.default_heads(dims) == openai_whisper_heads(dims, None)


def test_dimensions_shared_by_two_models_with_different_heads_get_the_default():
    table = alignment_heads.load_table()
    dims = layout.STANDARD["large-v2"]
    assert table["large-v1"] != table["large-v2"]
    heads, source, notes = alignment_heads.select(dims, table=table)
    assert (heads, source) == (alignment_heads.default_heads(dims), alignment_heads.SOURCE_DEFAULT)
    assert "large-v1 and large-v2" in notes[0]
    # Naming the model settles it.
    for name in ("large-v1", "large-v2"):
        assert alignment_heads.select(dims, name, table) == (table[name], f"openai-whisper table: {name}", [])


def test_aliases_and_models_without_an_entry():
    table = alignment_heads.load_table()
    v3 = layout.STANDARD["large-v3"]
    assert alignment_heads.select(v3, "large", table)[:2] == (table["large"], "openai-whisper table: large")
    assert alignment_heads.select(v3, table=table)[:2] == (table["large-v3"], "openai-whisper table: large-v3")
    distil = layout.STANDARD["distil-large-v3"]  # published, but openai-whisper has no heads for it
    heads, source, notes = alignment_heads.select(distil, "distil-large-v3", table)
    assert (heads, source) == (alignment_heads.default_heads(distil), alignment_heads.SOURCE_DEFAULT)
    assert "no alignment heads for distil-large-v3" in notes[0]


def test_an_unknown_model_name_is_refused():
    with pytest.raises(CheckpointError, match="'tiny-en' is not a published Whisper model"):
        alignment_heads.select(TINY_EN, "tiny-en", {})


def test_a_damaged_table_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "alignment_heads.json"
    monkeypatch.setattr(alignment_heads, "_table_path", lambda: str(bad))
    for text in ("{", '{"tiny.en": [[4, 0]]}', '{"tiny-en": [[0, 0]]}', "{}"):
        bad.write_text(text)
        with pytest.raises(CheckpointError) as e:
            alignment_heads.load_table()
        assert str(e.value).startswith(str(bad)) and "rebuild" in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def tiny_en_dir(tmp_path_factory):
    """A Hugging Face directory of tiny.en's dimensions, random weights, no alignment heads."""
    # The specials end at <|notimestamps|> = n_vocab - 1502, leaving the 1501 timestamp ids.
    shift = TINY_EN.n_vocab - 1502 - synthetic.SPECIAL_TOKENS["<|notimestamps|>"]
    specials = {k: v + shift for k, v in synthetic.SPECIAL_TOKENS.items()}
    directory = str(tmp_path_factory.mktemp("hf") / "tiny_en")
    synthetic.write_hf_dir(directory, synthetic.hf_tensors(TINY_EN, seed=5), TINY_EN, None, specials)
    return directory, specials


def packed(directory: str, out: str, model=None) -> tuple[dict, dict]:
    src = sources.from_directories([directory], "test")
    with sources.open_conversion(src) as conversion:
        pack.write_packed(conversion, src.tokenizer_path, out, "tiny", "test", src.files, model=model)
    docs = []
    for name in ("model_config.json", "audit.json"):
        with open(os.path.join(out, name), encoding="utf-8") as f:
            docs.append(json.load(f))
    return docs[0], docs[1]


def test_packing_without_heads_takes_them_from_the_table(tiny_en_dir, tmp_path):
    directory, specials = tiny_en_dir
    want = alignment_heads.load_table()["tiny.en"]
    for model in ("tiny.en", None):
        cfg, audit = packed(directory, str(tmp_path / f"out_{model}"), model)
        assert cfg["alignment_heads"] == want, model
        assert cfg["alignment_heads_source"] == "openai-whisper table: tiny.en", model
        assert f"alignment heads ({len(want)}) from openai-whisper table: tiny.en" in audit["notes"]
        assert not any("unavailable" in n for n in audit["notes"])
    # "tiny" (multilingual) has another vocabulary: its heads are not taken, the dimensions decide.
    cfg, audit = packed(directory, str(tmp_path / "out_tiny"), "tiny")
    assert cfg["alignment_heads_source"] == "openai-whisper table: tiny.en"
    assert any("not tiny's" in n for n in audit["notes"])


def test_a_checkpoints_own_heads_win(tiny_en_dir, tmp_path):
    directory, specials = tiny_en_dir
    own = [[0, 1], [3, 5]]
    assert own != alignment_heads.load_table()["tiny.en"]
    synthetic.write_hf_generation_config(directory, own, specials)
    try:
        cfg, audit = packed(directory, str(tmp_path / "out"), "tiny.en")
    finally:
        synthetic.write_hf_generation_config(directory, None, specials)
    assert (cfg["alignment_heads"], cfg["alignment_heads_source"]) == (own, "checkpoint")
    assert "alignment heads (2) from checkpoint" in audit["notes"]


def test_an_unknown_model_name_fails_before_writing(tiny_en_dir, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(CheckpointError, match="'large-v4' is not a published Whisper model"):
        packed(tiny_en_dir[0], str(out), "large-v4")
    assert not out.exists() or not os.listdir(out)


def test_the_mask_decoder_refuses_a_mask_of_other_dimensions():
    with pytest.raises(CheckpointError, match="mask of tiny.en has 24 flags.*4 decoder layers x 8 heads"):
        alignment_heads.decode_mask(
            whisper._ALIGNMENT_HEADS["tiny.en"], ModelDims(**{**TINY_EN.to_dict(), "n_text_head": 8}), "tiny.en", "x"
        )


def test_an_openai_whisper_source_without_the_table_is_refused(tmp_path):
    module = tmp_path / "__init__.py"
    module.write_text("_ALIGNMENT_HEADS = {}\n_MODELS = make_models()\n")
    with pytest.raises(CheckpointError, match="__init__.py: unreadable.*requirements_lock.txt"):
        alignment_heads._module_dicts(str(module), ("_ALIGNMENT_HEADS", "_MODELS"))
    module.write_text("_ALIGNMENT_HEADS = {}\n")
    with pytest.raises(CheckpointError, match="no top-level _MODELS dict literal"):
        alignment_heads._module_dicts(str(module), ("_ALIGNMENT_HEADS", "_MODELS"))
