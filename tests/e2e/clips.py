"""The shared test clips the token-equality tests run over, and Bazel test sharding."""

import os

from ckw import runfiles
from tests.e2e import references
from tools.testing import audio_manifest


def audio_root() -> str:
    """@test_audio in this test's runfiles."""
    return runfiles.locate("test_audio", "")


def shared_clips() -> list[str]:
    """jfk.wav and every LibriSpeech clip of @test_audio's MANIFEST.tsv, as @test_audio paths."""
    return references.shared_clips(audio_root())


def shard(items: list) -> list:
    """This Bazel test shard's share of `items`: every n-th one."""
    shards = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    if shards > 1:
        open(os.environ["TEST_SHARD_STATUS_FILE"], "a").close()
    return items[int(os.environ.get("TEST_SHARD_INDEX", "0")) :: shards]


def manifest(folder: str) -> list[dict[str, str]]:
    """Rows of @test_audio//:<folder>'s MANIFEST.tsv (tools/testing/audio_manifest.py): path,
    seconds, language, transcript, ..."""
    return audio_manifest.rows(runfiles.locate("test_audio", folder))


# English recordings whose MANIFEST.tsv transcript is not one reference for the audio: the stereo
# file's two channels are two LibriSpeech utterances spoken at once (its transcript lists both).
NOT_ONE_REFERENCE = ("stereo_diarization.wav",)


def english_references() -> list[tuple[str, str]]:
    """(path, reference transcript) of every shared English clip and recording with a reference:
    LibriSpeech, the long recording, the Harvard sentences and the spontaneous speech of formats/,
    FLEURS English."""
    rows = [r for folder in ("librispeech", "long", "formats", "multilingual") for r in manifest(folder)]
    return [(r["path"], r["transcript"]) for r in rows if r["language"] == "en" and r["file"] not in NOT_ONE_REFERENCE]
