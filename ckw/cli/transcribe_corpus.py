"""Transcribe a corpus on Ray: many files, one machine or a cluster, resumable.

    ./bazelw run //tools:transcribe_corpus -- --input DIR_OR_LIST --output_dir DIR \\
        [--model NAME | --model_dir DIR] [--precision fp32|bf16] [--output_format txt|json|srt|vtt|tsv] [--workers N] \\
        [--threads_per_worker T] [--streams S] [--address HOST:PORT] [every decoding flag of //tools:transcribe]

Without --address a local Ray instance sized to this machine is started (and stopped at the
end); with it the batch joins that running cluster. Each Ray actor holds one engine and up to
--streams files at once (ckw/runtime/streams.py: their decode steps shared); files go to actors with
room largest first; outputs land in --output_dir beside journal.jsonl, which makes a
rerun skip finished files and retry failed ones (ckw/corpus/journal.py).

Exit status: 0 every file transcribed; 1 some files failed (listed at the end); 2 the batch
could not run (flags, Ray, the cluster, the journal); 130 interrupted (rerun to finish).
"""

import dataclasses
import os
import signal
import sys
import tempfile

from absl import app, flags

# The single-file CLI: its --model, --model_dir, --precision, --output_format and decoding flags are ours too.
from ckw import runfiles
from ckw.checkpoints.errors import CheckpointError
from ckw.cli import transcribe
from ckw.corpus import actor, cluster, inputs, journal, progress, scheduler, shipping
from ckw.runtime.errors import EngineError
from ckw.runtime.options import options_from

FLAGS = flags.FLAGS
flags.DEFINE_string(
    "input",
    None,
    "A folder (walked recursively for audio files), a text file listing one audio path "
    "a line (relative paths: to the list's folder), or one audio file. Relative to where you ran the "
    "command.",
)
# --output_dir is the single-file CLI's (same meaning: where outputs go), but required here; a batch
# writes one format (the CLI's default, all, is several files per input).
FLAGS.set_default("output_format", "txt")
flags.DEFINE_integer(
    "workers", None, "Ray actors, each with one engine (default: the cluster's CPUs divided by --threads_per_worker)."
)
flags.DEFINE_integer("threads_per_worker", 1, "Threads of each actor's engine (the Ray CPUs each actor reserves).")
flags.DEFINE_integer(
    "streams",
    1,
    "Files each actor transcribes at once in its one engine, their decode steps shared "
    "(ckw/runtime/streams.py). 1: one file at a time, which is as fast on 2 cores (docs/multi-stream.md).",
)
flags.DEFINE_string(
    "address",
    None,
    "Join this running Ray cluster (the head's HOST:PORT, or auto); default: start a "
    "local Ray instance sized to this machine.",
)

USAGE_ERROR, SOME_FAILED, INTERRUPTED = 2, 1, 130
# //tools:transcribe's: a batch has no one file to name, and --threads_per_worker sizes the actors.
SINGLE_FILE_FLAGS = ("wav", "output", "verbose", "threads")


class UsageError(ValueError):
    pass


def _check_flags() -> None:
    for name in SINGLE_FILE_FLAGS:
        if FLAGS[name].present:
            raise UsageError(f"--{name} belongs to //tools:transcribe (one file); give --input and --output_dir")
    for name in ("input", "output_dir"):
        if not FLAGS[name].present or not getattr(FLAGS, name):
            raise UsageError(f"--{name} is required")
    if FLAGS.output_format == "all":
        raise UsageError("--output_format all: a batch writes one format; choose txt, vtt, srt, tsv or json")
    if FLAGS.threads_per_worker < 1:
        raise UsageError(f"--threads_per_worker={FLAGS.threads_per_worker} must be at least 1")
    if FLAGS.workers is not None and FLAGS.workers < 1:
        raise UsageError(f"--workers={FLAGS.workers} must be at least 1")
    if FLAGS.streams < 1:
        raise UsageError(f"--streams={FLAGS.streams} must be at least 1")


