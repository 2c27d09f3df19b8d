"""openai-whisper's results for the e2e tests: computed by build actions, read by the tests.

A reference set is a list of cases per variant, each one run of the oracle
(models/whisper/reference/openai_reference.py) on one clip of @test_audio with its options. A
build action (references.bzl's openai_reference, running make_references.py) computes a set, or
a part of it, and writes JSON; every test that compares with the set lists it in its data,
takes its cases from here and looks their results up by id (`load`). So each run happens once
per build however many tests, shards and ISAs compare with it, and the cache keeps it while the
oracle, the weights, the audio and the pinned packages (requirements_lock.txt) stay the same.

Nothing here imports torch, whisper or the runtime.
"""

import dataclasses
import glob
import json
import os

from tools.testing import audio_manifest
from tools.testing.joined_audio import librispeech_joined, write_wav

TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
SONNETS = "long/shakespeare_sonnets_I-III_concat.flac"  # 159 s
MICHAEL = "formats/michaelandsickmichael.wav"
JOINED = "librispeech joined to 75 s"  # not a file: joined_wav() writes it
JOINED_SECONDS = 75
PROMPT = "Shakespeare's sonnets and LibriSpeech: Lucius, Heaven, the Hebrides."
MULTILINGUAL = "multilingual"
GERMAN = ["fleurs-de-000.ogg", "fleurs-de-001.ogg", "test_de.wav"]
SUFFIX = ".openai.json"  # the build actions' outputs; `load` finds them by it


@dataclasses.dataclass
class Case:
    """One oracle run. kind: "window" (decode_window: the first 30 s window, temperature 0,
    without timestamps), "transcribe" (transcribe_recording: whisper.transcribe and its decode
    calls), "transcribe_greedy" (the same; where a window fell back to sampling, again at
    temperature 0 alone, so both sides can be compared everywhere) or "language"
    (detect_language). clip: a path in @test_audio, or JOINED."""

    id: str
    kind: str
    clip: str
    options: dict = dataclasses.field(default_factory=dict)


# Long-form cases (longform_openai_test.py): name -> (variant, clip, options besides the
# temperature schedule and language detection).
LONGFORM = {
    "sonnets": ("tiny", SONNETS, {}),
    "sonnets_base": ("base", SONNETS, {}),
    "joined": ("tiny", JOINED, {}),
    "joined_base": ("base", JOINED, {}),
    "joined_no_condition": ("tiny", JOINED, {"condition_on_previous_text": False}),
    "joined_prompt": ("tiny", JOINED, {"initial_prompt": PROMPT}),
    "michael": ("tiny", MICHAEL, {}),
    "jfk": ("base", "jfk.wav", {}),  # language detected: base is multilingual
}


def shared_clips(audio_root: str) -> list[str]:
    """jfk.wav and every LibriSpeech clip of MANIFEST.tsv, as paths in @test_audio (audio_root)."""
    names = [row["file"] for row in audio_manifest.rows(os.path.join(audio_root, "librispeech"))]
    return ["jfk.wav"] + [f"librispeech/{n}" for n in names]


def multilingual_clips(audio_root: str) -> list[str]:
    """Every clip of multilingual/ (file names)."""
    return sorted(f for f in os.listdir(os.path.join(audio_root, MULTILINGUAL)) if not f.endswith(".tsv"))


# The clips of the beam and word-timestamp sets: tiny takes every one, base every third (jfk.wav
# first) and not the sonnets. Beams and word timing run the same code at every width, and base's
# greedy tokens are compared on every clip (token_equality_base_test); its third checks its own
# widths and alignment heads at half of what those two sets cost CI in full.
SUBSET_STRIDE = {"tiny": 1, "base": 3}


def _subset(variant, clips):
    return clips[:: SUBSET_STRIDE[variant]]


def _greedy(variant, audio_root):
    """token_equality_test, greedy_openai_test: every shared clip; translating jfk.wav (base)."""
    cases = [Case(clip, "window", clip, {"language": "en"}) for clip in shared_clips(audio_root)]
    if variant == "base":
        cases.append(Case("translate jfk.wav", "window", "jfk.wav", {"language": "en", "task": "translate"}))
    return cases


