"""//tools:transcribe_corpus on a real two-node Ray cluster on this machine (one worker each),
whose nodes start outside the source tree, tiny.en:

- the shared LibriSpeech clips plus one bad file: every output equals //tools:transcribe's for
  the same file, the bad file has an error record, the exit status says a file failed;
- the workers run the ckw wheel that the job shipped: the libraries a worker process maps come
  from Ray's copy of the wheel's package, its folder is the job's empty working_dir;
- a worker process killed (by pid) while it transcribes: the file is retried on another actor,
  every file is written exactly once, outputs equal the clean run's;
- one actor with --streams=3 (three files at once in one engine) writes the same outputs;
- a rerun after the batch does no work; after a stopped (SIGTERM) and a killed (SIGKILL)
  batch, each rerun does only the rest;
- without --address a local Ray instance is started (bf16 too: weights derived by the driver);
  Ray missing, an unreachable address and
  misused flags are one-line errors.
"""

import collections
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import soundfile
from absl import flags

from ckw import runfiles
from ckw.cli import transcribe, transcribe_corpus
from ckw.corpus.journal import JOURNAL_NAME
from ckw.corpus.ray_test_cluster import RayTestCluster, free_port

FLAGS = flags.FLAGS
CLI = runfiles.locate("ckw", "ckw/cli/transcribe_corpus")
LIBRISPEECH = os.path.dirname(runfiles.locate("test_audio", "librispeech/MANIFEST.tsv"))
CLIPS = sorted(n for n in os.listdir(LIBRISPEECH) if n.endswith((".flac", ".wav")))
BAD = "bad.wav"
BATCH_SECONDS = 900


@pytest.fixture(scope="module")
def cluster():
    c = RayTestCluster(cpus=1, nodes=2).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    """The LibriSpeech clips (links, no copies) and a WAV cut off after its header."""
    d = tmp_path_factory.mktemp("corpus")
    for name in CLIPS:
        os.symlink(os.path.join(LIBRISPEECH, name), d / name)
    with open(os.path.join(LIBRISPEECH, next(n for n in CLIPS if n.endswith(".wav"))), "rb") as f:
        (d / BAD).write_bytes(f.read(60))
    return d


@pytest.fixture(scope="module")
def long_wav(tmp_path_factory):
    """About 60 s of speech (LibriSpeech clips joined): several windows, so a kill lands mid-file."""
    pieces, seconds = [], 0.0
    for name in CLIPS:
        samples, rate = soundfile.read(os.path.join(LIBRISPEECH, name), dtype="float32")
        assert rate == 16000
        pieces.append(samples)
        seconds += len(samples) / rate
        if seconds >= 60:
            break
    path = tmp_path_factory.mktemp("long") / "long.wav"
    soundfile.write(path, np.concatenate(pieces), 16000, subtype="PCM_16")
    return path


def single_file_cli(tmp_path, wav, *flags) -> str:
    """//tools:transcribe's output for one file (its main, in this process)."""
    out = tmp_path / "single.txt"
    FLAGS.unparse_flags()
    FLAGS(["transcribe", f"--wav={wav}", f"--output={out}", *flags])
    assert transcribe.main(["transcribe"]) == 0
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def reference(tmp_path_factory, corpus_dir, long_wav):
    tmp = tmp_path_factory.mktemp("reference")
    texts = {name: single_file_cli(tmp, corpus_dir / name) for name in CLIPS}
    texts["long.wav"] = single_file_cli(tmp, long_wav)
    return texts


def corpus(cluster, *args, wait=True):
    cmd = [CLI, *args] + ([f"--address={cluster.address}"] if cluster else [])
    env = cluster.env if cluster else dict(os.environ, HOME=os.environ["TEST_TMPDIR"])  # Ray's token goes to HOME
    if not wait:
        return subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, env=env, stderr=subprocess.PIPE, text=True, timeout=BATCH_SECONDS, check=False)


def records(out_dir):
    """The journal's file records (after the batch header); a line still being written is left out."""
    with open(out_dir / JOURNAL_NAME, encoding="utf-8") as f:
        lines = f.read().split("\n")[:-1]
    return [json.loads(line) for line in lines][1:]


def done_counts(recs):
    return collections.Counter(os.path.basename(r["file"]) for r in recs if r["status"] == "done")


