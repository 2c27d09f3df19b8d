"""WhisperTokenizer (tokenizer.json through `tokenizers`) against openai-whisper's own tokenizer
(tiktoken) and DecodingTask, loaded with the same checkpoint: special ids, suppress list,
blank tokens, forced prefixes and decode() must be identical."""

import functools
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whisper.decoding import DecodingOptions as OpenAIOptions
from whisper.decoding import DecodingTask
from whisper.tokenizer import get_tokenizer

from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime.decoding import DecodingOptions, initial_tokens
from ckw.runtime.testing.doubles import checkpoint_tokenizer
from ckw.runtime.tokenizer import WhisperTokenizer
from models.whisper.reference.openai_whisper_ref import load_openai_whisper

VARIANTS = ["tiny", "base"]


ours = checkpoint_tokenizer


@functools.lru_cache(maxsize=None)
def model(variant: str):
    return load_openai_whisper(runfiles_checkpoint_dir(variant), verify=False)


def openai_tokenizer(variant: str, language="en", task="transcribe"):
    m = model(variant)
    return get_tokenizer(m.is_multilingual, num_languages=m.num_languages, language=language, task=task)


def openai_task(variant: str, language="en", task="transcribe") -> DecodingTask:
    options = OpenAIOptions(language=language, task=task, temperature=0.0, fp16=False, without_timestamps=True)
    return DecodingTask(model(variant), options)


def test_checkpoints_are_the_expected_kinds():
    assert not ours("tiny").is_multilingual and not model("tiny").is_multilingual
    assert ours("base").is_multilingual and model("base").is_multilingual


