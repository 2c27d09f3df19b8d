"""The shared test clips the token-equality tests run over, and Bazel test sharding."""

import os

from runtime import runfiles


def shared_clips() -> list[str]:
    """jfk.wav and every LibriSpeech clip of @test_audio's MANIFEST.tsv, as @test_audio paths."""
    root = runfiles.locate("test_audio", "")
    with open(os.path.join(root, "librispeech", "MANIFEST.tsv"), encoding="utf-8") as f:
        names = [line.split("\t")[0] for line in f.read().splitlines()[1:] if line.strip()]
    return ["jfk.wav"] + [f"librispeech/{n}" for n in names]


def shard(items: list) -> list:
    """This Bazel test shard's share of `items`: every n-th one."""
    shards = int(os.environ.get("TEST_TOTAL_SHARDS", "1"))
    if shards > 1:
        open(os.environ["TEST_SHARD_STATUS_FILE"], "a").close()
    return items[int(os.environ.get("TEST_SHARD_INDEX", "0"))::shards]