def wait_for(predicate, what, proc, seconds=BATCH_SECONDS):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        assert proc.poll() is None, f"the batch ended before {what}: {proc.stderr.read()}"
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def clean_run(cluster, corpus_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("clean")
    result = corpus(cluster, f"--input={corpus_dir}", f"--output_dir={out}", "--workers=2")
    return out, result


def test_outputs_equal_the_single_file_cli_and_the_bad_file_is_an_error(clean_run, reference):
    out, result = clean_run
    assert result.returncode == 1, result.stderr
    for name in CLIPS:
        assert (out / f"{name}.txt").read_text(encoding="utf-8") == reference[name], name
    assert not (out / f"{BAD}.txt").exists()
    recs = records(out)
    assert done_counts(recs) == {name: 1 for name in CLIPS}
    (bad,) = [r for r in recs if r["status"] == "failed"]
    assert bad["file"].endswith(BAD) and bad["file"] in bad["error"] and bad["audio_seconds"] is None
    done = [r for r in recs if r["status"] == "done"]
    assert len({r["worker"] for r in done}) == 2  # both actors worked
    assert abs(sum(r["audio_seconds"] for r in done) - 284.05) < 0.5  # MANIFEST.tsv's seconds
    assert "2 workers x 1 thread (tiny.en, fp32) on 2 Ray nodes" in result.stderr
    assert f"{len(CLIPS)} transcribed, 1 failed, 0 finished before" in result.stderr
    assert f"failed: {bad['error']}" in result.stderr
    assert "audio s/s, ETA " in result.stderr


def test_streams_in_one_engine_write_the_same_outputs(cluster, corpus_dir, reference, tmp_path):
    out = tmp_path / "streams"
    result = corpus(cluster, f"--input={corpus_dir}", f"--output_dir={out}", "--workers=1", "--streams=3")
    assert result.returncode == 1, result.stderr  # the bad file
    assert "1 worker x 1 thread x 3 streams (tiny.en, fp32)" in result.stderr
    for name in CLIPS:
        assert (out / f"{name}.txt").read_text(encoding="utf-8") == reference[name], name
    recs = records(out)
    assert done_counts(recs) == {name: 1 for name in CLIPS}
    assert [r["status"] for r in recs[:3]] == ["started"] * 3  # three in flight before the first ends


def test_largest_file_goes_first(clean_run, corpus_dir):
    started = [r["file"] for r in records(clean_run[0]) if r["status"] == "started"]
    sizes = [os.path.getsize(path) for path in started]
    assert sizes == sorted(sizes, reverse=True)


def test_rerun_retries_only_the_failed_file(cluster, clean_run, corpus_dir):
    out, _ = clean_run
    before = len(records(out))
    result = corpus(cluster, f"--input={corpus_dir}", f"--output_dir={out}", "--workers=2")
    assert result.returncode == 1, result.stderr
    new = records(out)[before:]
    assert {os.path.basename(r["file"]) for r in new} == {BAD}
    assert [r["status"] for r in new] == ["started", "failed"]
    assert f"1 files to transcribe, {len(CLIPS)} finished before" in result.stderr


def test_killed_worker_file_is_retried_and_written_once(cluster, clean_run, corpus_dir, long_wav, reference, tmp_path):
    listing = tmp_path / "batch.txt"  # a list input: the long file and four clips, all outside the list's folder
    listing.write_text("\n".join([str(long_wav)] + [str(corpus_dir / n) for n in CLIPS[:4]]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    proc = corpus(cluster, f"--input={listing}", f"--output_dir={out}", "--workers=2", wait=False)

    def long_started():
        if (out / JOURNAL_NAME).exists():
            return next((r for r in records(out) if r["file"] == str(long_wav) and r["status"] == "started"), None)
        return None

    pid = int(wait_for(long_started, "long.wav to start", proc)["worker"].rsplit(":", 1)[1])

    def transcribing():
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"CorpusActor.transcribe" in f.read()  # Ray's process title while the method runs

    wait_for(transcribing, f"worker {pid} to run transcribe", proc)
    assert_runs_the_shipped_wheel(pid)
    os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=BATCH_SECONDS)
    assert proc.returncode == 0, err
    recs = records(out)
    assert done_counts(recs) == {"long.wav": 1, **{n: 1 for n in CLIPS[:4]}}
    long_recs = [r for r in recs if r["file"] == str(long_wav)]
    assert [r["status"] for r in long_recs] == ["started", "worker_died", "started", "done"]
    assert long_recs[1]["worker"].endswith(f":{pid}") and not long_recs[3]["worker"].endswith(f":{pid}")
    assert "retrying it on another worker" in err
    for path, name in [(long_wav, "long.wav")] + [(corpus_dir / n, n) for n in CLIPS[:4]]:
        relpath = str(path).lstrip("/") + ".txt"  # outside the list's folder: its absolute path below --output_dir
        assert (out / relpath).read_text(encoding="utf-8") == reference[name]

    journal_before = (out / JOURNAL_NAME).read_bytes()
    again = corpus(cluster, f"--input={listing}", f"--output_dir={out}")
    assert again.returncode == 0 and "all 5 files are transcribed already" in again.stderr
    assert (out / JOURNAL_NAME).read_bytes() == journal_before  # no work, not even a record


def assert_runs_the_shipped_wheel(pid):
    """The worker's engine libraries are mapped from Ray's extracted copy of the job's py_module
    (the wheel's ckw package), and the worker runs in the job's working_dir, not in this checkout."""
    with open(f"/proc/{pid}/maps", encoding="utf-8") as f:
        libraries = {line.split()[-1] for line in f if "/libckw_" in line}
    assert libraries, f"worker {pid} maps no ckw library"
    for path in libraries:
        assert "/runtime_resources/py_modules_files/" in path and "/ckw/_libs/models/whisper/" in path, path
        assert not path.startswith(runfiles.runfiles_root()), path
    cwd = os.readlink(f"/proc/{pid}/cwd")
    assert "/runtime_resources/working_dir_files/" in cwd and not os.listdir(cwd), cwd
    with open(f"/proc/{pid}/environ", "rb") as f:
        environ = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    assert runfiles.runfiles_root().encode() not in environ.get(b"PYTHONPATH", b""), environ.get(b"PYTHONPATH")


def test_stopped_and_killed_batches_resume_with_only_the_rest(cluster, corpus_dir, reference, tmp_path):
    clips = CLIPS[::2]  # 21 clips: three runs of a few files each
    listing = tmp_path / "clips.txt"
    listing.write_text("\n".join(clips) + "\n", encoding="utf-8")
    for name in clips:
        os.symlink(corpus_dir / name, tmp_path / name)
    out = tmp_path / "out"
    args = (f"--input={listing}", f"--output_dir={out}", "--workers=2")
    finished, count, mtimes = set(), 0, {}

    def three_more():
        return (out / JOURNAL_NAME).exists() and len(done_counts(records(out))) >= len(finished) + 3

    for stop in (signal.SIGTERM, signal.SIGKILL, None):
        proc = corpus(cluster, *args, wait=False)
        if stop is not None:
            wait_for(three_more, "three more files", proc)
            proc.send_signal(stop)
        _, err = proc.communicate(timeout=BATCH_SECONDS)
        if stop == signal.SIGTERM:  # like Ctrl-C: the summary, and how to go on
            assert proc.returncode == 130 and "interrupted; rerun the same command" in err, err
        elif stop == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
        else:
            assert proc.returncode == 0, err
        run = records(out)[count:]
        assert not {os.path.basename(r["file"]) for r in run} & finished  # only the rest: nothing finished starts
        for name in finished:
            assert os.stat(out / f"{name}.txt").st_mtime_ns == mtimes[name]  # nor is rewritten
        finished, count = set(done_counts(records(out))), len(records(out))
        mtimes = {n: os.stat(out / f"{n}.txt").st_mtime_ns for n in finished}
    assert done_counts(records(out)) == {n: 1 for n in clips}
    for name in clips:
        assert (out / f"{name}.txt").read_text(encoding="utf-8") == reference[name]
    assert not [p for p in out.iterdir() if p.name.endswith(".partial")]


def test_without_address_a_local_ray_instance_runs_the_batch(corpus_dir, tmp_path):
    shortest = sorted(CLIPS, key=lambda n: os.path.getsize(corpus_dir / n))[:2]
    listing = tmp_path / "two.txt"
    listing.write_text("\n".join(str(corpus_dir / n) for n in shortest) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = corpus(None, f"--input={listing}", f"--output_dir={out}", "--output_format=srt")
    assert result.returncode == 0, result.stderr
    assert "on 1 Ray node" in result.stderr
    assert done_counts(records(out)) == {n: 1 for n in shortest}


def test_bf16_weights_are_derived_by_the_driver(corpus_dir, tmp_path):
    """The driver derives the bf16 weights into its cache once; the workers read them there."""
    shortest = min(CLIPS, key=lambda n: os.path.getsize(corpus_dir / n))
    out = tmp_path / "out"
    result = corpus(None, f"--input={corpus_dir / shortest}", f"--output_dir={out}", "--precision=bf16")
    assert result.returncode == 0, result.stderr
    assert "(tiny.en, bf16) on 1 Ray node" in result.stderr and "deriving the bf16 weights" in result.stderr
    expected = single_file_cli(tmp_path, corpus_dir / shortest, "--precision=bf16")
    assert (out / f"{shortest}.txt").read_text(encoding="utf-8") == expected


def run_in_process(capsys, *args):
    FLAGS.unparse_flags()
    FLAGS(["transcribe_corpus", *args])
    rc = transcribe_corpus.main(["transcribe_corpus"])
    return rc, capsys.readouterr().err


def one_error_line(err):
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def test_ray_missing_is_one_line(capsys, monkeypatch, corpus_dir, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    rc, err = run_in_process(capsys, f"--input={corpus_dir}", f"--output_dir={tmp_path / 'out'}")
    assert rc == 2
    assert "Ray is not installed" in one_error_line(err)
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize(
    "args,message",
    [
        (["--address=127.0.0.1:{port}"], "no Ray cluster answers there"),
        (["--address=nohost"], "not HOST:PORT"),
        (["--wav=x.wav"], "--wav belongs to //tools:transcribe"),
        (["--threads_per_worker=0"], "--threads_per_worker=0 must be at least 1"),
        (["--streams=0"], "--streams=0 must be at least 1"),
        (["--input=/nonexistent"], "--input=/nonexistent: no such folder or list file"),
    ],
)
def test_errors_are_one_line(capsys, corpus_dir, tmp_path, args, message):
    args = [a.format(port=free_port()) for a in args]
    rc, err = run_in_process(capsys, f"--input={corpus_dir}", f"--output_dir={tmp_path / 'out'}", *args)
    assert rc == 2
    assert message in one_error_line(err)
