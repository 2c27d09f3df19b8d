"""The shared test audio is wired into the build hermetically (declared as data, not read by path)."""

import os
import wave

import pytest


def _runfile(rel):
    return os.path.join(os.environ["TEST_SRCDIR"], "test_audio", rel)


def test_jfk_is_the_default_sample():
    with wave.open(_runfile("jfk.wav"), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 16000)
        assert 10.5 < w.getnframes() / w.getframerate() < 11.5


@pytest.mark.parametrize("folder", ["librispeech", "long", "formats", "multilingual"])
def test_every_folder_has_its_manifest_and_files(folder):
    with open(_runfile(f"{folder}/MANIFEST.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:] if line.strip()]
    assert rows, f"{folder}/MANIFEST.tsv lists no files"
    for row in rows:
        assert os.path.isfile(_runfile(f"{folder}/{row[0]}")), f"{folder}/{row[0]} is listed but not in the runfiles"


def test_holdout_is_not_visible():
    assert not os.path.exists(_runfile("holdout"))
