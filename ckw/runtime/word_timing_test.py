"""ckw/runtime/word_timing.py against openai-whisper's timing.py, piece by piece on generated data:
DTW (its numba kernel), the median filter, word splitting (its tokenizer), punctuation merging,
and add_word_timestamps' adjustments given the same token alignment. No model runs here: the
generated decoder's alignment is tests/e2e/word_timestamps_openai_test.py's."""

import copy
import functools

import numpy as np
import pytest
import torch
import whisper.timing as wt
from whisper.tokenizer import get_tokenizer
from whisper.utils import get_end

from ckw.checkpoints.packed import runfiles_checkpoint_dir
from ckw.runtime import word_timing
from ckw.runtime.tokenizer import WhisperTokenizer


@functools.cache
def tokenizers(variant: str):
    ours = WhisperTokenizer.from_checkpoint(runfiles_checkpoint_dir(variant))
    theirs = get_tokenizer(
        ours.is_multilingual,
        num_languages=ours.n_vocab - 51765 - int(ours.is_multilingual),
        language="en",
        task="transcribe",
    )
    return ours, theirs


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (5, 1), (3, 4), (12, 80), (40, 300)])
@pytest.mark.parametrize("quantized", [False, True])
def test_dtw_equals_openai(shape, quantized):
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    x = rng.standard_normal(shape)
    if quantized:
        x = np.round(x * 2) / 2  # many equal costs: the tie rules decide
    ours = word_timing.dtw(x.copy())
    theirs = wt.dtw_cpu(x.copy())
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("frames", [1, 3, 4, 9, 200])
def test_median_filter_equals_openai(frames):
    x = np.random.default_rng(frames).standard_normal((3, 5, frames)).astype(np.float32)
    np.testing.assert_array_equal(word_timing.median_filter(x, 7), wt.median_filter(torch.from_numpy(x), 7).numpy())


@pytest.mark.parametrize("variant", ["tiny", "base"])
@pytest.mark.parametrize(
    "text",
    [
        " And so, my fellow Americans: ask not!",
        " \"Well\"—it's (probably) 3.5 km, isn't it?",
        " Ça coûte 20 € — déjà vu",
        " 東京は晴れです。",
    ],
)
def test_words_split_as_openai(variant, text):
    ours, theirs = tokenizers(variant)
    tokens = ours.encode(text) + [ours.eot]
    for language in ("en", "ja"):
        theirs.language = language  # split_to_word_tokens reads it
        assert word_timing.split_to_word_tokens(ours, tokens, language) == theirs.split_to_word_tokens(tokens)


def _alignment(rng, words):
    t, out = 0.0, []
    for w in words:
        d = float(rng.choice([0.0, 0.02, 0.1, 0.3, 1.6]))
        out.append(
            wt.WordTiming(w, [int(rng.integers(100, 200))] * len(w.strip() or " "), t, t + d, float(rng.random()))
        )
        t += d + float(rng.choice([0.0, 0.0, 0.4, 3.0]))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_punctuation_merge_and_adjustments_equal_openai(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    vocab = [" the", " fox", ",", ".", ' "', '"', " (", ")", "?", " jumps", "-", " over", "!", " dog", "'s"]
    words = [str(rng.choice(vocab)) for _ in range(int(rng.integers(1, 14)))]
    alignment = _alignment(rng, words)
    # Two segments over the words' tokens; the second may start before the first word ends.
    tokens = [t for a in alignment for t in a.tokens]
    cut = int(rng.integers(0, len(tokens) + 1))
    offset = float(rng.choice([0.0, 30.0]))
    segments = [
        {"seek": int(offset * 100), "start": offset + float(rng.random()), "end": offset + 4.0, "tokens": tokens[:cut]},
        {
            "seek": int(offset * 100),
            "start": offset + 3.0,
            "end": offset + 9.0 + float(rng.random()),
            "tokens": tokens[cut:],
        },
    ]
    segments = [s for s in segments if s["tokens"]] or segments[:1]
    last_speech = float(rng.choice([0.0, offset, offset + 5.0]))
    theirs = copy.deepcopy(segments)
    monkeypatch.setattr(wt, "find_alignment", lambda *a, **k: copy.deepcopy(alignment))
    wt.add_word_timestamps(
        segments=theirs,
        model=None,
        tokenizer=type("T", (), {"eot": 50256})(),
        mel=None,
        num_frames=3000,
        last_speech_timestamp=last_speech,
    )
    ours = copy.deepcopy(segments)
    monkeypatch.setattr(word_timing, "find_alignment", lambda *a, **k: copy.deepcopy(alignment))
    word_timing.add_word_timestamps(
        ours, None, type("T", (), {"eot": 50256})(), None, 3000, [[0, 0]], "en", "transcribe", last_speech
    )
    assert ours == theirs
    assert word_timing.last_word_end(ours) == get_end(theirs)
