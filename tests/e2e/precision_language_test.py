"""The precision gate's language half: a multilingual model's narrower build (bf16, int8) detects
the same language as its fp32 build on every shared multilingual clip. Generated only for
multilingual variants (an English-only model detects no language). The variant comes from
CKW_VARIANT and the narrower builds from CKW_PRECISIONS (one Bazel target per variant, fp32 run once)."""

import functools
import os
import sys

import pytest

from ckw.runtime.engine import Engine
from tests.e2e.clips import manifest

VARIANT = os.environ["CKW_VARIANT"]
PRECISIONS = os.environ["CKW_PRECISIONS"].split(",")


@functools.lru_cache(maxsize=None)
def detected_languages(precision: str, paths: tuple) -> dict[str, str]:
    with Engine.from_runfiles(VARIANT, precision=precision) as engine:
        assert engine.tokenizer.is_multilingual, f"{VARIANT} is English-only: this test is for multilingual variants"
        found = {}
        for path in paths:
            segments, info = engine.transcribe(path, temperature=0.0)
            segments.close()  # the language is known before any segment is decoded
            found[path] = info.language
        return found


@pytest.mark.parametrize("precision", PRECISIONS)
def test_language_detection_agrees_with_fp32(precision):
    clips = manifest("multilingual")
    assert len(clips) >= 15
    paths = tuple(c["path"] for c in clips)
    fp32, narrow = detected_languages("fp32", paths), detected_languages(precision, paths)
    rows = [(c["file"], c["language"], fp32[c["path"]], narrow[c["path"]]) for c in clips]
    for name, lang, ours, other in rows:
        print(f"{VARIANT} {name:24} labelled {lang:3} fp32 {ours:3} {precision} {other}")
    differ = [r for r in rows if r[2] != r[3]]
    print(
        f"{VARIANT}: language detection, {precision} agrees with fp32 on {len(rows) - len(differ)} of {len(rows)} "
        "shared multilingual clips"
    )
    assert not differ, differ


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-s"]))
