"""`from ckw import WhisperModel`, faster-whisper's API, as a drop-in:

- a faster-whisper script runs with the import changed and gives exactly what Engine.transcribe
  gives with the mapped openai-whisper options (segments, tokens, words, scores);
- the same script on faster-whisper's own model directory (CTranslate2, the tiny.en PyPI package
  the build converts) runs under faster-whisper itself and under ckw, with the same words;
- the signatures (keyword names and defaults) and the Segment, Word, TranscriptionInfo and
  TranscriptionOptions fields equal the installed faster-whisper's, read from it;
- every faster-whisper default is accepted; every value ckw cannot honour is a one-line error
  naming the keyword (CUDA, a repetition penalty, ...);
- vad_filter and vad_parameters as faster-whisper takes them (a dict, its VadOptions or ckw's),
  ignored as there with clip_timestamps, reported in info as there (vad_options, duration_after_vad).
"""

import dataclasses
import inspect
import json
import warnings

import faster_whisper
import pytest
import soundfile
from faster_whisper import transcribe as fw

import ckw
from ckw import runfiles, whisper_model
from ckw.checkpoints import sources
from ckw.runtime.engine import Engine


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        root = tmp_path_factory.mktemp("ckw-cache")
        mp.setenv("CKW_CACHE_DIR", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")  # no Hub here; nothing below needs it
        yield root


@pytest.fixture(scope="module")
def model():
    with ckw.WhisperModel("tiny.en", device="cpu", compute_type="float32", cpu_threads=2) as m:
        yield m


@pytest.fixture(scope="module")
def engine():
    with Engine.from_runfiles("tiny", threads=2) as e:
        yield e


def jfk() -> str:
    return runfiles.locate("test_audio", "jfk.wav")


def ct2_dir() -> str:
    """faster-whisper's own model directory of tiny.en: the CTranslate2 PyPI package the build converts."""
    dirs, why = sources.package_dirs(sources.VARIANTS["tiny"])
    assert dirs is not None, why
    return dirs[0]


def script(WhisperModel, model_path: str, audio, beam_size: int = 5) -> tuple:
    """What a faster-whisper user writes; only the WhisperModel class differs between runs."""
    model = WhisperModel(model_path, device="cpu", compute_type="float32", cpu_threads=2)
    segments, info = model.transcribe(audio, beam_size=beam_size, word_timestamps=True)
    out = []
    for s in segments:
        out.append(
            (
                s.id,
                s.seek,
                s.start,
                s.end,
                s.text,
                s.tokens,
                s.avg_logprob,
                s.compression_ratio,
                s.no_speech_prob,
                s.temperature,
                [(w.start, w.end, w.word, w.probability) for w in s.words],
            )
        )
    return model, info, out


def engine_rows(segments) -> list:
    """Engine segments as the script's rows: faster-whisper's numbering from 1, without cleared ones."""
    kept = [s for s in segments if s.start != s.end and s.text.strip()]
    return [
        (
            i,
            s.seek,
            s.start,
            s.end,
            s.text,
            s.tokens,
            s.avg_logprob,
            s.compression_ratio,
            s.no_speech_prob,
            s.temperature,
            [(w["start"], w["end"], w["word"], w["probability"]) for w in s.words],
        )
        for i, s in enumerate(kept, start=1)
    ]


def test_a_faster_whisper_script_gives_the_engines_transcript(engine):
    m, info, rows = script(ckw.WhisperModel, "tiny.en", jfk())
    want, _ = engine.transcribe(jfk(), beam_size=5, best_of=5, word_timestamps=True)
    assert rows == engine_rows(want)
    assert rows[0][10][0][2] == " And" and "ask not what your country" in "".join(r[4] for r in rows)
    assert (info.language, info.language_probability, info.all_language_probs) == ("en", 1.0, None)
    assert info.duration == info.duration_after_vad == 11.0 and info.vad_options is None
    opts = info.transcription_options
    assert (opts.beam_size, opts.best_of, opts.patience, opts.length_penalty, opts.temperatures) == (
        5,
        5,
        1,
        1,
        [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
    )
    assert opts.suppress_tokens == tuple(engine.tokenizer.suppress_tokens())  # -1 expanded, as faster-whisper does
    assert m.supported_languages == ["en"] and m.engine.model == "tiny.en"
    m.close()


def test_inputs_greedy_decoding_and_progress(model, engine, capsys):
    samples, _ = soundfile.read(jfk(), dtype="float32")
    want = engine_rows_plain(engine.transcribe(jfk(), temperature=0.0)[0])
    with open(jfk(), "rb") as f:
        for audio in (samples, f):  # samples, a file-like object (a path: above)
            segments, _ = model.transcribe(audio, beam_size=1, temperature=0, log_progress=True)  # greedy
            assert [(s.start, s.end, s.tokens, s.words) for s in segments] == want
    progress = capsys.readouterr().err  # faster-whisper's tqdm bar, in seconds of audio
    assert progress.count("| 0/11.0 [") == 2 and "100%|██████████| 11.0/11.0 [" in progress and "seconds/s" in progress


def engine_rows_plain(segments) -> list:
    return [(s.start, s.end, s.tokens, None) for s in segments if s.start != s.end and s.text.strip()]


def test_same_words_as_faster_whisper_on_its_own_model_directory(cache, tmp_path):
    # Greedy (beam_size=1, CTranslate2's greedy search): faster-whisper's beams take 15 s on 2 busy CPUs.
    theirs = script(faster_whisper.WhisperModel, ct2_dir(), jfk(), beam_size=1)
    root = tmp_path / "download-root"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warnings either
        ours = script(
            lambda path, **kw: ckw.WhisperModel(path, download_root=str(root), **kw), ct2_dir(), jfk(), beam_size=1
        )
    assert ours[0].engine.checkpoint_dir.startswith(str(root))  # converted into download_root

    def words(rows):
        return [w[2] for r in rows for w in r[10]]

    assert "".join(r[4] for r in ours[2]) == "".join(r[4] for r in theirs[2])
    assert words(ours[2]) == words(theirs[2])
    for o, t in zip(ours[2], theirs[2]):
        assert abs(o[2] - t[2]) <= 0.1 and abs(o[3] - t[3]) <= 0.1
    assert (ours[1].language, ours[1].language_probability) == (theirs[1].language, theirs[1].language_probability)
    ours[0].close()


@pytest.mark.parametrize(
    "ours,theirs",
    [
        (whisper_model.Segment, fw.Segment),
        (whisper_model.Word, fw.Word),
        (whisper_model.TranscriptionInfo, fw.TranscriptionInfo),
        (whisper_model.TranscriptionOptions, fw.TranscriptionOptions),
    ],
)
def test_records_have_faster_whispers_fields_in_its_order(ours, theirs):
    assert dataclasses.is_dataclass(ours) and dataclasses.is_dataclass(theirs)
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)]
    assert hasattr(ours, "_asdict") == hasattr(theirs, "_asdict")