@pytest.mark.parametrize("variant", VARIANTS)
def test_special_ids(variant):
    t, o = ours(variant), openai_tokenizer(variant)
    for name in (
        "eot",
        "sot",
        "sot_prev",
        "sot_lm",
        "no_speech",
        "no_timestamps",
        "transcribe",
        "translate",
        "timestamp_begin",
    ):
        assert getattr(t, name) == getattr(o, name), name
    assert t.n_vocab == model(variant).dims.n_vocab
    # Timestamps fill the vocabulary above <|notimestamps|>: 1501 of them, 0.02 s apart.
    assert t.n_vocab - t.timestamp_begin == 1501
    assert t.timestamp_seconds(t.n_vocab - 1) == pytest.approx(30.0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_language_ids(variant):
    o = openai_tokenizer(variant)
    for code in o.all_language_codes:
        assert ours(variant).language_token(code) == o.to_language_token(code), code
    with pytest.raises(ValueError, match="not in this checkpoint"):
        ours(variant).language_token("xx")


@pytest.mark.parametrize("variant", VARIANTS)
def test_suppress_tokens_equal_decoding_task(variant):
    for language, task in [("en", "transcribe"), ("en", "translate"), ("de", "transcribe")]:
        if not ours(variant).is_multilingual and (language, task) != ("en", "transcribe"):
            continue
        expected = list(openai_task(variant, language, task)._get_suppress_tokens())
        assert ours(variant).suppress_tokens() == expected


@pytest.mark.parametrize("variant", VARIANTS)
def test_non_speech_tokens(variant):
    t = ours(variant)
    assert t.non_speech_tokens() == list(openai_tokenizer(variant).non_speech_tokens)
    # The checkpoint's own list (Hugging Face generation config) says the same once the
    # control tokens that both add are included.
    controls = {t.transcribe, t.translate, t.sot, t.sot_prev, t.sot_lm, t.no_speech}
    assert set(t.checkpoint_suppress_tokens()) | controls == set(t.suppress_tokens())


@pytest.mark.parametrize("variant", VARIANTS)
def test_blank_tokens(variant):
    o = openai_tokenizer(variant)
    assert ours(variant).blank_tokens() == o.encode(" ") + [o.eot]


@pytest.mark.parametrize(
    "variant,language,task",
    [("tiny", "en", "transcribe"), ("tiny", None, "transcribe")]
    + [("base", lang, task) for lang in ("en", "de", "fr") for task in ("transcribe", "translate")],
)
def test_sot_sequence_and_initial_tokens(variant, language, task):
    t = ours(variant)
    reference = openai_task(variant, language or "en", task)
    options = DecodingOptions(language=language, task=task)
    assert tuple(initial_tokens(t, options)) == reference.initial_tokens
    assert tuple(t.sot_sequence(language, task)) == openai_tokenizer(variant, language or "en", task).sot_sequence
    assert len(initial_tokens(t, options)) == reference.sample_begin
    assert model(variant).dims.n_text_ctx // 2 == reference.sample_len


def test_english_only_rejects_what_openai_ignores():
    # openai-whisper's decode() silently drops language and task for English-only models;
    # here asking for them is an error that says why.
    with pytest.raises(ValueError, match="multilingual"):
        ours("tiny").sot_sequence("de", "transcribe")
    with pytest.raises(ValueError, match="multilingual"):
        ours("tiny").sot_sequence("en", "translate")
    with pytest.raises(ValueError, match="task"):
        ours("base").sot_sequence("en", "summarize")


SAMPLES = [
    " And so my fellow Americans, ask not what your country can do for you.",
    " Übergrößenträger, ça va? ¿Qué tal? 日本語のテキスト ♪♪ [MUSIC] (laughs) -- 'quoted' \"q\"",
    "  leading spaces\tand\ttabs\nnewline  ",
    " 1234567890 3.14159 $100 50% #hashtag @user <html>",
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("text", SAMPLES)
def test_encode_and_decode_samples(variant, text):
    t, o = ours(variant), openai_tokenizer(variant)
    ids = o.encode(text)
    assert t.encode(text) == ids
    assert t.decode(ids) == o.decode(ids) == text


@pytest.mark.parametrize("variant", VARIANTS)
def test_decode_keeps_specials_and_drops_timestamps(variant):
    t, o = ours(variant), openai_tokenizer(variant)
    text = o.encode(" Hello")
    specials = [t.sot, t.no_timestamps, t.eot, t.sot_prev, t.transcribe]
    ids = specials[:2] + text + [t.timestamp_begin, t.timestamp_begin + 150, t.n_vocab - 1] + specials[2:]
    assert t.decode(ids) == o.decode(ids)
    assert "<|endoftext|>" in t.decode(ids) and "<|notimestamps|>" in t.decode(ids)
    assert t.decode([t.timestamp_begin + 7]) == ""


@pytest.mark.parametrize("variant", VARIANTS)
def test_decode_rejects_ids_outside_the_vocabulary(variant):
    t = ours(variant)
    with pytest.raises(ValueError, match="outside"):
        t.decode([t.n_vocab])
    with pytest.raises(ValueError, match="outside"):
        t.decode([-1])


def _id_lists(variant):
    t = ours(variant)
    return st.lists(
        st.one_of(
            st.integers(0, t.eot - 1),  # text tokens, often splitting multi-byte UTF-8 characters
            st.integers(t.eot, t.timestamp_begin - 1),  # special tokens
            st.integers(t.timestamp_begin, t.n_vocab - 1),  # timestamps
            st.integers(40000, 50000),  # many partial CJK byte sequences live up here
        ),
        max_size=24,
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_decode_matches_openai_on_any_ids(variant):
    o = openai_tokenizer(variant)

    @settings(max_examples=400, deadline=None, database=None, derandomize=True)
    @given(_id_lists(variant))
    def check(ids):
        assert ours(variant).decode(ids) == o.decode(ids)

    check()


@pytest.mark.parametrize("variant", VARIANTS)
def test_decode_accepts_numpy_ids(variant):
    t = ours(variant)
    ids = np.asarray(openai_tokenizer(variant).encode(" numpy ids"), dtype=np.int64)
    assert t.decode(ids) == " numpy ids"


def test_missing_merge_is_repaired():
    # The multilingual base tokenizer.json lacks the merge "Ġ t" (rank 256); without it every
    # word starting with " t" encodes differently from openai-whisper.
    assert ours("tiny").repaired_merges == []
    assert ours("base").repaired_merges == ["Ġ t"]
    o = openai_tokenizer("base")
    assert ours("base").encode(" the tale") == o.encode(" the tale") == [264, 17172]


def test_a_directory_packed_without_the_merge_record_is_refused(tmp_path):
    src = runfiles_checkpoint_dir("base")
    with open(os.path.join(src, "model_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    del config["tokenizer_restored_merges"]
    with pytest.raises(ValueError, match="older packer.*rebuild the checkpoint"):
        WhisperTokenizer(os.path.join(src, "tokenizer.json"), config)


def _transcripts():
    import csv
    import os

    path = os.path.join(os.environ["TEST_SRCDIR"], "test_audio", "librispeech", "MANIFEST.tsv")
    with open(path, encoding="utf-8") as f:
        return [row["transcript"] for row in csv.DictReader(f, delimiter="\t")]


@pytest.mark.parametrize("variant", VARIANTS)
def test_encode_matches_openai_on_librispeech_transcripts(variant):
    t, o = ours(variant), openai_tokenizer(variant)
    texts = _transcripts()
    assert len(texts) >= 40
    for text in texts:
        for s in (" " + text.capitalize(), text.lower(), " " + text):
            assert t.encode(s) == o.encode(s), s


@pytest.mark.parametrize("variant", VARIANTS)
def test_encode_matches_openai_on_any_text(variant):
    t, o = ours(variant), openai_tokenizer(variant)

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(st.text(max_size=40).filter(lambda s: "<|" not in s))
    def check(text):
        assert t.encode(text) == o.encode(text, disallowed_special=())

    check()
