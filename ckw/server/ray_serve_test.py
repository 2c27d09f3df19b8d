"""//tools:serve --ray on a real local Ray cluster (ckw/corpus/ray_test_cluster.py), called with
the openai SDK: two engine replicas of tiny.en behind the unchanged FastAPI ingress.

- Requests spread over both replicas (the X-Ckw-Replica header names the engine that answered),
  and every answer equals the CLI's for the same file.
- A replica killed (SIGKILL, as a crash or the OOM killer would) while its requests decode: each
  of them is answered by the other, exactly as the CLI would answer; a streaming client sees every
  segment once, in order, though the request ran twice. Serve then starts a new replica in its
  place and requests spread over two again.
"""

import concurrent.futures
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from ckw import runfiles
from ckw.corpus.ray_test_cluster import RayTestCluster
from ckw.server.running import KEY, Server

CLI = runfiles.locate("ckw", "ckw/cli/transcribe")
LONG = runfiles.locate("test_audio", "long/shakespeare_sonnets_I-III_concat.flac")
CLIPS_DIR = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
CLIPS = sorted(os.path.join(CLIPS_DIR, f) for f in os.listdir(CLIPS_DIR) if f.endswith(".flac"))[:6]
REPLICA = "x-ckw-replica"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    cluster = RayTestCluster(cpus=4).start()
    try:
        s = Server(
            tmp_path_factory.mktemp("serve"),
            "--ray",
            f"--address={cluster.address}",
            "--replicas=2",
            "--threads=1",
            "--model=tiny.en",
            f"--api_key={KEY}",
            env=cluster.env,
            timeout=300,
        )
        yield s
        s.stop()
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """The CLI's json result for a file (the CLI's default decoding, as the server's)."""
    cache = {}

    def run(path):
        if path not in cache:
            out = tmp_path_factory.mktemp("cli")
            subprocess.run(
                [CLI, "--wav", path, "--output_format=json", f"--output_dir={out}", "--noverbose"],
                check=True,
                capture_output=True,
            )
            stem = os.path.splitext(os.path.basename(path))[0]
            cache[path] = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
        return cache[path]

    return run


def transcribe_text(server, path) -> tuple[str, str]:
    """(text, the replica that answered)."""
    with open(path, "rb") as f:
        raw = server.client().audio.transcriptions.with_raw_response.create(
            file=(os.path.basename(path), f.read()), model="tiny.en"
        )
    return raw.parse().text, raw.headers[REPLICA]


def replica_pid(replica: str) -> int:
    return int(replica.rpartition(":")[2])


def test_requests_spread_over_both_replicas_and_equal_the_cli(server, cli):
    with concurrent.futures.ThreadPoolExecutor(len(CLIPS)) as pool:
        answers = list(pool.map(lambda p: transcribe_text(server, p), CLIPS))
    assert [text for text, _ in answers] == [cli(p)["text"] for p in CLIPS]
    assert len({replica for _, replica in answers}) == 2, answers


class Streamed:
    """A streaming request of LONG in its own thread: its replica (once it decodes) and events."""

    def __init__(self, server):
        self.replica, self.deltas, self.done, self.error = None, [], None, None
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(server,), daemon=True)
        self.thread.start()

    def _run(self, server) -> None:
        try:
            with open(LONG, "rb") as f:
                with server.client().audio.transcriptions.with_streaming_response.create(
                    file=("long.flac", f.read()), model="tiny.en", stream=True
                ) as response:
                    self.replica = response.headers[REPLICA]
                    for line in response.iter_lines():
                        if line.startswith("data: "):
                            event = json.loads(line[len("data: ") :])
                            if event.get("type") == "transcript.text.delta":
                                self.deltas.append(event["delta"])
                                self.started.set()
                            else:
                                self.done = event
        except Exception as e:  # noqa: BLE001 (reported by the test)
            self.error = e
        finally:
            self.started.set()


def test_a_killed_replicas_requests_are_answered_by_the_other(server, cli):
    want = cli(LONG)
    streams = [Streamed(server) for _ in range(4)]

    def timed():
        return transcribe_text(server, LONG) + (time.monotonic(),)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        plain = [pool.submit(timed) for _ in range(2)]
        for s in streams:
            assert s.started.wait(300) and s.error is None, s.error
        by_replica = {}
        for s in streams:
            by_replica.setdefault(s.replica, []).append(s)
        assert len(by_replica) == 2, f"the four requests went to {list(by_replica)}"
        victim = sorted(by_replica)[0]
        assert all(not s.done for s in by_replica[victim]), "the victim finished before it was killed"
        os.kill(replica_pid(victim), signal.SIGKILL)
        killed = time.monotonic()
        for s in streams:
            s.thread.join(600)
            assert s.error is None, s.error
            assert s.deltas == [seg["text"] for seg in want["segments"]], s.replica  # each segment once
            assert s.done == {"type": "transcript.text.done", "text": want["text"]}
        for f in plain:
            text, replica, answered = f.result(timeout=600)
            assert text == want["text"] and (replica != victim or answered < killed)
    # Serve replaces the dead replica: requests spread over two live ones again.
    deadline = time.monotonic() + 240
    while True:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            replicas = {r for _, r in pool.map(lambda p: transcribe_text(server, p), CLIPS[:4])}
        if len(replicas) == 2 and victim not in replicas:
            break
        assert time.monotonic() < deadline, f"no second replica in place of {victim}: {replicas}"
        time.sleep(2)
