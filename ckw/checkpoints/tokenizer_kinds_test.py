"""The built tokenizer.json of each kind against openai-whisper's tokenizer (tiktoken over its own
rank files) and, for English-only and multilingual, the real checkpoints' tokenizer.json."""

import json
import os
import random

import pytest
import tokenizers
from whisper.tokenizer import get_tokenizer

from ckw.checkpoints import model_config, tokenizer_kinds
from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.checkpoints.tokenizer_merges import RESTORED_KEY, restore_missing_merges
from ckw.runtime.tokenizer import WhisperTokenizer

# kind -> (openai-whisper's get_tokenizer arguments, real checkpoint of that kind)
KINDS = {
    "english": (dict(multilingual=False), "tiny"),
    "multilingual": (dict(multilingual=True, num_languages=99), "base"),
    "v3": (dict(multilingual=True, num_languages=100), None),
}
TEXTS = [
    "And so my fellow Americans, ask not what your country can do for you.",
    " leading space",
    "   several   spaces\tand a tab\nand a newline",
    "Crème brûlée, naïve café, Ångström, façade, jalapeño, Straße",
    "東京都は日本の首都です。我爱北京天安门。서울은 한국의 수도입니다.",
    "Emoji 😀🎉👍🏽 and 🇫🇷 flags, ♪♫ music",
    "Numbers 3.14159, 1,000,000, 2024-12-03, 42nd, $19.99, 100%",
    "Punctuation!? «quotes» \"double\" 'single' (parens) [brackets] {braces} --- … — ‑",
    "Привет, мир! Γειά σου κόσμε! مرحبا بالعالم! שלום עולם! नमस्ते दुनिया",
    "don't you'll I'm we've they're it's he'd",
    "",
    " ",
]


def config_for(kind: str, path: str) -> dict:
    """What the packer writes into model_config.json for this tokenizer (the runtime reads it)."""
    n_vocab = tokenizer_kinds.KINDS[kind][1]
    doc = model_config.load_tokenizer(path)
    cfg = model_config.special_tokens(doc, n_vocab, path)
    cfg.update(n_vocab=n_vocab, is_multilingual=n_vocab >= 51865, suppress_tokens=[])
    cfg[RESTORED_KEY] = restore_missing_merges(doc)
    return cfg


@pytest.mark.parametrize("kind", KINDS)
def test_built_file_is_found_in_runfiles(kind):
    path = tokenizer_kinds.tokenizer_path(kind)
    assert os.path.basename(path) == f"tokenizer_{kind}.json"
    assert "runfiles" in path, f"{path} was derived on demand, not the built file"


@pytest.mark.parametrize("kind", KINDS)
def test_specials_and_text_equal_openai_whisper(kind):
    args, _ = KINDS[kind]
    path = tokenizer_kinds.tokenizer_path(kind)
    cfg = config_for(kind, path)
    assert cfg[RESTORED_KEY] == [], "every merge is derived: nothing to restore"
    ours = WhisperTokenizer(path, cfg)
    theirs = get_tokenizer(**args)
    assert theirs.encoding.n_vocab == cfg["n_vocab"]
    for key in (
        "eot",
        "sot",
        "sot_prev",
        "sot_lm",
        "no_timestamps",
        "no_speech",
        "transcribe",
        "translate",
        "timestamp_begin",
    ):
        assert cfg[key] == getattr(theirs, key), key
    assert cfg["language_ids"] == dict(zip(theirs.all_language_codes, theirs.all_language_tokens))

    rng = random.Random(0)
    for text in TEXTS:
        ids = theirs.encode(text)
        assert ours.encode(text) == ids, text
        assert ours.decode(ids) == theirs.decode(ids) == text
    # Arbitrary id sequences (broken UTF-8 included), specials and timestamps too.
    for _ in range(200):
        ids = [rng.randrange(cfg["n_vocab"]) for _ in range(rng.randrange(1, 12))]
        assert ours.decode(ids) == theirs.decode(ids), ids


@pytest.mark.parametrize("kind", ["english", "multilingual"])
def test_equal_to_real_checkpoint_tokenizer(kind):
    ours_path = tokenizer_kinds.tokenizer_path(kind)
    real_path = os.path.join(runfiles_checkpoint_dir(KINDS[kind][1]), "tokenizer.json")
    with open(ours_path, encoding="utf-8") as f:
        ours_doc = json.load(f)
    with open(real_path, encoding="utf-8") as f:
        real_doc = json.load(f)
    # The packed file has its missing merges restored (base lacks "Ġ t"), so it is the full list.
    assert ours_doc["model"]["vocab"] == real_doc["model"]["vocab"]
    assert ours_doc["model"]["merges"] == real_doc["model"]["merges"]
    assert ours_doc["pre_tokenizer"] == real_doc["pre_tokenizer"]
    assert ours_doc["decoder"] == real_doc["decoder"]
    ours, real = tokenizers.Tokenizer.from_file(ours_path), tokenizers.Tokenizer.from_file(real_path)
    for text in TEXTS:
        assert ours.encode(text, add_special_tokens=False).ids == real.encode(text, add_special_tokens=False).ids


def test_kind_for_n_vocab():
    assert [tokenizer_kinds.kind_for_n_vocab(n, "x") for n in (51864, 51865, 51866)] == list(KINDS)
    with pytest.raises(CheckpointError, match=r"^ckpt.pt: vocabulary size 51000 is none of Whisper's"):
        tokenizer_kinds.kind_for_n_vocab(51000, "ckpt.pt")


def test_derive_on_demand_matches_build(tmp_path):
    # What fetch.py gets outside Bazel (the repository rule): the same bytes as the built file.
    out = tmp_path / "tokenizer_v3.json"
    tokenizer_kinds.write("v3", tokenizer_kinds.whisper_assets(), str(out))
    with open(tokenizer_kinds.tokenizer_path("v3"), "rb") as f:
        assert out.read_bytes() == f.read()