def test_records_convert_as_faster_whispers():
    word = whisper_model.Word(0.0, 0.5, " And", 0.9)
    with pytest.warns(DeprecationWarning, match=r"Word._asdict\(\) method is deprecated"):
        assert (
            word._asdict() == dataclasses.asdict(word) == {"start": 0.0, "end": 0.5, "word": " And", "probability": 0.9}
        )
    assert ckw.Segment is whisper_model.Segment and ckw.Word is whisper_model.Word
    assert ckw.TranscriptionInfo is whisper_model.TranscriptionInfo


def parameters(function) -> list:
    return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]


def test_signatures_are_faster_whispers():
    assert parameters(whisper_model.WhisperModel.__init__) == parameters(fw.WhisperModel.__init__)
    assert parameters(whisper_model.WhisperModel.transcribe) == parameters(fw.WhisperModel.transcribe)
    assert parameters(whisper_model.BatchedInferencePipeline.transcribe) == parameters(
        fw.BatchedInferencePipeline.transcribe
    )
    assert ckw.BatchedInferencePipeline is whisper_model.BatchedInferencePipeline


def test_every_default_given_explicitly_is_accepted(model):
    defaults = {name: default for name, default in parameters(fw.WhisperModel.transcribe)[2:]}
    assert len(defaults) == 34
    a, explicit = model.transcribe(jfk(), **defaults)  # options are checked here, before any decoding
    b, implicit = model.transcribe(jfk())
    assert explicit == implicit and explicit.transcription_options.beam_size == 5
    a.close(), b.close()