def _worker_count(ray) -> int:
    threads, cpus = FLAGS.threads_per_worker, cluster.cluster_cpus(ray)
    workers = FLAGS.workers or max(1, cpus // threads)
    if threads > cluster.largest_node_cpus(ray):
        raise UsageError(
            f"--threads_per_worker={threads}: no node of the cluster has that many CPUs (largest: "
            f"{cluster.largest_node_cpus(ray)}); lower it"
        )
    if workers * threads > cpus:
        raise UsageError(
            f"--workers={workers} x --threads_per_worker={threads} needs {workers * threads} CPUs; the "
            f"cluster has {cpus}: lower either, or add nodes"
        )
    return workers


def _stop_on_sigterm() -> None:
    """SIGTERM stops the batch like Ctrl-C: the journal keeps what finished."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def run() -> int:
    _check_flags()
    try:
        transcribe.check_model_flags()
    except transcribe.CliError as e:
        raise UsageError(str(e)) from None
    options = options_from(**transcribe.options_from_flags())
    output_dir = runfiles.user_path(FLAGS.output_dir)
    files = inputs.list_inputs(runfiles.user_path(FLAGS.input))
    address = FLAGS.address or os.environ.get("RAY_ADDRESS") or None  # Ray's own convention
    ray = cluster.import_ray()  # before anything is written: a missing Ray is an install problem
    if address:
        cluster.check_reachable(ray, address)
    batch = {
        "model": FLAGS.model,
        "model_dir": FLAGS.model_dir and runfiles.user_path(FLAGS.model_dir),
        "precision": FLAGS.precision,
        "output_format": FLAGS.output_format,
        "options": dataclasses.asdict(options),
    }
    book = journal.Journal(output_dir, batch)
    try:
        finished = book.finished()
        todo = [f for f in files if f.path not in finished]
        if not todo:
            print(
                f"transcribe_corpus: all {len(files)} files are transcribed already (journal {book.path}); "
                "nothing to do",
                file=sys.stderr,
            )
            return 0
        print(
            f"transcribe_corpus: {len(todo)} files to transcribe, {len(files) - len(todo)} finished before "
            f"(journal {book.path})",
            file=sys.stderr,
        )
        spec = transcribe.engine_spec()  # found and converted once, by the driver
        with tempfile.TemporaryDirectory(prefix="ckw-corpus-") as scratch:
            cluster.connect(ray, address, shipping.runtime_env(FLAGS.threads_per_worker, scratch))
            _stop_on_sigterm()  # after ray.init, which installs its own handler (exit without a summary)
            try:
                return _run_on_ray(ray, todo, len(files) - len(todo), spec, options, output_dir, book)
            finally:
                ray.shutdown()
    finally:
        book.close()


def _run_on_ray(ray, todo, skipped, spec, options, output_dir, book) -> int:
    workers = min(_worker_count(ray), len(todo))  # no engine loaded for nothing
    # By value: the workers import the engine from what shipping.py gave them, not from this checkout.
    ray.cloudpickle.register_pickle_by_value(actor)
    remote = ray.remote(actor.CorpusActor).options(
        num_cpus=FLAGS.threads_per_worker, max_restarts=-1, max_concurrency=FLAGS.streams
    )
    actors = [
        remote.remote(spec, dataclasses.asdict(options), FLAGS.output_format, FLAGS.streams) for _ in range(workers)
    ]
    threads, streams = FLAGS.threads_per_worker, FLAGS.streams
    shape = (
        f"{workers} worker{'s' * (workers != 1)} x {threads} thread{'s' * (threads != 1)}"
        f"{f' x {streams} streams' if streams > 1 else ''} ({FLAGS.model}, {FLAGS.precision})"
    )
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    print(f"transcribe_corpus: {shape} on {nodes} Ray node{'s' * (nodes != 1)}", file=sys.stderr)
    meter = progress.Progress(len(todo), sum(f.size for f in todo))
    sched = scheduler.Scheduler(ray, actors, book, output_dir, FLAGS.output_format, meter, seats=streams)
    try:
        sched.run(todo)
    except KeyboardInterrupt:
        print(meter.summary(skipped, shape), file=sys.stderr)
        print(
            f"transcribe_corpus: interrupted; rerun the same command to transcribe only the "
            f"{len(todo) - meter.done - len(meter.failed)} files not finished",
            file=sys.stderr,
        )
        return INTERRUPTED
    print(meter.summary(skipped, shape), file=sys.stderr)
    return SOME_FAILED if meter.failed else 0


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    _stop_on_sigterm()
    try:
        return run()
    except (
        UsageError,
        ValueError,
        OSError,
        inputs.InputError,
        journal.JournalError,
        cluster.ClusterError,
        scheduler.NoWorkersError,
        CheckpointError,
        EngineError,
    ) as e:  # OSError: e.g. an --output_dir that cannot be written
        print(f"transcribe_corpus: error: {e}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("transcribe_corpus: interrupted before the batch started", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    app.run(main)