# beam_openai_test: beam 5 on the shared clips (_subset); with patience 2 and with a length penalty
# on the first three.
BEAM_EXTRA = [{"patience": 2.0}, {"length_penalty": 0.6}]
BEAM_EXTRA_CLIPS = 3


def _beam(variant, audio_root):
    clips = _subset(variant, shared_clips(audio_root))
    runs = [(clip, {}) for clip in clips] + [(c, extra) for c in clips[:BEAM_EXTRA_CLIPS] for extra in BEAM_EXTRA]
    return [
        Case(
            f"{clip} beam 5" + "".join(f" {k} {v}" for k, v in extra.items()),
            "window",
            clip,
            {"language": "en", "beam_size": 5, **extra},
        )
        for clip, extra in runs
    ]


def _word_timestamps(variant, audio_root):
    """word_timestamps_openai_test: the LibriSpeech clips (_subset) and, on tiny, the sonnets."""
    clips = _subset(variant, [c for c in shared_clips(audio_root) if c.startswith("librispeech/")])
    clips += [SONNETS] if SUBSET_STRIDE[variant] == 1 else []
    options = {"temperature": TEMPERATURES, "language": "en", "word_timestamps": True}
    return [Case(clip, "transcribe_greedy", clip, options) for clip in clips]


def _longform(variant, audio_root):
    return [
        Case(name, "transcribe", clip, {"temperature": TEMPERATURES, "language": None, **options})
        for name, (v, clip, options) in LONGFORM.items()
        if v == variant
    ]


def _longform_beam(variant, audio_root):
    """longform_beam_openai_test: openai-whisper's CLI defaults (beam 5, best of 5) on the sonnets."""
    options = {"temperature": TEMPERATURES, "beam_size": 5, "best_of": 5, "language": "en"}
    return [Case("sonnets beam 5", "transcribe", SONNETS, options)]


def _language(variant, audio_root):
    """language_openai_test: detection on every multilingual clip, translation of the German ones."""
    cases = [Case(f"detect {clip}", "language", f"{MULTILINGUAL}/{clip}") for clip in multilingual_clips(audio_root)]
    options = {"task": "translate", "temperature": TEMPERATURES, "language": None}
    return cases + [Case(f"translate {clip}", "transcribe", f"{MULTILINGUAL}/{clip}", options) for clip in GERMAN]


SETS = {
    "greedy": _greedy,
    "beam": _beam,
    "word_timestamps": _word_timestamps,
    "longform": _longform,
    "longform_beam": _longform_beam,
    "language": _language,
}


def cases(set_name: str, variant: str, audio_root: str) -> list[Case]:
    """The cases of a set for a variant, in a fixed order (build actions take every n-th)."""
    return SETS[set_name](variant, audio_root)


def joined_wav(audio_root: str, directory: str) -> str:
    """The LibriSpeech clips joined to 75 s (tools/testing/joined_audio.py), written to
    `directory` as a 16-bit WAV file: both sides read this file."""
    path = os.path.join(directory, "librispeech_joined.wav")
    write_wav(path, librispeech_joined(os.path.join(audio_root, "librispeech"), JOINED_SECONDS))
    return path


class References(dict):
    """Results by case id; a missing case names the target to add to the test's data."""

    def __init__(self, set_name, variant, results):
        super().__init__(results)
        self.set_name, self.variant = set_name, variant

    def __missing__(self, case_id):
        raise KeyError(
            f"openai-whisper's {self.set_name} reference for {self.variant} has no case {case_id!r} in "
            f"this test's data: add its openai_reference target (tests/e2e/BUILD.bazel) to data"
        )


def load(set_name: str, variant: str) -> References:
    """The results of `set_name` for `variant` in this test's runfiles, every part merged. The
    build actions' JSON files sit in the runfiles beside this module."""
    results = {}
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*" + SUFFIX))):
        with open(path, encoding="utf-8") as f:
            part = json.load(f)
        if part["set"] == set_name and part["variant"] == variant:
            results.update(part["results"])
    return References(set_name, variant, results)