@pytest.mark.parametrize(
    "options,name",
    [
        ({"repetition_penalty": 1.1}, "repetition_penalty"),
        ({"no_repeat_ngram_size": 3}, "no_repeat_ngram_size"),
        ({"prompt_reset_on_temperature": 0.3}, "prompt_reset_on_temperature"),
        ({"prefix": "And so"}, "prefix"),
        ({"hotwords": "Kennedy"}, "hotwords"),
        ({"multilingual": True}, "multilingual"),
        (
            {"vad_filter": True, "vad_parameters": {"threshold": 2}},
            "vad_parameters: threshold=2 must be between 0 and 1",
        ),
        (
            {"vad_filter": True, "vad_parameters": {"window_size_samples": 512}},
            "vad_parameters: 'window_size_samples' is not a VAD option",
        ),
        (
            {"vad_filter": True, "vad_parameters": {"min_silence_duration_ms": -1}},
            "vad_parameters: min_silence_duration_ms=-1 must be at least 0",
        ),
        ({"max_new_tokens": 100}, "max_new_tokens"),
        ({"chunk_length": 20}, "chunk_length"),
        ({"hallucination_silence_threshold": 2.0}, "hallucination_silence_threshold"),
        ({"language_detection_segments": 2}, "language_detection_segments"),
        ({"length_penalty": 0.6}, "length_penalty"),
        ({"patience": 2.0, "beam_size": 1}, "patience"),
        ({"initial_prompt": [50257, 123]}, "initial_prompt"),
        ({"beam_size": 0}, "beam_size"),  # the engine's own checks, named the same way
        ({"beam_size": 9}, "beam_size"),
        ({"best_of": 0}, "best_of"),
        ({"temperature": 1.5}, "temperature"),
        ({"log_prob_threshold": "low"}, "log_prob_threshold"),  # logprob_threshold in openai-whisper
        ({"clip_timestamps": "a,b"}, "clip_timestamps"),
    ],
)
def test_what_ckw_cannot_honour_is_a_one_line_error_naming_it(model, options, name):
    with pytest.raises(ValueError) as e:
        model.transcribe(jfk(), **options)
    assert str(e.value).startswith(name) and "\n" not in str(e.value), str(e.value)


def test_honoured_values_map(model, engine):
    segments, _ = model.transcribe(
        jfk(),
        beam_size=2,
        patience=2.0,
        length_penalty=0,
        temperature=0.0,
        language_detection_threshold=0.9,
        chunk_length=30,
    )
    want, _ = engine.transcribe(jfk(), beam_size=2, patience=2.0, length_penalty=0.0, temperature=0.0)
    assert [s.tokens for s in segments] == [s.tokens for s in want]


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        ({"device": "cuda"}, ValueError, "device='cuda': ckw is a CPU engine; use device='cpu'"),
        ({"device": "cuda:1"}, ValueError, "device='cuda:1': ckw is a CPU engine; use device='cpu'"),
        ({"device": "tpu"}, ValueError, "device='tpu': ckw is a CPU engine"),
        (
            {"compute_type": "int8_float16"},
            ValueError,
            "compute_type='int8_float16': not a type ckw computes in; use one of default",
        ),
        ({"compute_type": "float16"}, ValueError, "compute_type='float16': "),
        ({"device_index": 1}, ValueError, "device_index=1: "),
        ({"num_workers": 2}, ValueError, "num_workers=2: "),
        ({"cpu_threads": -1}, ValueError, "cpu_threads=-1: "),
        ({"files": {"model.bin": b""}}, ValueError, "files: "),
        ({"revision": "main"}, ValueError, "revision='main': "),
        ({"use_auth_token": "hf_x"}, ValueError, "use_auth_token: "),
        ({"flash_attention": True}, ValueError, "flash_attention=True: "),
        ({"bogus": 1}, TypeError, "WhisperModel.__init__() got an unexpected keyword argument 'bogus'"),
    ],
)
def test_constructor_refusals_are_one_line(kwargs, error, message):
    with pytest.raises(error) as e:
        ckw.WhisperModel("tiny.en", **kwargs)
    assert str(e.value).startswith(message) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "compute_type,precision,named",
    [("bfloat16", "bf16", "bfloat16"), ("int8", "int8", "int8"), ("int8_float32", "int8", "int8")],
)
def test_narrow_builds_are_derived_for_tiny_en_and_base_and_their_fine_tunes(compute_type, precision, named):
    with open(
        runfiles.locate("ckw", f"models/whisper/tiny_{precision}_checkpoint/manifest.json"), encoding="utf-8"
    ) as f:
        build = json.load(f)  # the build's own weights of tiny.en at that precision
    # by name, and from a local directory (faster-whisper's tiny.en package): derived at run time
    for path in ("tiny.en", ct2_dir()):
        with ckw.WhisperModel(path, compute_type=compute_type, cpu_threads=2) as m:
            assert m.engine.precision == precision and m.compute_type == named
            if path == "tiny.en":
                assert m.engine.weights_sha256 == build["weights_sha256"]
            segments, _ = m.transcribe(jfk(), beam_size=1, temperature=0.0)
            assert "ask not what your country" in "".join(s.text for s in segments)
    with pytest.raises(
        ValueError,
        match=rf"^compute_type='{compute_type}': this build has {precision} libraries for "
        r"base, tiny.en \(and their fine-tunes\), not for 'small'; use "
        r"compute_type='float32'$",
    ):
        ckw.WhisperModel("small", compute_type=compute_type)


