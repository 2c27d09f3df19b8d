"""The shared test clips the token-equality tests run over, and Bazel test sharding."""

import os

from runtime import runfiles
from tests.e2e import references


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
    return items[int(os.environ.get("TEST_SHARD_INDEX", "0"))::shards]


def manifest(folder: str) -> list[list[str]]:
    """Rows of @test_audio//:<folder>'s MANIFEST.tsv with absolute paths: path, seconds, language,
    reference, ..."""
    root = runfiles.locate("test_audio", folder)
    with open(os.path.join(root, "MANIFEST.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:] if line.strip()]
    return [[os.path.join(root, r[0]), *r[1:]] for r in rows]