def test_defaults_construct_and_tolerate_ctranslate2_defaults():
    with ckw.WhisperModel(
        "tiny.en",
        device="auto",
        flash_attention=False,
        tensor_parallel=False,
        max_queued_batches=0,
        use_auth_token=None,
    ) as m:
        assert (m.device, m.compute_type) == ("cpu", "float32")
        assert not m.engine.closed
    assert m.engine.closed


@pytest.fixture(scope="module")
def gaps():
    """16 kHz samples: jfk.wav twice, between long silences and noise (ckw/runtime/testing/speech_gaps.py)."""
    from ckw.runtime.testing import speech_gaps

    clip = speech_gaps.read_16k(jfk())
    return speech_gaps.with_gaps([clip, clip], gaps=speech_gaps.GAPS[:3]).samples


def test_vad_filter_and_parameters_as_faster_whispers(model, engine, gaps):
    want, found = engine.transcribe(
        gaps,
        vad_filter=True,
        vad_parameters={"min_silence_duration_ms": 1000},
        beam_size=5,
        best_of=5,
        word_timestamps=True,
    )
    want = engine_rows(want)
    for given in (
        {"min_silence_duration_ms": 1000},
        fw.VadOptions(min_silence_duration_ms=1000),
        ckw.VadOptions(min_silence_duration_ms=1000),
    ):
        segments, info = model.transcribe(gaps, vad_filter=True, vad_parameters=given, word_timestamps=True)
        rows = [
            (
                s.id,
                s.seek,
                s.start,
                s.end,
                s.text,
                s.tokens,
                s.avg_logprob,
                s.compression_ratio,
                s.no_speech_prob,
                s.temperature,
                [(w.start, w.end, w.word, w.probability) for w in s.words],
            )
            for s in segments
        ]
        assert rows == want
        assert (info.duration, info.duration_after_vad) == (found.duration, found.duration_after_vad)
        assert info.duration == gaps.size / 16000 and info.duration_after_vad < 0.7 * info.duration
        # faster-whisper reports the VadOptions it used: the one given, or made from the dict
        assert (
            info.vad_options is given
            if not isinstance(given, dict)
            else info.vad_options == ckw.VadOptions(min_silence_duration_ms=1000)
        )
    assert rows[0][2] > 3.5 and "ask not what your country" in rows[0][4]  # on the recording's timeline


def test_vad_filter_is_ignored_as_faster_whisper_ignores_it(model, gaps):
    # with clip_timestamps (faster-whisper: "vad_filter will be ignored if clip_timestamps is used")
    _, info = model.transcribe(gaps, vad_filter=True, vad_parameters={"threshold": 0.6}, clip_timestamps="4,10")
    assert info.duration_after_vad == info.duration and info.vad_options == {"threshold": 0.6}
    # parameters without the filter: reported as given, nothing filtered
    segments, info = model.transcribe(gaps, vad_parameters={"threshold": 0.6})
    assert info.duration_after_vad == info.duration and info.vad_options == {"threshold": 0.6}
    segments.close()
    _, info = model.transcribe(gaps, vad_filter=True)
    assert info.vad_options == ckw.VadOptions() and info.duration_after_vad < info.duration


def test_vad_filter_progress_counts_the_speech(model, gaps, capsys):
    segments, info = model.transcribe(gaps, vad_filter=True, log_progress=True, beam_size=1)
    list(segments)
    progress = capsys.readouterr().err
    assert f"| 0/{info.duration_after_vad} [" in progress and "100%" in progress  # faster-whisper's bar total
